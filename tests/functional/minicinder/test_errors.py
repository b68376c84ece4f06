"""Every error case of the reference for these routes, as raw HTTP against
the real daemon: upstream's fault body and code, and nothing changed."""


import pytest
import requests

from tests.support.minicinder_daemon import Raw
from tests.support.minicinder_daemon import force_cleanup

MISSING = "9d0a3d4e-3c1b-4c59-9f11-000000000000"


@pytest.fixture(scope="module")
def volume_id(daemon):
    raw = Raw(daemon.url)
    resp = raw("POST", "/volumes", {"volume": {"size": 1}})
    vid = resp.json()["volume"]["id"]
    raw.wait_status(vid, "available")
    yield vid
    force_cleanup(raw, vid, check=True)


def _fault(resp, code, name):
    assert resp.status_code == code, resp.text
    assert resp.headers["Content-Type"].startswith("application/json")
    body = resp.json()
    assert list(body) == [name], body
    assert body[name]["code"] == code
    return body[name]["message"]


def test_versions(daemon):
    resp = requests.get(daemon.url + "/")
    assert resp.status_code == 300
    [version] = resp.json()["versions"]
    assert version["version"] == "3.71" and version["min_version"] == "3.0"
    for path in ("/v3", "/v3/"):
        resp = requests.get(daemon.url + path)
        assert resp.status_code == 200
        assert resp.json()["versions"][0]["id"] == "v3.0"
    assert resp.headers["x-openstack-request-id"].startswith("req-")
    assert resp.headers["Vary"] == "OpenStack-API-Version"


def test_microversion_errors(raw):
    assert raw("GET", "/attachments", version="3.26").status_code == 404
    msg = _fault(raw("GET", "/attachments", version="3.72"), 406,
                 "notAcceptable")
    assert "Minimum is 3.0 and maximum is 3.71" in msg
    _fault(raw("GET", "/attachments", version="3"), 400, "badRequest")
    _fault(raw("GET", "/attachments", version="volume"), 400, "badRequest")
    resp = raw("GET", "/attachments", version="latest")
    assert resp.headers["OpenStack-API-Version"] == "volume 3.71"


def test_attachment_create_errors(raw, volume_id):
    cases = [
        {"attachment": {"volume_uuid": volume_id, "extra": True}},
        {"attachment": {"volume_uuid": "1234"}},
        {"attachment": {"volume_uuid": volume_id, "instance_uuid": 5}},
        {"attachment": {"volume_uuid": volume_id, "mode": "rw"}},  # < 3.54
        {"attachment": {}},
        {"attachment": "x"},
        {},
    ]
    for body in cases:
        _fault(raw("POST", "/attachments", body), 400, "badRequest")
    _fault(raw("POST", "/attachments",
               {"attachment": {"volume_uuid": volume_id, "mode": "xx"}},
               version="3.54"), 400, "badRequest")
    _fault(raw("POST", "/attachments", data="{not json",
               headers={"Content-Type": "application/json"}),
           400, "badRequest")
    _fault(raw("POST", "/attachments", data="x" * 200000), 413, "overLimit")
    _fault(raw("POST", "/attachments", {"attachment": {
        "volume_uuid": MISSING}}), 404, "itemNotFound")
    assert raw.wait_status(volume_id, "available")
    assert raw("GET", "/attachments?volume_id=%s" % volume_id).json() == {
        "attachments": []}


def test_attachment_update_complete_delete_errors(raw, volume_id):
    # No instance: os-complete before a connector is refused (an
    # instance's connector-less attachment is completed, as upstream).
    att = raw("POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id}}).json()["attachment"]
    url = "/attachments/%s" % att["id"]
    try:
        for body in ({"attachment": {"connector": {}}},
                     {"attachment": {}}, {"attachment": {"connector": 1}},
                     {"attachment": {"connector": {"initiator": "x"},
                                     "x": 1}}):
            _fault(raw("PUT", url, body), 400, "badRequest")
        msg = _fault(raw("PUT", url, {"attachment": {"connector": {
            "host": "h"}}}), 400, "badRequest")
        assert "initiator" in msg
        _fault(raw("POST", url + "/action", {"os-complete": {}}), 400,
               "badRequest")       # never connected
        _fault(raw("POST", url + "/action", {"os-bogus": {}}), 400,
               "badRequest")
        assert raw("POST", url + "/action", {"os-complete": {}},
                   version="3.43").status_code == 404
        _fault(raw("PUT", "/attachments/%s" % MISSING, {"attachment": {
            "connector": {"initiator": "iqn.2024-01.org.ministack:x"}}}),
            404, "itemNotFound")
        # Not an iSCSI name: refused before the attachment is looked up.
        msg = _fault(raw("PUT", url, {"attachment": {"connector": {
            "initiator": "x"}}}), 400, "badRequest")
        assert "connector/initiator" in msg
        _fault(raw("DELETE", "/attachments/%s" % MISSING), 404,
               "itemNotFound")
        _fault(raw("GET", "/attachments/not-a-uuid"), 404, "itemNotFound")
        assert raw("GET", url).json()["attachment"]["status"] == "reserved"
    finally:
        assert raw("DELETE", url).status_code == 200
    raw.wait_status(volume_id, "available")


def test_filters_and_isolation(raw, volume_id):
    _fault(raw("GET", "/attachments?bogus=1"), 400, "badRequest")
    _fault(raw("GET", "/attachments?all_tenants=perhaps"), 400,
           "badRequest")
    _fault(raw("GET", "/volumes?limit=-1"), 400, "badRequest")
    _fault(raw("GET", "/volumes/detail?colour=red"), 400, "badRequest")
    other = type(raw)(raw.base, project="someoneelse", user="bob")
    _fault(other("GET", "/volumes/%s" % volume_id), 404, "itemNotFound")
    # A non-admin's all_tenants is ignored, as upstream.
    assert other("GET", "/attachments?all_tenants=True").json() == {
        "attachments": []}
    _fault(other("POST", "/types", {"volume_type": {"name": "x"}}), 403,
           "forbidden")
    # Policy is checked before the lookup, as upstream: 403 either way.
    _fault(other("POST", "/volumes/%s/action" % volume_id,
                 {"os-reset_status": {"status": "error"}}), 403,
           "forbidden")
    _fault(other("POST", "/volumes/%s/action" % volume_id,
                 {"os-reserve": {}}), 404, "itemNotFound")
    mine = type(raw)(raw.base, project=raw.project, user="bob")
    _fault(mine("POST", "/volumes/%s/action" % volume_id,
                {"os-reset_status": {"status": "error"}}), 403, "forbidden")
    _fault(mine("POST", "/volumes/%s/action" % volume_id,
                {"os-force_detach": {}}), 403, "forbidden")
    assert raw.wait_status(volume_id, "available")


def test_volume_errors(raw, volume_id):
    for body in ({"volume": {"size": 0}}, {"volume": {"size": "a"}},
                 {"volume": {}}, {"volume": {"size": 1, "bogus": 1}},
                 {"volume": {"size": 1, "multiattach": True}},
                 {"volume": {"size": 1, "availability_zone": "mars"}}):
        _fault(raw("POST", "/volumes", body), 400, "badRequest")
    # No snapshot ever exists here: a missing one, as upstream.
    _fault(raw("POST", "/volumes", {"volume": {
        "size": 1, "snapshot_id": MISSING}}), 404, "itemNotFound")
    _fault(raw("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": "no-such-type"}}), 404, "itemNotFound")
    _fault(raw("PUT", "/volumes/%s" % volume_id, {"volume": {}}), 400,
           "badRequest")
    _fault(raw("GET", "/volumes/%s" % MISSING), 404, "itemNotFound")
    _fault(raw("GET", "/volumes/myvolname"), 404, "itemNotFound")
    _fault(raw("PATCH", "/volumes/%s" % volume_id), 405, "badMethod")


def test_legacy_action_errors(raw, volume_id):
    act = "/volumes/%s/action" % volume_id
    _fault(raw("POST", act, {"os-begin_detaching": {}}), 400, "badRequest")
    _fault(raw("POST", act, {"os-attach": {"mountpoint": "/dev/vdb"}}),
           400, "badRequest")
    _fault(raw("POST", act, {"os-attach": {"instance_uuid": "x",
                                           "mountpoint": "/dev/vdb"}}),
           400, "badRequest")
    _fault(raw("POST", act, {"os-initialize_connection": {}}), 400,
           "badRequest")
    _fault(raw("POST", act, {"os-reserve": {}, "os-unreserve": {}}), 400,
           "badRequest")
    _fault(raw("POST", act, {"os-reset_status": {"status": "bogus"}}), 400,
           "badRequest")
    _fault(raw("POST", act, {"os-reset_status": {"status": "in-use"}}), 400,
           "badRequest")
    _fault(raw("POST", "/volumes/%s/action" % MISSING, {"os-reserve": {}}),
           404, "itemNotFound")
    # os-unreserve / os-roll_detaching on an available volume: no-ops.
    assert raw("POST", act, {"os-unreserve": {}}).status_code == 202
    assert raw("POST", act, {"os-roll_detaching": {}}).status_code == 202
    assert raw.wait_status(volume_id, "available")
