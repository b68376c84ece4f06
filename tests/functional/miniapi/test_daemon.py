"""The miniapi daemon over raw HTTP: versions, flavors, servers, errors.

Every bad-input case checks the status, the fault body shape and that
nothing was created.
"""

import subprocess
import sys
import uuid

import pytest

from tests.support import daemons
from tests.support import miniapi_daemon

BASE = "/v2.1/servers/%s/os-volume_attachments"


def _fault(resp, name, code):
    assert resp.status_code == code, (resp.status_code, resp.text)
    assert resp.headers["Content-Type"].startswith("application/json")
    body = resp.json()
    assert body[name]["code"] == code, body
    return body[name]["message"]


def test_versions(raw):
    resp = raw("GET", "/")
    assert resp.status_code == 200
    assert [v["id"] for v in resp.json()["versions"]] == ["v2.0", "v2.1"]
    for path in ("/v2.1", "/v2.1/"):
        resp = raw("GET", path)
        assert resp.status_code == 200
        doc = resp.json()["version"]
        assert doc["version"] == "2.96" and doc["min_version"] == "2.1"
        assert doc["links"][0]["href"].startswith(raw.base)


def test_microversion_headers(raw):
    resp = raw("GET", "/v2.1/flavors", version="2.79")
    assert resp.headers["OpenStack-API-Version"] == "compute 2.79"
    assert resp.headers["X-OpenStack-Nova-API-Version"] == "2.79"
    rid = resp.headers["x-openstack-request-id"]
    assert resp.headers["x-compute-request-id"] == rid
    _fault(raw("GET", "/v2.1/flavors", version="2.101"), "notAcceptable",
           406)
    _fault(raw("GET", "/v2.1/flavors", version="2.x"), "badRequest", 400)
    resp = raw("GET", "/v2.1/flavors",
               headers={"X-OpenStack-Nova-API-Version": "2.60"})
    assert resp.headers["X-OpenStack-Nova-API-Version"] == "2.60"


def test_flavors_seeded(raw):
    resp = raw("GET", "/v2.1/flavors/detail?is_public=None", version="2.61")
    names = [f["name"] for f in resp.json()["flavors"]]
    assert {"m1.nano", "m1.tiny"} <= set(names)
    _fault(raw("GET", "/v2.1/flavors/m1.tiny"), "itemNotFound", 404)
    assert raw("GET", "/v2.1/p1/flavors/42").json()["flavor"]["name"] == \
        "m1.nano"


def test_create_without_compute_goes_error(raw):
    """No compute host heartbeats: 202, then ERROR with a fault."""
    resp = raw("POST", "/v2.1/servers", {"server": {
        "name": "ftest-vm", "imageRef": "ftest-guest", "flavorRef": "42",
        "networks": "none"}}, version="2.96")
    assert resp.status_code == 202, resp.text
    server_id = resp.json()["server"]["id"]
    show = raw("GET", "/v2.1/servers/" + server_id, version="2.96").json()
    assert show["server"]["status"] == "ERROR"
    assert "No valid host" in show["server"]["fault"]["message"]
    listed = raw("GET", "/v2.1/servers/detail?name=ftest-vm&deleted=False",
                 version="2.96").json()["servers"]
    assert [s["id"] for s in listed] == [server_id]
    actions = raw("GET", "/v2.1/servers/%s/os-instance-actions" % server_id,
                  version="2.84").json()["instanceActions"]
    assert [a["action"] for a in actions] == ["create"]
    # server not ACTIVE: attach is 409, stop is 409; delete works (local)
    msg = _fault(raw("POST", BASE % server_id, {"volumeAttachment": {
        "volumeId": str(uuid.uuid4())}}), "conflictingRequest", 409)
    assert "vm_state error" in msg
    _fault(raw("POST", "/v2.1/servers/%s/action" % server_id,
               {"os-start": None}), "conflictingRequest", 409)
    assert raw("DELETE", "/v2.1/servers/" + server_id).status_code == 204
    _fault(raw("GET", "/v2.1/servers/" + server_id), "itemNotFound", 404)
    # the actions of the deleted server stay readable
    actions = raw("GET", "/v2.1/servers/%s/os-instance-actions" % server_id
                  ).json()["instanceActions"]
    assert {a["action"] for a in actions} == {"create", "delete"}


@pytest.mark.parametrize("body", [
    {"server": {"name": "x", "flavorRef": "42"}},               # no image
    {"server": {"name": "x", "imageRef": "ftest-guest"}},        # no flavor
    {"server": {"name": "x", "imageRef": "ftest-guest",
                "flavorRef": "999"}},
    {"server": {"name": "x", "imageRef": "nope", "flavorRef": "42"}},
    {"server": {"name": "x", "imageRef": "ftest-guest", "flavorRef": "42",
                "unknown": True}},
    {"server": {"name": "", "imageRef": "ftest-guest", "flavorRef": "42"}},
    {"servers": {}},
    [],
])
def test_create_bad_bodies(raw, body):
    before = raw("GET", "/v2.1/servers?all_tenants=1").json()["servers"]
    _fault(raw("POST", "/v2.1/servers", body), "badRequest", 400)
    after = raw("GET", "/v2.1/servers?all_tenants=1").json()["servers"]
    assert after == before


def test_non_json_and_unknown_routes(raw):
    msg = _fault(raw("POST", "/v2.1/servers", raw="{oops"), "badRequest",
                 400)
    assert msg == "Malformed request body"
    _fault(raw("GET", "/v2.1/servers/not-a-uuid"), "itemNotFound", 404)
    _fault(raw("GET", "/v2.1/servers/%s" % uuid.uuid4()), "itemNotFound",
           404)
    _fault(raw("GET", "/v2.1/no-such-thing"), "itemNotFound", 404)
    _fault(raw("PATCH", "/v2.1/servers"), "badMethod", 405)


def test_attachment_errors_on_unknown_server(raw):
    sid = str(uuid.uuid4())
    vol = str(uuid.uuid4())
    _fault(raw("GET", BASE % sid), "itemNotFound", 404)
    _fault(raw("POST", BASE % sid, {"volumeAttachment": {"volumeId": vol}}),
           "itemNotFound", 404)
    _fault(raw("DELETE", (BASE % sid) + "/" + vol), "itemNotFound", 404)
    _fault(raw("POST", BASE % sid, {"volumeAttachment": {
        "volumeId": "nope"}}), "badRequest", 400)


def test_os_services_admin_only(raw):
    assert raw("GET", "/v2.1/os-services").json() == {"services": []}
    _fault(raw("GET", "/v2.1/os-services", token="u1:p1"), "forbidden", 403)


def test_startup_errors_are_one_line(tmp_path):
    """Unreachable broker or database: exit 1, one line, no traceback."""
    sections = miniapi_daemon.api_sections(tmp_path)
    sections["DEFAULT"]["transport_url"] = \
        "rabbit://u:p@127.0.0.1:%d/" % daemons.free_port()
    conf_path = tmp_path / "broken.conf"
    daemons.write_config(str(conf_path), sections)
    proc = subprocess.run([daemons.binary_path("miniapi"), "--config-file",
                           str(conf_path)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1
    assert "message broker" in proc.stderr
    assert "Traceback" not in proc.stderr
    sections["database"]["connection"] = \
        "mysql+pymysql://u:p@127.0.0.1:%d/nova" % daemons.free_port()
    daemons.write_config(str(conf_path), sections)
    proc = subprocess.run([daemons.binary_path("miniapi"), "--config-file",
                           str(conf_path)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1
    assert "[database] connection" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "miniapi.cmd.manage",
                           "--config-file", str(tmp_path / "none.conf"),
                           "db_sync"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1 and "does not exist" in proc.stderr
