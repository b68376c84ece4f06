"""GET /limits (nova's limits.py): ``openstack limits show --absolute``.

ministack enforces one quota, nova's default ``metadata_items`` (128
key/value pairs of server metadata: ``maxServerMeta`` and
``maxImageMeta``, checked at server create, 403 beyond); every other
maximum is -1 (what upstream shows for an unlimited quota). The usage
of the project's live servers is counted from the database. Keys follow
the microversion as upstream: 2.36 drops the network ones (floating
IPs, security groups), 2.39 ``maxImageMeta``, 2.57 the personality
ones. ``rate`` is always empty. An admin may ask for another project
with ``?tenant_id=`` (403 for anyone else, as nova's
``os_compute_api:limits:other_project``).
"""

import flask

from miniapi.api import common
from miniapi.api import microversion
from miniapi.compute import checks
from minicompute.db import api as db_api
from ministack import context as ms_context

bp = flask.Blueprint("limits", __name__, url_prefix="/v2.1")

UNLIMITED = -1

# key -> first version without it
_DROPPED = {
    "maxSecurityGroupRules": "2.36", "maxSecurityGroups": "2.36",
    "maxTotalFloatingIps": "2.36", "totalFloatingIpsUsed": "2.36",
    "totalSecurityGroupsUsed": "2.36",
    "maxImageMeta": "2.39",
    "maxPersonality": "2.57", "maxPersonalitySize": "2.57",
}


def absolute(instances, version):
    """The ``absolute`` dict for ``instances`` (the project's live ones)."""
    body = {key: UNLIMITED for key in (
        "maxServerMeta", "maxImageMeta", "maxPersonality",
        "maxPersonalitySize", "maxSecurityGroupRules", "maxSecurityGroups",
        "maxTotalKeypairs", "maxServerGroups", "maxServerGroupMembers",
        "maxTotalCores", "maxTotalInstances", "maxTotalRAMSize",
        "maxTotalFloatingIps")}
    body.update({
        "maxServerMeta": checks.METADATA_ITEMS,
        "maxImageMeta": checks.METADATA_ITEMS,
        "totalCoresUsed": sum(i.vcpus or 0 for i in instances),
        "totalInstancesUsed": len(instances),
        "totalRAMUsed": sum(i.memory_mb or 0 for i in instances),
        "totalFloatingIpsUsed": 0,
        "totalSecurityGroupsUsed": 0,
        "totalServerGroupsUsed": 0,
    })
    for key, gone in _DROPPED.items():
        if version >= gone:
            body.pop(key)
    return body


@bp.get("/limits")
def index():
    ctxt = common.context()
    project_id = ctxt.project_id
    if "tenant_id" in flask.request.args:
        common.require_admin(ctxt, "os_compute_api:limits:other_project")
        project_id = flask.request.args["tenant_id"]
    instances = db_api.instance_get_all(ms_context.get_admin_context(),
                                        {"project_id": project_id})
    return flask.jsonify({"limits": {
        "rate": [],
        "absolute": absolute(instances, microversion.current())}})
