"""The Nova adapter: which request it sends and how it reads the answer.

The HTTP layer is a recorder standing in for ``requests`` (unit tests use
no network); the functional test ``tests/functional/minicinder/
test_nova_check.py`` runs the same adapter against the real miniapi.
"""

import pytest
import requests

from minicinder import exception
from minicinder.compute import nova
from ministack import context
from tests.support.minicinder_inprocess import PROJECT
from tests.support.minicinder_inprocess import make_conf

SERVER = "51c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b33"
VOLUME = "0a7e3f5c-6b1d-4d8e-9f20-1a2b3c4d5e6f"
ATTACHMENT = "9d0c4e8a-7b6f-4a5e-8d3c-2b1a0f9e8d7c"


class Response:
    def __init__(self, status_code, body=None, text=""):
        self.status_code = status_code
        self._body = body
        self.text = text

    def json(self):
        if self._body is None:
            raise ValueError("no JSON")
        return self._body


class Recorder:
    """Answers every GET with ``answer`` (or raises it)."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def get(self, url, headers=None, timeout=None):
        self.calls.append((url, headers, timeout))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _api(answer, **conf_overrides):
    conf = make_conf(**conf_overrides)
    conf.set_override("endpoint", "http://nova.test:8774/v2.1/",
                      group="nova")
    conf.set_override("timeout", 2.5, group="nova")
    recorder = Recorder(answer)
    return nova.API(conf, session=recorder), recorder


def _ctx(**kw):
    return context.RequestContext(user_id="demo", project_id=PROJECT,
                                  roles=["member"], **kw)


def test_asks_as_admin_at_2_89_in_noauth():
    api, rec = _api(Response(200, {"volumeAttachment": {
        "attachment_id": ATTACHMENT, "volumeId": VOLUME}}))
    ctx = _ctx()
    assert api.get_server_volume_attachment_id(ctx, SERVER, VOLUME) == \
        ATTACHMENT
    [(url, headers, timeout)] = rec.calls
    assert url == ("http://nova.test:8774/v2.1/servers/%s/"
                   "os-volume_attachments/%s" % (SERVER, VOLUME))
    assert headers["OpenStack-API-Version"] == "compute 2.89"
    assert headers["X-Auth-Token"] == "admin:%s" % PROJECT
    assert headers["X-OpenStack-Request-ID"] == ctx.request_id
    assert timeout == 2.5


def test_forwards_the_callers_token_with_keystone():
    api, rec = _api(Response(404), auth_strategy="keystone")
    ctx = _ctx(auth_token="gAAAA-user-token")
    assert api.get_server_volume_attachment_id(ctx, SERVER, VOLUME) is None
    assert rec.calls[0][1]["X-Auth-Token"] == "gAAAA-user-token"


def test_ids_are_quoted_into_the_path():
    api, rec = _api(Response(404))
    api.get_server_volume_attachment_id(_ctx(), "../x?y", VOLUME)
    assert "/servers/..%2Fx%3Fy/os-volume_attachments/" in rec.calls[0][0]


@pytest.mark.parametrize("answer", [
    requests.ConnectionError("refused"),
    requests.Timeout("slow"),
    Response(500, text="boom"),
    Response(401, text="no"),
    Response(406, text="2.89 unknown"),
    Response(200, {"volumeAttachment": {"id": VOLUME}}),
    Response(200, None, text="<html>"),
], ids=["refused", "timeout", "500", "401", "406", "no-attachment_id",
        "not-json"])
def test_anything_but_200_or_404_is_unavailable(answer):
    api, _ = _api(answer)
    with pytest.raises(exception.ComputeAPIUnavailable) as err:
        api.get_server_volume_attachment_id(_ctx(), SERVER, VOLUME)
    assert err.value.code == 503
    assert "/os-volume_attachments/" in err.value.format_message()


def test_unconfigured_is_unavailable():
    conf = make_conf()
    api = nova.API(conf, session=Recorder(Response(404)))
    assert not api.configured
    with pytest.raises(exception.ComputeAPIUnavailable):
        api.get_server_volume_attachment_id(_ctx(), SERVER, VOLUME)


class PostRecorder(Recorder):
    def post(self, url, json=None, headers=None, timeout=None):
        self.calls.append((url, json, headers, timeout))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _events_api(answer):
    api, _ = _api(None)
    recorder = PostRecorder(answer)
    api.session = recorder
    return api, recorder


def test_extend_volume_sends_upstreams_event_as_a_service():
    events = [{"name": "volume-extended", "server_uuid": SERVER,
               "tag": VOLUME, "status": "completed", "code": 200}]
    api, recorder = _events_api(Response(200, {"events": events}))
    assert api.extend_volume(_ctx(request_id="req-x"), [SERVER],
                             VOLUME) == {SERVER: 200}
    [(url, body, headers, timeout)] = recorder.calls
    assert url == "http://nova.test:8774/v2.1/os-server-external-events"
    assert body == {"events": [{"name": "volume-extended",
                                "server_uuid": SERVER, "tag": VOLUME}]}
    assert headers["OpenStack-API-Version"] == "compute 2.51"
    # noauth: the service role, not the user's token
    assert "service" in headers["X-Roles"] and headers["X-Service-Token"]
    assert headers["X-OpenStack-Request-ID"] == "req-x"


def test_extend_volume_reads_207_and_404():
    events = [{"name": "volume-extended", "server_uuid": SERVER,
               "tag": VOLUME, "status": "failed", "code": 422}]
    api, _ = _events_api(Response(207, {"events": events}))
    assert api.extend_volume(_ctx(), [SERVER], VOLUME) == {SERVER: 422}
    api, _ = _events_api(Response(404, text="No instances found"))
    assert api.extend_volume(_ctx(), [SERVER], VOLUME) == {SERVER: 404}


@pytest.mark.parametrize("answer", [
    Response(403, text="forbidden"), Response(200, {"no": "events"}),
    requests.ConnectionError("refused")])
def test_extend_volume_failures_are_unavailable(answer):
    api, _ = _events_api(answer)
    with pytest.raises(exception.ComputeAPIUnavailable):
        api.extend_volume(_ctx(), [SERVER], VOLUME)


def test_reimage_volume_sends_volume_reimaged_at_2_93():
    events = [{"name": "volume-reimaged", "server_uuid": SERVER,
               "tag": VOLUME, "status": "completed", "code": 200}]
    api, recorder = _events_api(Response(200, {"events": events}))
    assert api.reimage_volume(_ctx(), [SERVER], VOLUME) == {SERVER: 200}
    [(_url, body, headers, _timeout)] = recorder.calls
    assert body == {"events": [{"name": "volume-reimaged",
                                "server_uuid": SERVER, "tag": VOLUME}]}
    assert headers["OpenStack-API-Version"] == "compute 2.93"


class _Nova:
    """An adapter that records what it is asked to send, or fails."""

    def __init__(self, configured=True, error=None):
        self.configured = configured
        self.error = error
        self.sent = []

    def _send(self, name):
        def send(ctxt, server_ids, volume_id):
            if self.error:
                raise self.error
            self.sent.append((name, tuple(server_ids), volume_id))
        return send

    @property
    def extend_volume(self):
        return self._send("volume-extended")

    @property
    def reimage_volume(self):
        return self._send("volume-reimaged")


@pytest.mark.parametrize("event", ["volume-extended", "volume-reimaged"])
def test_tell_sends_the_event_and_logs_what_it_cannot(event, caplog):
    compute = _Nova()
    nova.tell(compute, None, event, [SERVER], VOLUME)
    assert compute.sent == [(event, (SERVER,), VOLUME)]
    nova.tell(compute, None, event, [], VOLUME)
    assert len(compute.sent) == 1
    nova.tell(None, None, event, [SERVER], VOLUME)
    nova.tell(_Nova(configured=False), None, event, [SERVER], VOLUME)
    assert caplog.text.count("there is no Nova to tell") == 2
    failing = _Nova(error=exception.ComputeAPIUnavailable(reason="down"))
    nova.tell(failing, None, event, [SERVER], VOLUME)
    assert "Could not tell Nova %s of volume %s" % (event, VOLUME) in \
        caplog.text
