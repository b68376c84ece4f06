"""``/v3/{project_id}/os-services``: list, enable/disable, freeze/thaw
(admin only).

Shapes as upstream: every service has ``binary``, ``host``, ``zone``,
``status``, ``state``, ``updated_at`` and ``disabled_reason``; 3.7 adds
``cluster``; a ``cinder-volume`` also has ``replication_status``,
``active_backend_id`` and ``frozen``, and from 3.49 ``backend_state``.
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import validation
from minicinder.api import views
from minicinder.volume import service_record
from ministack import microversion

bp = flask.Blueprint("services", __name__, url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)

CLUSTER_SUPPORT = microversion.APIVersion("3.7")
BACKEND_STATE_REPORT = microversion.APIVersion("3.49")

_name = {"type": "string", "minLength": 1, "maxLength": 255}
_update_body = {
    "type": "object",
    "properties": {"host": _name, "binary": _name, "service": _name,
                   "disabled_reason": {"type": ["string", "null"]}},
    "required": ["host"], "additionalProperties": False}
_host_body = {
    "type": "object", "properties": {"host": _name},
    "required": ["host"], "additionalProperties": False}


def _view(service, up, version):
    view = {"binary": service.binary, "host": service.host,
            "zone": service.availability_zone,
            "status": "disabled" if service.disabled else "enabled",
            "state": "up" if up else "down",
            "updated_at": views.timestamp(service.updated_at
                                          or service.created_at),
            "disabled_reason": service.disabled_reason}
    if version.matches(CLUSTER_SUPPORT):
        view["cluster"] = service.cluster_name
    if service.binary == service_record.BINARY:
        view["replication_status"] = service.replication_status
        view["active_backend_id"] = service.active_backend_id
        view["frozen"] = bool(service.frozen)
        if version.matches(BACKEND_STATE_REPORT):
            view["backend_state"] = "up" if up else "down"
    return view


@bp.get("/os-services")
def index():
    params = validation.query(("host", "binary", "service"))
    services = common.services().service_api.get_all(
        common.context(), params.get("host"),
        params.get("binary") or params.get("service"))
    version = common.version()
    return flask.jsonify({"services": [_view(service, up, version)
                                       for service, up in services]})


@bp.put("/os-services/<action>")
def update(action):
    api = common.services().service_api
    ctx = common.context()
    if action in ("freeze", "thaw"):
        body = validation.body(_host_body, common.max_body())
        api.set_frozen(ctx, body["host"], action == "freeze")
        return "", 200
    if action not in ("enable", "disable", "disable-log-reason"):
        raise exception.InvalidInput(reason="Unknown action")
    body = validation.body(_update_body, common.max_body())
    binary = body.get("binary") or body.get("service")
    if not binary:
        raise exception.InvalidInput(
            reason="Missing required element 'binary' in request body.")
    disabled = action != "enable"
    result = {"disabled": disabled,
              "status": "disabled" if disabled else "enabled",
              "host": body["host"], "service": body.get("service", ""),
              "binary": body.get("binary", "")}
    reason = None
    if action == "disable-log-reason":
        reason = (body.get("disabled_reason") or "").strip()
        if not reason or len(reason) > 255:
            raise exception.InvalidInput(
                reason="Disabled reason contains invalid characters or is "
                       "too long")
        result["disabled_reason"] = reason
    elif action == "enable":
        result["disabled_reason"] = None
    api.set_disabled(ctx, body["host"], binary, disabled, reason,
                     set_reason=action != "disable")
    return flask.jsonify(result)
