"""minicompute.volume.cinder: errors are translated once, retries bounded."""

import pytest
from cinderclient import exceptions as cinder_exception
from oslo_config import cfg

from minicompute import exception
from minicompute.volume import cinder
from ministack import context
from ministack import exception as ms_exception


class FakeManager:
    def __init__(self, errors):
        self.errors = list(errors)
        self.calls = 0

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls += 1
            if self.errors:
                raise self.errors.pop(0)
            return {"id": "a1", "connection_info": {"x": 1}}
        return call


class FakeClient:
    def __init__(self, errors=()):
        self.attachments = FakeManager(errors)
        self.volumes = FakeManager(errors)


@pytest.fixture
def api(monkeypatch):
    conf = cfg.ConfigOpts()
    api = cinder.API(conf, sleep=lambda s: None)
    conf([], project="t")
    return api


@pytest.fixture
def ctxt():
    return context.RequestContext(user_id="u", project_id="p")


def _with(monkeypatch, api, errors):
    client = FakeClient(errors)
    monkeypatch.setattr(api, "_client", lambda ctxt: client)
    return client


def test_volume_404_is_volume_not_found(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [cinder_exception.NotFound(404, "gone")])
    with pytest.raises(exception.VolumeNotFound) as err:
        api.get(ctxt, "v1")
    assert err.value.code == 404


def test_attachment_404_is_attachment_not_found(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [cinder_exception.NotFound(404, "gone")])
    with pytest.raises(exception.VolumeAttachmentNotFound):
        api.attachment_delete(ctxt, "a1")


def test_400_is_invalid_input(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [cinder_exception.BadRequest(400, "in-use")])
    with pytest.raises(ms_exception.InvalidInput):
        api.attachment_create(ctxt, "v1", "i1")


def test_update_retries_5xx(api, ctxt, monkeypatch):
    client = _with(monkeypatch, api, [
        cinder_exception.ClientException(500, "boom"),
        cinder_exception.ClientException(504, "slow")])
    result = api.attachment_update(ctxt, "a1", {"host": "h"}, "/dev/vdb")
    assert result["connection_info"]["data"] == {"x": 1}
    assert client.attachments.calls == 3


def test_retries_are_bounded(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [cinder_exception.ClientException(500, "x")]
          * 10)
    with pytest.raises(exception.CinderConnectionFailed):
        api.attachment_delete(ctxt, "a1")


def test_flat_connection_info_is_nested():
    """Cinder's flat attachment connection_info becomes {type, data}."""
    out = cinder._attachment_dict({"id": "a1", "connection_info": {
        "driver_volume_type": "iscsi", "target_iqn": "iqn.x", "target_lun": 1,
        "attachment_id": "a1", "attach_mode": "rw"}})
    assert out["connection_info"] == {
        "driver_volume_type": "iscsi",
        "data": {"target_iqn": "iqn.x", "target_lun": 1}}


def test_volume_attachments_keyed_by_server():
    vol = cinder._untranslate_volume({"id": "v", "status": "in-use",
                                      "attachments": [{
                                          "server_id": "s1",
                                          "attachment_id": "a1",
                                          "device": "/dev/vdb"}]})
    assert vol["attachments"]["s1"]["attachment_id"] == "a1"
    assert vol["attach_status"] == "attached"


def test_calls_reuse_one_kept_alive_connection(ctxt):
    """Cinder calls share the process's HTTP session: three calls from
    two threads open one TCP connection (a new session per call opened
    one each and left its socket to the garbage collector)."""
    import http.server
    import json
    import threading

    connections = []

    class Cinder(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"     # keep-alive

        def setup(self):
            connections.append(self.client_address)
            super().setup()

        def do_GET(self):
            body = json.dumps({"volume": {
                "id": "v1", "status": "available", "attachments": []}})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Cinder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        conf = cfg.ConfigOpts()
        api = cinder.API(conf, sleep=lambda s: None)
        conf([], project="t")
        conf.set_override("auth_strategy", "noauth", group="cinder")
        conf.set_override(
            "endpoint_template", "http://127.0.0.1:%d/v3/%%(project_id)s"
            % server.server_address[1], group="cinder")
        assert api.get(ctxt, "v1")["status"] == "available"
        worker = threading.Thread(target=api.get, args=(ctxt, "v1"))
        worker.start()
        worker.join(10)
        assert api.get(ctxt, "v1")["id"] == "v1"
        assert len(connections) == 1
    finally:
        server.shutdown()
        server.server_close()
