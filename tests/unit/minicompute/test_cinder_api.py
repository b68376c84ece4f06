"""minicompute.volume.cinder: errors are translated once, retries bounded.

cinderclient is faked at its managers (``attachments``, ``volumes``): each
call raises the next error given, as cinderclient and keystoneauth raise
them, then answers. The requests themselves are tested against a real
HTTP server in ``tests/unit/minicompute/cinder_client``.
"""

from cinderclient import exceptions as cinder_exception
from keystoneauth1 import exceptions as ks_exception
from oslo_config import cfg
import pytest

from minicompute import exception
from minicompute.volume import cinder
from ministack import context
from ministack import exception as ms_exception


def _http(code, message="no"):
    return cinder_exception.from_response(
        type("Response", (), {"status_code": code, "headers": {}})(),
        {"fault": {"message": message, "code": code}})


class _Resource(dict):
    def to_dict(self):
        return dict(self)


class FakeManager:
    """A cinderclient manager: every call raises the next error given,
    then answers with an attachment."""

    def __init__(self, errors):
        self.errors = errors
        self.calls = 0

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls += 1
            if self.errors:
                raise self.errors.pop(0)
            return _Resource(id="a1", connection_info={"x": 1})
        return call


class FakeClient:
    def __init__(self, errors=()):
        self.volumes = self.attachments = FakeManager(list(errors))

    @property
    def calls(self):
        return self.attachments.calls


@pytest.fixture
def api():
    conf = cfg.ConfigOpts()
    api = cinder.API(conf, sleep=lambda s: None)
    conf([], project="t")
    return api


@pytest.fixture
def ctxt():
    return context.RequestContext(user_id="u", project_id="p")


def _with(monkeypatch, api, errors):
    client = FakeClient(errors)
    monkeypatch.setattr(api, "_cinderclient", lambda ctxt: client)
    return client


def test_volume_404_is_volume_not_found(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [_http(404, "gone")])
    with pytest.raises(exception.VolumeNotFound) as err:
        api.get(ctxt, "v1")
    assert err.value.code == 404


def test_attachment_404_is_attachment_not_found(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [_http(404, "gone")])
    with pytest.raises(exception.VolumeAttachmentNotFound):
        api.attachment_delete(ctxt, "a1")


def test_404_without_a_resource_is_not_found(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [_http(404, "no such path")])
    with pytest.raises(ms_exception.NotFound, match="no such path"):
        api.attachment_list(ctxt)


def test_400_is_invalid_input(api, ctxt, monkeypatch):
    _with(monkeypatch, api, [_http(400, "in-use")])
    with pytest.raises(ms_exception.InvalidInput, match="in-use"):
        api.attachment_create(ctxt, "v1", "i1")


@pytest.mark.parametrize("code,raised", [
    (403, ms_exception.Forbidden), (413, ms_exception.Forbidden),
    (409, ms_exception.Conflict)])
def test_403_413_409_keep_their_meaning(api, ctxt, monkeypatch, code,
                                        raised):
    _with(monkeypatch, api, [_http(code, "quota")])
    with pytest.raises(raised, match="quota"):
        api.attachment_create(ctxt, "v1", "i1")


@pytest.mark.parametrize("code", [401, 500, 502])
def test_other_statuses_say_what_cinder_answered(api, ctxt, monkeypatch,
                                                 code):
    _with(monkeypatch, api, [_http(code, "boom")])
    with pytest.raises(exception.CinderConnectionFailed,
                       match="Cinder answered %d: boom" % code):
        api.get(ctxt, "v1")


@pytest.mark.parametrize("error", [
    ks_exception.ConnectFailure("refused"),
    ks_exception.ConnectTimeout("slow"),
    ks_exception.SSLError("bad certificate"),
    ks_exception.ConnectFailure("keystone refused")])
def test_no_answer_is_cinder_connection_failed(api, ctxt, monkeypatch,
                                               error):
    _with(monkeypatch, api, [error])
    with pytest.raises(exception.CinderConnectionFailed,
                       match=error.message):
        api.get(ctxt, "v1")


def test_keystone_refusing_the_service_account_is_translated(
        api, ctxt, monkeypatch):
    """The service token could not be had: no keystoneauth error leaves
    the module."""
    _with(monkeypatch, api, [ks_exception.Unauthorized("bad password")])
    with pytest.raises(exception.CinderConnectionFailed,
                       match="Cinder answered 401: bad password"):
        api.get(ctxt, "v1")


def test_update_retries_5xx(api, ctxt, monkeypatch):
    client = _with(monkeypatch, api, [_http(500, "boom"), _http(504, "slow")])
    result = api.attachment_update(ctxt, "a1", {"host": "h"}, "/dev/vdb")
    assert result["connection_info"]["data"] == {"x": 1}
    assert client.calls == 3


@pytest.mark.parametrize("error", [
    _http(502), _http(503), ks_exception.ConnectFailure("refused"),
    ks_exception.ConnectTimeout("slow"), ks_exception.RequestTimeout("ks")])
def test_retriable_errors_are_retried(api, ctxt, monkeypatch, error):
    client = _with(monkeypatch, api, [error])
    api.attachment_delete(ctxt, "a1")
    assert client.calls == 2


@pytest.mark.parametrize("error", [
    _http(400), _http(401), _http(404), _http(409),
    ks_exception.SSLError("bad certificate")])
def test_other_errors_are_not_retried(api, ctxt, monkeypatch, error):
    client = _with(monkeypatch, api, [error])
    with pytest.raises(ms_exception.MinistackException):
        api.attachment_update(ctxt, "a1", {"host": "h"})
    assert client.calls == 1


def test_retries_are_bounded(api, ctxt, monkeypatch):
    client = _with(monkeypatch, api, [_http(500, "x")] * 10)
    with pytest.raises(exception.CinderConnectionFailed):
        api.attachment_delete(ctxt, "a1")
    assert client.calls == api.conf.cinder.http_retries + 1


def test_calls_that_are_not_idempotent_are_not_retried(api, ctxt,
                                                      monkeypatch):
    client = _with(monkeypatch, api, [_http(500, "x")])
    with pytest.raises(exception.CinderConnectionFailed):
        api.attachment_complete(ctxt, "a1")
    assert client.calls == 1


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
