"""miniapi with a real minicinder and a real RabbitMQ, no compute agent.

A compute service row that looks up (a fresh heartbeat written by the
test, for a host no agent serves) makes the API go all the way to the
``reserve_block_device_name`` CALL, which times out on the real broker:
the API must answer 409 and leave no BDM and no Cinder reservation. With
the service forced down (PUT os-services, 2.53) the API refuses before any
RPC. Volume lookups go through python-cinderclient to minicinder, whose
project isolation gives 404 for another project's volume.
"""

import time
import uuid

import pytest
import requests
import sqlalchemy as sa

from tests.support import daemons
from tests.support import miniapi_daemon
from tests.support import waiting

pytestmark = miniapi_daemon.needs_broker

BASE = "/v2.1/servers/%s/os-volume_attachments"
PROJECT = "p1"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("withcinder")
    cinder = daemons.start_daemon(
        "minicinder",
        {"DEFAULT": {"state_path": str(tmp), "volume_driver": "fake",
                     "osapi_volume_listen": "127.0.0.1",
                     "host": "ftest-cinder-%s" % uuid.uuid4().hex[:6]},
         "database": {"connection": "sqlite:///%s/cinder.sqlite" % tmp}},
        tmp / "cinder", ready=daemons.http_ready("/"),
        port_option=("DEFAULT", "osapi_volume_listen_port"))
    try:
        api = miniapi_daemon.start_api(tmp / "api", cinder_url=cinder.url)
    except Exception:
        cinder.stop()
        raise
    engine = sa.create_engine(
        "sqlite:///%s/api/nova.sqlite" % tmp)
    yield {"api": api, "cinder": cinder, "engine": engine}
    engine.dispose()
    api.stop()
    cinder.stop()


@pytest.fixture
def raw(stack):
    return miniapi_daemon.Raw(stack["api"].url, token="admin:%s" % PROJECT)


def _volume(stack, project=PROJECT):
    url = "%s/v3/%s/volumes" % (stack["cinder"].url, project)
    headers = {"X-Auth-Token": "admin:%s" % project,
               "OpenStack-API-Version": "volume 3.44"}
    resp = requests.post(url, json={"volume": {"size": 1}},
                         headers=headers, timeout=30)
    assert resp.status_code == 202, resp.text
    volume_id = resp.json()["volume"]["id"]
    waiting.wait_for("volume %s to be available" % volume_id,
                     lambda: _volume_status(stack, volume_id, project),
                     lambda status: status == "available", timeout=30,
                     interval=0.2)
    return volume_id


def _volume_status(stack, volume_id, project=PROJECT):
    resp = requests.get("%s/v3/%s/volumes/%s" % (stack["cinder"].url,
                                                 project, volume_id),
                        headers={"X-Auth-Token": "admin:%s" % project},
                        timeout=30)
    return resp.json()["volume"]["status"]


def _active_server(stack, raw, host):
    """A server the API created, made ACTIVE on ``host`` (a test stand-in
    for the build the absent compute agent would have done)."""
    resp = raw("POST", "/v2.1/servers", {"server": {
        "name": "ftest", "imageRef": miniapi_daemon.IMAGE_ID,
        "flavorRef": "42", "networks": "none"}})
    assert resp.status_code == 202, resp.text
    server_id = resp.json()["server"]["id"]
    with stack["engine"].begin() as conn:
        conn.execute(sa.text(
            "UPDATE instances SET vm_state='active', task_state=NULL, "
            "host=:h, node=:h, fault=NULL WHERE uuid=:u"),
            {"h": host, "u": server_id})
    return server_id


def _heartbeat(stack, host):
    with stack["engine"].begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO services (uuid, host, \"binary\", topic, "
            "report_count, last_seen_up, created_at, deleted, disabled, "
            "forced_down) VALUES (:id, :h, 'nova-compute', 'compute', 1, "
            ":now, :now, 0, 0, 0)"),
            {"id": str(uuid.uuid4()), "h": host,
             "now": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())})


def _bdm_count(stack, server_id):
    with stack["engine"].connect() as conn:
        return conn.execute(sa.text(
            "SELECT count(*) FROM block_device_mapping WHERE "
            "instance_uuid=:u AND deleted=0"), {"u": server_id}).scalar()


def test_unknown_and_foreign_volumes_404(stack, raw):
    server_id = _active_server(stack, raw, "nowhere")
    resp = raw("POST", BASE % server_id, {"volumeAttachment": {
        "volumeId": str(uuid.uuid4())}})
    assert resp.status_code == 404, resp.text
    assert "itemNotFound" in resp.json()
    foreign = _volume(stack, project="p2")
    resp = raw("POST", BASE % server_id, {"volumeAttachment": {
        "volumeId": foreign}}, token="u1:%s" % PROJECT)
    assert resp.status_code == 404, resp.text
    assert _volume_status(stack, foreign, "p2") == "available"


def test_compute_down_is_409_nothing_reserved(stack, raw):
    """Host never heartbeated: 409 before any RPC or Cinder change."""
    server_id = _active_server(stack, raw, "ghost-host")
    volume_id = _volume(stack)
    resp = raw("POST", BASE % server_id, {"volumeAttachment": {
        "volumeId": volume_id}})
    assert resp.status_code == 409, resp.text
    assert "unavailable" in resp.json()["conflictingRequest"]["message"]
    assert _volume_status(stack, volume_id) == "available"
    assert _bdm_count(stack, server_id) == 0


def test_rpc_timeout_is_409_nothing_reserved(stack, raw):
    """Service looks up but no agent answers: CALL times out -> 409."""
    host = "silent-%s" % uuid.uuid4().hex[:8]
    _heartbeat(stack, host)
    server_id = _active_server(stack, raw, host)
    volume_id = _volume(stack)
    started = time.monotonic()
    resp = raw("POST", BASE % server_id, {"volumeAttachment": {
        "volumeId": volume_id}})
    elapsed = time.monotonic() - started
    assert resp.status_code == 409, resp.text
    assert elapsed < 30
    assert _volume_status(stack, volume_id) == "available"
    assert _bdm_count(stack, server_id) == 0
    # forced down through the API: refused at once, before the RPC
    services = raw("GET", "/v2.1/os-services", version="2.53").json()
    svc = [s for s in services["services"] if s["host"] == host][0]
    assert svc["state"] == "up"
    resp = raw("PUT", "/v2.1/os-services/" + svc["id"],
               {"forced_down": True}, version="2.53")
    assert resp.status_code == 200 and resp.json()["service"]["state"] == \
        "down"
    started = time.monotonic()
    resp = raw("POST", BASE % server_id, {"volumeAttachment": {
        "volumeId": volume_id}})
    assert resp.status_code == 409
    assert time.monotonic() - started < 4


def test_detach_not_attached_404(stack, raw):
    server_id = _active_server(stack, raw, "nowhere")
    volume_id = _volume(stack)
    resp = raw("DELETE", (BASE % server_id) + "/" + volume_id)
    assert resp.status_code == 404
    assert "is not attached" in resp.json()["itemNotFound"]["message"]
    assert _volume_status(stack, volume_id) == "available"
