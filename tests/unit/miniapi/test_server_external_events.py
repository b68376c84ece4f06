"""``POST /os-server-external-events``: who may send, what is answered,
where it goes (upstream nova's server_external_events)."""

import time
import uuid

import pytest

from minicompute.db import api as db_api
from ministack import context

VOLUME = "0a7e3f5c-6b1d-4d8e-9f20-1a2b3c4d5e6f"
URL = "/v2.1/os-server-external-events"


def _event(server, name="volume-extended", tag=VOLUME):
    event = {"name": name, "server_uuid": server}
    if tag is not None:
        event["tag"] = tag
    return event


def _events_cast(compute):
    return [kw for name, kw in compute.casts
            if name == "external_instance_event"]


def _post(api, events, version="2.51", token="admin:p1"):
    return api.post(URL, {"events": events}, version=version, token=token)


def test_volume_extended_is_cast_to_the_host(api, make_server, compute):
    server = make_server()
    compute.reset()
    status, body, _ = _post(api, [_event(server)])
    assert status == 200, body
    assert body == {"events": [dict(_event(server), status="completed",
                                    code=200)]}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not _events_cast(compute):
        time.sleep(0.01)
    [kwargs] = _events_cast(compute)
    assert kwargs["instances"] == [server]
    assert kwargs["events"] == [dict(_event(server), status="completed")]
    actions = db_api.action_get_all(context.get_admin_context(), server)
    assert "extend_volume" in [a.action for a in actions]


def test_some_events_accepted_is_207(api, make_server, compute):
    server = make_server()
    unknown = str(uuid.uuid4())
    status, body, _ = _post(api, [_event(server), _event(unknown),
                                  _event(server, tag=None)])
    assert status == 207, body
    assert [(e["code"], e["status"]) for e in body["events"]] == [
        (200, "completed"), (404, "failed"), (400, "failed")]


def test_no_event_accepted_is_404(api):
    status, body, _ = _post(api, [_event(str(uuid.uuid4()))])
    assert status == 404
    assert body["itemNotFound"]["message"] == \
        "No instances found for any event"


def test_volume_extended_needs_2_51(api, make_server):
    server = make_server()
    status, body, _ = _post(api, [_event(server)], version="2.50")
    assert status == 400, body


@pytest.mark.parametrize("events", [
    [], [{"name": "volume-extended"}],
    [{"name": "bogus", "server_uuid": str(uuid.uuid4())}],
    [dict(_event(str(uuid.uuid4())), extra=1)]])
def test_bad_bodies_are_400(api, events):
    assert _post(api, events)[0] == 400


def test_a_user_may_not_send_events(api, make_server, compute):
    """Security: only a service (or an admin) tells nova about events; a
    project member forging volume-extended gets nova's 403."""
    server = make_server(token="demo:p1")
    compute.reset()
    status, body, _ = _post(api, [_event(server)], token="demo:p1")
    assert status == 403, body
    assert "os-server-external-events:create" in \
        body["forbidden"]["message"]
    assert _events_cast(compute) == []


def test_a_service_may_send_events(api, make_server):
    server = make_server()
    status, body, _ = api.post(URL, {"events": [_event(server)]},
                               version="2.51", token="cinder:service",
                               headers={"X-Roles": "service"})
    assert status == 200, body
