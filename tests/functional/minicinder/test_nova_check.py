"""OSSA-2023-003 against the real compute API: minicinder asks miniapi.

Real daemons: miniapi (its console script, own SQLite nova DB, the real
broker) and minicinder (``[nova] endpoint`` pointing at that miniapi, the
``fake`` volume driver: the storage backend is not what these tests are
about, the detach rule is). No compute agent runs, so the BDM that Nova's
attach would have written is inserted into miniapi's database by the test
(the one stand-in); Nova's answer, over HTTP at microversion 2.89, is the
real one.

* A volume a user attached with legacy ``os-attach`` is unknown to Nova
  (404), so the user may ``os-detach`` it (tempest's VolumesActionsTest).
* An attachment Nova's BDM names is refused to users and admins (409) and
  allowed to Nova (service token).
* With Nova unreachable the user's detach is refused (fail closed).
"""

import uuid

import pytest
import requests
import sqlalchemy as sa

from tests.support import daemons
from tests.support import miniapi_daemon
from tests.support import waiting

PROJECT = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
NOVA = {"X-Service-Token": "nova"}
CONNECTOR = {"initiator": "iqn.1993-08.org.debian:01:novacheck",
             "ip": "127.0.0.1", "host": "ftest-host", "platform": "x86_64",
             "os_type": "linux", "multipath": False}

pytestmark = miniapi_daemon.needs_broker


def _start_cinder(tmp, nova_endpoint):
    return daemons.start_daemon(
        "minicinder",
        {"DEFAULT": {"state_path": str(tmp), "volume_driver": "fake",
                     "osapi_volume_listen": "127.0.0.1",
                     "host": "ftest-novacheck-%s" % uuid.uuid4().hex[:6]},
         "database": {"connection": "sqlite:///%s/cinder.sqlite" % tmp},
         "nova": {"endpoint": nova_endpoint, "timeout": 3}},
        tmp, ready=daemons.http_ready("/"),
        port_option=("DEFAULT", "osapi_volume_listen_port"))


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("novacheck")
    api = miniapi_daemon.start_api(tmp / "api")
    try:
        cinder = _start_cinder(tmp / "cinder", api.url + "/v2.1")
    except Exception:
        api.stop()
        raise
    engine = sa.create_engine("sqlite:///%s/api/nova.sqlite" % tmp)
    yield {"api": api, "cinder": cinder, "engine": engine}
    engine.dispose()
    cinder.stop()
    api.stop()


class Cinder:
    """requests against minicinder as ``user`` of PROJECT."""

    def __init__(self, url, user="demo", headers=None):
        self.url = url
        self.user = user
        self.headers = headers or {}

    def __call__(self, method, path, body=None):
        headers = {"X-Auth-Token": "%s:%s" % (self.user, PROJECT),
                   "OpenStack-API-Version": "volume 3.44"}
        headers.update(self.headers)
        return requests.request(method, "%s/v3/%s%s" % (self.url, PROJECT,
                                                         path),
                                json=body, headers=headers, timeout=30)

    def volume(self, volume_id):
        return self("GET", "/volumes/%s" % volume_id).json()["volume"]

    def available_volume(self):
        resp = self("POST", "/volumes", {"volume": {"size": 1}})
        assert resp.status_code == 202, resp.text
        volume_id = resp.json()["volume"]["id"]
        waiting.wait_for("volume %s to be available" % volume_id,
                         lambda: self.volume(volume_id),
                         lambda volume: volume["status"] == "available",
                         timeout=30, interval=0.1)
        return volume_id


def _server(stack):
    """A server in PROJECT, created through miniapi by the user (no host
    will build it; it exists, which is all Nova's answer needs)."""
    raw = miniapi_daemon.Raw(stack["api"].url, token="demo:%s" % PROJECT)
    resp = raw("POST", "/v2.1/servers", {"server": {
        "name": "novacheck", "imageRef": miniapi_daemon.IMAGE_ID,
        "flavorRef": "42", "networks": "none"}})
    assert resp.status_code == 202, resp.text
    return resp.json()["server"]["id"]


def _nova_attached(stack, server_id, volume_id, attachment_id):
    """The BDM nova-api writes when it attaches (no compute agent here)."""
    with stack["engine"].begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO block_device_mapping (instance_uuid, uuid, "
            "source_type, destination_type, device_name, volume_id, "
            "attachment_id, deleted, delete_on_termination) VALUES "
            "(:i, :u, 'volume', 'volume', '/dev/vdb', :v, :a, 0, 0)"),
            {"i": server_id, "u": str(uuid.uuid4()), "v": volume_id,
             "a": attachment_id})


def test_user_detaches_what_they_attached_with_os_attach(stack):
    cinder = Cinder(stack["cinder"].url)
    server_id = _server(stack)
    volume_id = cinder.available_volume()
    act = "/volumes/%s/action" % volume_id
    assert cinder("POST", act, {"os-reserve": {}}).status_code == 202
    assert cinder("POST", act, {"os-initialize_connection": {
        "connector": CONNECTOR}}).status_code == 200
    assert cinder("POST", act, {"os-attach": {
        "instance_uuid": server_id, "mountpoint": "/dev/vdc",
        "mode": "rw"}}).status_code == 202
    assert cinder.volume(volume_id)["status"] == "in-use"
    # Nova itself says it does not have the volume on that server.
    nova_view = miniapi_daemon.Raw(stack["api"].url, "admin:%s" % PROJECT)(
        "GET", "/v2.1/servers/%s/os-volume_attachments/%s"
        % (server_id, volume_id), version="2.89")
    assert nova_view.status_code == 404, nova_view.text

    assert cinder("POST", act, {"os-begin_detaching": {}}).status_code \
        == 202
    resp = cinder("POST", act, {"os-terminate_connection": {
        "connector": CONNECTOR}})
    assert resp.status_code == 202, resp.text
    resp = cinder("POST", act, {"os-detach": {}})
    assert resp.status_code == 202, resp.text
    assert cinder.volume(volume_id)["status"] == "available"
    assert cinder("DELETE", "/volumes/%s" % volume_id).status_code == 202


def test_attachment_nova_uses_is_409_for_users_not_for_nova(stack):
    cinder = Cinder(stack["cinder"].url)
    admin = Cinder(stack["cinder"].url, user="admin")
    nova = Cinder(stack["cinder"].url, headers=NOVA)
    server_id = _server(stack)
    volume_id = cinder.available_volume()
    resp = nova("POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id, "instance_uuid": server_id,
        "connector": CONNECTOR}})
    assert resp.status_code == 200, resp.text
    att = resp.json()["attachment"]["id"]
    assert nova("POST", "/attachments/%s/action" % att,
                {"os-complete": {}}).status_code == 204
    _nova_attached(stack, server_id, volume_id, att)

    message = ("Detach volume from instance %s using the Compute API"
               % server_id)
    act = "/volumes/%s/action" % volume_id
    for caller, method, path, body in (
            (cinder, "DELETE", "/attachments/%s" % att, None),
            (admin, "DELETE", "/attachments/%s" % att, None),
            (cinder, "POST", act, {"os-detach": {"attachment_id": att}}),
            (cinder, "POST", act, {"os-terminate_connection": {
                "connector": CONNECTOR}}),
            (admin, "POST", act, {"os-force_detach": {
                "attachment_id": att}})):
        resp = caller(method, path, body)
        assert resp.status_code == 409, (path, body, resp.text)
        assert resp.json()["conflictingRequest"]["message"] == message
    assert cinder.volume(volume_id)["status"] == "in-use"

    resp = nova("DELETE", "/attachments/%s" % att)
    assert resp.status_code == 200, resp.text
    assert cinder.volume(volume_id)["status"] == "available"
    assert cinder("DELETE", "/volumes/%s" % volume_id).status_code == 202


def test_nova_unreachable_fails_closed(tmp_path):
    """Nothing listens on the endpoint: the user's delete is refused and
    the attachment stays; Nova (service token) is not asked."""
    closed = "http://127.0.0.1:%d/v2.1" % daemons.free_port()
    daemon = _start_cinder(tmp_path / "cinder", closed)
    try:
        cinder = Cinder(daemon.url)
        nova = Cinder(daemon.url, headers=NOVA)
        volume_id = cinder.available_volume()
        server_id = str(uuid.uuid4())
        att = nova("POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": server_id,
            "connector": CONNECTOR}}).json()["attachment"]["id"]
        resp = cinder("DELETE", "/attachments/%s" % att)
        assert resp.status_code == 409, resp.text
        assert "Nova could not be asked" in \
            resp.json()["conflictingRequest"]["message"]
        assert cinder.volume(volume_id)["status"] == "attaching"
        assert "Refusing to remove attachment %s" % att in daemon.log()
        assert nova("DELETE", "/attachments/%s" % att).status_code == 200
    finally:
        daemon.stop()
