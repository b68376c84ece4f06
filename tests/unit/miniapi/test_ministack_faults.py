"""/v2.1/os-ministack-faults: admin only, checked, armed on the right
compute hosts, rolled back when a host does not answer, and the fault
fires on the next real attach (miniapi/api/ministack_faults.py,
miniapi/compute/faults.py).

The real miniapi app runs in-process next to a real ComputeService (the
fake driver and the fake Cinder) on one fake:/ transport, so the API's
CALLs to the host, the host's registry and the attach flow all run.
"""

import time

from oslo_config import cfg
import oslo_messaging as messaging
import pytest

from miniapi import app as app_mod
from miniapi import conf as api_conf
from miniapi.compute import images as images_adapter
from minicompute import conf as compute_conf
from minicompute import rpcapi
from minicompute import service
from minicompute.db import api as db_api
from minicompute.db import models
from minicompute.faults import catalog
from minicompute.virt import fake
from ministack import config as ms_config
from ministack import context
from ministack import db
from ministack import rpc
from tests.support import fake_cinder
from tests.support import waiting
from tests.unit.miniapi.inprocess import APIClient
from tests.unit.miniapi.inprocess import FakeImages

URL = "/v2.1/os-ministack-faults"
ADMIN, DEMO = "admin:p1", "demo:p1"
MISSING = "99999999-9999-9999-9999-999999999999"


@pytest.fixture
def engine(tmp_path):
    # A file: the host's RPC threads and the test write at once.
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    models.Base.metadata.create_all(engine)
    db_api.configure(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def lab(engine, monkeypatch):
    """``(api client, compute service, fake driver, fake cinder)``."""
    cconf = cfg.ConfigOpts()
    ms_config.register_common_opts(cconf)
    compute_conf.register_opts(cconf)
    cconf([], project="minicompute")
    cconf.set_override("host", "h1")
    transport = messaging.get_rpc_transport(
        cconf, url="fake:/", allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    driver, volumes = fake.FakeDriver(), fake_cinder.FakeCinder()
    svc = service.ComputeService(cconf, transport, driver, volumes)
    svc.start()
    aconf = cfg.ConfigOpts()
    ms_config.register_common_opts(aconf)
    api_conf.register_opts(aconf)
    aconf([], project="miniapi")
    aconf.set_override("rpc_call_timeout", 2)
    monkeypatch.setattr(images_adapter, "_images_module",
                        lambda: FakeImages)
    app = app_mod.create_app(aconf, transport=transport, engine=engine,
                             volume_api=volumes)
    yield APIClient(app.test_client()), svc, driver, volumes
    svc.stop()
    transport.cleanup()


def _server(driver, host="h1"):
    ctxt = context.RequestContext(user_id="demo", project_id="p1")
    inst = db_api.instance_create(ctxt, {
        "display_name": "vm", "host": host, "vm_state": "active",
        "power_state": 1, "root_device_name": "/dev/vda"})
    driver.spawn(ctxt, db_api.to_dict(inst), {}, {})
    return inst.uuid


def _arm(api, token=ADMIN, **fault):
    return api.post(URL, {"fault": fault}, token=token)


def _fault(response, code, name, words=""):
    status, body, _ = response
    assert status == code, body
    assert body[name]["code"] == code, body
    assert words in body[name]["message"], body


def test_admin_arms_a_fault_and_the_next_attach_fails_on_the_host(lab):
    api, svc, driver, volumes = lab
    server = _server(driver)
    vid = volumes.add_volume()
    status, body, _ = _arm(api, name=catalog.DRIVER_ATTACH, volume_id=vid)
    assert status == 200, body
    fault = body["fault"]
    assert fault["name"] == "driver-attach" and fault["hosts"] == ["h1"]
    assert fault["one_shot"] is True and fault["volume_id"] == vid
    assert fault["armed_by"]["user_id"] == "admin"
    status, body, _ = api.get(URL)
    assert [f["id"] for f in body["faults"]] == [fault["id"]]
    assert body["faults"][0]["hosts"] == ["h1"]
    assert body["hosts"] == [{"host": "h1", "state": "ok"}]
    status, body, _ = api.post("/v2.1/servers/%s/os-volume_attachments"
                               % server, {"volumeAttachment": {
                                   "volumeId": vid}}, token=DEMO)
    assert status == 200, body
    waiting.wait_for("the fault fired", lambda: api.get(URL)[1]["fired"],
                     timeout=10)
    waiting.wait_for("volume available again",
                     lambda: volumes.status(vid) == "available", timeout=10)
    status, body, _ = api.get(URL)
    assert body["faults"] == []
    [fired] = body["fired"]
    assert fired["id"] == fault["id"] and fired["host"] == "h1"
    assert fired["volume_id"] == vid and fired["server_id"] == server


@pytest.mark.parametrize("method, path, body", [
    ("GET", URL, None), ("POST", URL, {"fault": {"name": "driver-attach"}}),
    ("DELETE", URL, None), ("DELETE", URL + "/driver-attach", None)])
def test_a_non_admin_is_refused_and_nothing_is_armed(lab, method, path,
                                                     body):
    api = lab[0]
    status, answer, _ = api.request(method, path, body, token=DEMO)
    assert status == 403, answer
    assert "ministack:os-ministack-faults:" in answer["forbidden"][
        "message"]
    assert api.get(URL)[1]["faults"] == []


@pytest.mark.parametrize("fault, words", [
    ({"name": "no-such-fault"}, "name"),
    ({"name": "driver-attach", "volume_id": "not-a-uuid"}, "volume_id"),
    ({"name": "driver-attach", "for_seconds": 0}, "for_seconds"),
    ({"name": "driver-attach", "for_seconds": 86401}, "for_seconds"),
    ({"name": "driver-attach", "for_seconds": "10"}, "for_seconds"),
    ({"name": "driver-attach", "colour": "red"}, "colour"),
    ({"volume_id": MISSING}, "name"),
    ({"name": "driver-attach", "volume_id": MISSING, "server_id": MISSING},
     "not both"),
])
def test_bad_requests_are_400(lab, fault, words):
    api = lab[0]
    _fault(_arm(api, **fault), 400, "badRequest", words)
    assert api.get(URL)[1]["faults"] == []


def test_malformed_body_is_400(lab):
    status, body, _ = lab[0].request("POST", URL, raw="{", token=ADMIN)
    assert status == 400 and "Malformed" in body["badRequest"]["message"]


def test_unknown_server_and_volume_are_404(lab):
    api = lab[0]
    _fault(_arm(api, name="driver-attach", server_id=MISSING), 404,
           "itemNotFound", MISSING)
    _fault(_arm(api, name="driver-attach", volume_id=MISSING), 404,
           "itemNotFound", MISSING)
    _fault(api.delete(URL + "/no-such-fault"), 404, "itemNotFound",
           "driver-attach")


def test_server_on_a_down_host_is_409(lab):
    api, _, driver, _ = lab
    server = _server(driver, host="nowhere")
    _fault(_arm(api, name="detach-refused", server_id=server), 409,
           "conflictingRequest", "nowhere")


def test_a_host_that_does_not_answer_rolls_the_arming_back(lab,
                                                           monkeypatch):
    """h2 heartbeats but serves no RPC: nothing stays armed on h1."""
    monkeypatch.setattr(rpcapi, "FAULT_CALL_TIMEOUT", 1)
    api = lab[0]
    db_api.service_heartbeat(context.get_admin_context(), "h2",
                             "nova-compute", "compute")
    _fault(_arm(api, name="driver-attach"), 409, "conflictingRequest",
           "h2")
    status, body, _ = api.get(URL)
    assert body["faults"] == []
    assert {"host": "h2", "state": "did not answer: Compute service of h2 "
            "is unavailable at this time."} in body["hosts"]


def test_reserve_timeout_times_out_the_call_and_no_bdm_survives(lab):
    """Path 3 through the API: 409, the orphan BDM destroyed, nothing
    reserved in Cinder."""
    api, _, driver, volumes = lab
    server = _server(driver)
    vid = volumes.add_volume()
    status, body, _ = _arm(api, name="reserve-timeout", server_id=server)
    assert status == 200 and body["fault"]["hold_seconds"] == \
        2 + catalog.HOLD_MARGIN
    started = time.monotonic()
    _fault(api.post("/v2.1/servers/%s/os-volume_attachments" % server,
                    {"volumeAttachment": {"volumeId": vid}}, token=DEMO),
           409, "conflictingRequest", "h1")
    assert 2 <= time.monotonic() - started < 5
    assert db_api.bdm_get_all_by_instance(context.get_admin_context(),
                                          server) == []
    assert volumes.attachment_ids() == []
    assert volumes.status(vid) == "available"


def test_window_and_disarm(lab):
    api = lab[0]
    status, body, _ = _arm(api, name="attachment-complete", for_seconds=30)
    assert status == 200 and body["fault"]["one_shot"] is False
    assert body["fault"]["seconds_left"] == 30
    _arm(api, name="detach-refused")
    status, body, _ = api.delete(URL + "/detach-refused")
    assert status == 200
    assert [f["name"] for f in body["disarmed"]] == ["detach-refused"]
    assert [f["name"] for f in api.get(URL)[1]["faults"]] == [
        "attachment-complete"]
    status, body, _ = api.delete(URL)
    assert [f["name"] for f in body["disarmed"]] == ["attachment-complete"]
    assert api.get(URL)[1]["faults"] == []


def test_legacy_project_url_reaches_the_extension(lab):
    status, body, _ = lab[0].get("/v2.1/p1/os-ministack-faults")
    assert status == 200 and body["faults"] == []
