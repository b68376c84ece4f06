"""POST /flavors, PUT /flavors/{id} (2.55+), DELETE /flavors/{id}.

nova's flavor_manage.py: admin only. A flavor created without ``id``
gets a UUID; a numeric id is stored as its string. Name and id must be
unique (409). Delete answers 202 and removes the flavor for good
(servers keep the copy they were built with).
"""

import flask
from oslo_utils import strutils
from oslo_utils import uuidutils

from miniapi.api import common
from miniapi.api import flavors
from miniapi.api import microversion
from miniapi.api import validation
from miniapi.api.schemas import flavors as schemas
from minicompute.db import api as db_api

bp = flask.Blueprint("flavor_manage", __name__, url_prefix="/v2.1")

_POLICY = "os_compute_api:os-flavor-manage:%s"


def _flavorid(value):
    if value is None or value == "":
        return uuidutils.generate_uuid()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


@bp.post("/flavors")
@validation.body(schemas.create)
def create(body):
    """200 with the new flavor's detail view."""
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY % "create")
    vals = body["flavor"]
    is_public = strutils.bool_from_string(
        vals.get("os-flavor-access:is_public", True), strict=True)
    values = {
        "flavorid": _flavorid(vals.get("id")),
        "name": vals["name"],
        "memory_mb": int(vals["ram"]),
        "vcpus": int(vals["vcpus"]),
        "root_gb": int(vals["disk"]),
        "ephemeral_gb": int(vals.get("OS-FLV-EXT-DATA:ephemeral", 0)),
        "swap": int(vals.get("swap", 0)),
        "rxtx_factor": float(vals.get("rxtx_factor", 1.0)),
        "is_public": is_public,
        "disabled": False,
        "description": vals.get("description"),
    }
    flavor = db_api.flavor_create(ctxt, values)
    return flask.jsonify({"flavor": flavors.detail_view(
        ctxt, flavor, microversion.current())})


@bp.put("/flavors/<flavor_id>")
@microversion.min_version("2.55")
@validation.body(schemas.update)
def update(flavor_id, body):
    """2.55+: change the description; 200 with the detail view."""
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY % "update")
    flavor = db_api.flavor_update(
        ctxt, flavor_id, {"description": body["flavor"]["description"]})
    return flask.jsonify({"flavor": flavors.detail_view(
        ctxt, flavor, microversion.current())})


@bp.delete("/flavors/<flavor_id>")
def delete(flavor_id):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY % "delete")
    db_api.flavor_destroy(ctxt, flavor_id)
    return "", 202
