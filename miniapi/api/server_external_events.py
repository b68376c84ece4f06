"""``POST /v2.1/os-server-external-events``: other services tell Nova
something happened to a server (nova's ``server_external_events``).

Here only Cinder calls it, with ``volume-extended`` (2.51; the volume id
as the ``tag``, which that event requires) after growing an attached
volume. Each event is answered in the body with its ``code`` and
``status``, as upstream: 200 ``completed`` when accepted (its host will
handle it asynchronously), 404 for an unknown server, 400 for a
volume-extended without a tag, 422 for a server with no host. The
response is 200 when every event was accepted, 207 when some were, and a
404 fault when none was. Accepted events are cast to each server's host
(``minicompute.rpcapi.ComputeAPI.external_instance_event``), and a
``volume-extended`` records the ``extend_volume`` instance action the
host's ``compute_extend_volume`` event (and its fault) lands on.

Only a service or an admin may send events (nova's policy
``os_compute_api:os-server-external-events:create``: the ``service``
role; older defaults: admin); anyone else gets 403.
"""

import collections

import flask

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import validation
from minicompute import exception
from minicompute import instance_actions
from minicompute.db import api as db_api
from ministack import exception as ms_exception

bp = flask.Blueprint("server_external_events", __name__,
                     url_prefix="/v2.1")

POLICY = "os_compute_api:os-server-external-events:create"
EVENT_STATUSES = ["failed", "completed", "in-progress"]
_NAMES = ["network-changed", "network-vif-plugged", "network-vif-unplugged",
          "network-vif-deleted"]
# The names each microversion adds (nova's create_v251, _v276, _v282,
# _v293).
_NAMES_FROM = (("2.51", "volume-extended"), ("2.76", "power-update"),
               ("2.82", "accelerator-request-bound"),
               ("2.93", "volume-reimaged"))


def _schema(version):
    names = _NAMES + [name for first, name in _NAMES_FROM
                      if version >= microversion.APIVersion(first)]
    return {
        "type": "object",
        "properties": {"events": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "server_uuid": {"type": "string", "format": "uuid"},
                    "name": {"type": "string", "enum": names},
                    "status": {"type": "string", "enum": EVENT_STATUSES},
                    "tag": {"type": "string", "maxLength": 255},
                },
                "required": ["server_uuid", "name"],
                "additionalProperties": False}}},
        "required": ["events"], "additionalProperties": False}


def _require_service(ctxt):
    if not (ctxt.is_admin or getattr(ctxt, "is_service", False) or
            "service" in (ctxt.roles or [])):
        raise ms_exception.Forbidden(action=POLICY)


@bp.post("/os-server-external-events")
@validation.body(_schema)
def create(body):
    ctxt = common.context()
    _require_service(ctxt)
    admin = ctxt.elevated()
    instances, accepted, answers = {}, [], []
    result = 200
    for event in body["events"]:
        answer = dict(event)
        answers.append(answer)
        uuid = event["server_uuid"]
        try:
            instance = instances.get(uuid) or db_api.instance_get(admin,
                                                                  uuid)
        except exception.InstanceNotFound:
            answer.update(status="failed", code=404)
            result = 207
            continue
        if event["name"] == "volume-extended" and event.get("tag") is None:
            answer.update(status="failed", code=400)
            result = 207
        elif instance.host:
            instances[uuid] = instance
            accepted.append(dict(event, status=event.get("status",
                                                         "completed")))
            answer.update(status="completed", code=200)
        else:
            answer.update(status="failed", code=422)
            result = 207
    if not accepted:
        raise ms_exception.NotFound(
            message="No instances found for any event")
    _dispatch(ctxt, instances, accepted)
    return flask.jsonify({"events": answers}), result


def _dispatch(ctxt, instances, events):
    """The actions first (the host's event lands on them), then one cast
    per host with its instances' events."""
    by_host = collections.defaultdict(list)
    for event in events:
        instance = instances[event["server_uuid"]]
        if event["name"] == "volume-extended":
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.EXTEND_VOLUME)
        by_host[instance.host].append(event)
    rpcapi = flask.current_app.config["COMPUTE_API"].compute_rpcapi
    for host, host_events in by_host.items():
        uuids = {e["server_uuid"] for e in host_events}
        rpcapi.external_instance_event(
            ctxt, [instances[u] for u in sorted(uuids)], host_events,
            host=host)
