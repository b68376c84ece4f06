"""/v2.1/os-ministack-faults: the seed's failures, armed on demand.

A ministack extension, not an upstream API (docs/deviations.md): what
``ministack-fault`` drives. Admin only (policy names
``ministack:os-ministack-faults:<action>``; anyone else gets 403 and
nothing is armed). The faults themselves are held by the compute hosts
(``minicompute.faults``); this resource arms, lists and disarms them
through ``miniapi.compute.faults``.

* ``GET /os-ministack-faults``: ``{"faults": [armed...], "fired":
  [recent firings...], "hosts": [{"host", "state"}...]}``;
* ``POST /os-ministack-faults`` ``{"fault": {"name", "volume_id"?,
  "server_id"?, "for_seconds"?}}``: 200 ``{"fault": {...}}``, armed on
  the hosts it lists; one shot unless ``for_seconds``;
* ``DELETE /os-ministack-faults[/NAME]``: disarm all faults (or NAME's);
  200 ``{"disarmed": [...], "hosts": [...]}``.
"""

import flask

from miniapi.api import common
from miniapi.api import validation
from minicompute.faults import catalog
from ministack import exception as ms_exception
from ministack import json_text

bp = flask.Blueprint("ministack_faults", __name__, url_prefix="/v2.1")

_POLICY = "ministack:os-ministack-faults:%s"

_UUID = {"type": "string", "format": "uuid"}

ARM = {
    "type": "object",
    "properties": {
        "fault": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": list(catalog.NAMES)},
                "volume_id": _UUID,
                "server_id": _UUID,
                "for_seconds": {"type": "integer", "minimum": 1,
                                "maximum": catalog.MAX_SECONDS},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    },
    "required": ["fault"],
    "additionalProperties": False,
}


def _operations():
    return flask.current_app.config["FAULT_OPERATIONS"]


def _admin(action):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY % action)
    return ctxt


@bp.get("/os-ministack-faults")
def index():
    ctxt = _admin("list")
    return flask.jsonify(_operations().listing(ctxt))


@bp.post("/os-ministack-faults")
@validation.body(ARM)
def create(body):
    ctxt = _admin("create")
    fault = body["fault"]
    if fault.get("volume_id") and fault.get("server_id"):
        raise ms_exception.Invalid(
            message="Name a volume_id or a server_id, not both.")
    armed = _operations().arm(
        ctxt, fault["name"], volume_id=fault.get("volume_id"),
        server_id=fault.get("server_id"), seconds=fault.get("for_seconds"))
    return flask.jsonify({"fault": armed})


@bp.delete("/os-ministack-faults")
def delete_all():
    ctxt = _admin("delete")
    return flask.jsonify(_operations().disarm(ctxt))


@bp.delete("/os-ministack-faults/<name>")
def delete(name):
    ctxt = _admin("delete")
    if catalog.get(name) is None:
        raise ms_exception.NotFound(
            message="Fault %s could not be found (one of %s)."
                    % (json_text.shown(name), ", ".join(catalog.NAMES)))
    return flask.jsonify(_operations().disarm(ctxt, name=name))
