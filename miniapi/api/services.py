"""/os-services: the compute services and their heartbeat state.

``state`` is up when the service's last heartbeat is younger than
``[api] service_down_time``. From 2.53 a service is addressed by UUID and
``PUT /os-services/{uuid}`` enables, disables or forces it down (forced
down services are treated as down at once: attach/detach/stop/start on
their servers answer 409) and ``DELETE`` removes a retired host's service
and compute nodes (refused while it hosts instances). Admin only, as
upstream's default policy.
"""

import flask
from oslo_utils import uuidutils

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import validation
from miniapi.api.views import services as views
from minicompute.db import api as db_api
from ministack import exception as ms_exception

bp = flask.Blueprint("services", __name__, url_prefix="/v2.1")

_UPDATE_V253 = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["enabled", "disabled"]},
        "disabled_reason": {"type": ["string", "null"], "minLength": 1,
                            "maxLength": 255},
        "forced_down": {"type": "boolean"},
    },
    "additionalProperties": False,
}


def _require_admin(ctxt, action):
    if not ctxt.is_admin:
        raise ms_exception.Forbidden(action=action)


def _down_time():
    return flask.current_app.config["COMPUTE_API"].down_time


@bp.get("/os-services")
def index():
    ctxt = common.context()
    _require_admin(ctxt, "os_compute_api:os-services:list")
    version = microversion.current()
    rows = db_api.service_get_all(ctxt)
    args = flask.request.args
    if args.get("binary"):
        rows = [r for r in rows if r.binary == args["binary"]]
    if args.get("host"):
        rows = [r for r in rows if r.host == args["host"]]
    return flask.jsonify({"services": [
        views.service(r, db_api.service_is_up(r, _down_time()), version)
        for r in rows]})


@bp.put("/os-services/<service_id>")
@microversion.min_version("2.53")
@validation.body(_UPDATE_V253)
def update(service_id, body):
    """PUT (2.53+): status / disabled_reason / forced_down."""
    ctxt = common.context()
    _require_admin(ctxt, "os_compute_api:os-services:update")
    if not uuidutils.is_uuid_like(service_id):
        raise ms_exception.NotFound(
            message="Service %s could not be found." % service_id)
    if not body:
        raise ms_exception.Invalid(
            message="No updates were requested. Fields 'status' or "
                    "'forced_down' should be specified.")
    if "disabled_reason" in body and body.get("status") != "disabled":
        raise ms_exception.Invalid(
            message="Specifying 'disabled_reason' with status 'enabled' "
                    "is invalid.")
    values = {}
    if "status" in body:
        values["disabled"] = body["status"] == "disabled"
        values["disabled_reason"] = body.get("disabled_reason")
    if "forced_down" in body:
        values["forced_down"] = body["forced_down"]
    row = db_api.service_update(ctxt, service_id, values)
    return flask.jsonify({"service": views.service(
        row, db_api.service_is_up(row, _down_time()),
        microversion.current())})


@bp.delete("/os-services/<service_id>")
def delete(service_id):
    """DELETE: the service (by UUID from 2.53, by id before), 204."""
    ctxt = common.context()
    _require_admin(ctxt, "os_compute_api:os-services:delete")
    if microversion.at_least("2.53"):
        if not uuidutils.is_uuid_like(service_id):
            raise ms_exception.Invalid(
                message="Invalid uuid %s" % service_id)
        service_uuid = service_id
    else:
        found = [r for r in db_api.service_get_all(ctxt)
                 if str(r.id) == service_id]
        if not found:
            raise ms_exception.NotFound(
                message="Service %s could not be found." % service_id)
        service_uuid = found[0].uuid
    db_api.service_destroy(ctxt, service_uuid)
    return "", 204
