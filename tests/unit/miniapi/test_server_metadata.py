"""Server metadata and access IPs: kept at create and update, shown in
the server views, and the /servers/{id}/metadata API with upstream's
codes and bodies (nova's server_metadata controller)."""

import uuid

from minicompute.db import api as db_api
from tests.unit.miniapi.inprocess import IMAGE_ID

V6_GIVEN = "0000:0000:0000:0000:0000:babe:220.12.22.2"
V6_KEPT = "::babe:dc0c:1602"


def _create(api, **server):
    body = {"server": dict({"name": "vm1", "imageRef": IMAGE_ID,
                            "flavorRef": "42", "networks": "none"},
                           **server)}
    return api.post("/v2.1/servers", body)


def _url(server_id, key=None):
    url = "/v2.1/servers/%s/metadata" % server_id
    return url + "/" + key if key else url


def test_create_keeps_metadata_and_access_ips(api, compute, admin_ctxt):
    """What tempest's test_verify_server_details reads back: the access
    IPs (IPv6 in nova's compact form) and the metadata."""
    status, body, _ = _create(api, metadata={"hello": "world"},
                              accessIPv4="1.1.1.1", accessIPv6=V6_GIVEN)
    assert status == 202, body
    server_id = body["server"]["id"]
    server = api.get("/v2.1/servers/" + server_id)[1]["server"]
    assert server["metadata"] == {"hello": "world"}
    assert server["accessIPv4"] == "1.1.1.1"
    assert server["accessIPv6"] == V6_KEPT
    listed = api.get("/v2.1/servers/detail")[1]["servers"]
    assert [s["metadata"] for s in listed] == [{"hello": "world"}]
    row = db_api.instance_get(admin_ctxt, server_id)
    assert (row.access_ip_v4, row.access_ip_v6) == ("1.1.1.1", V6_KEPT)


def test_no_metadata_or_access_ips_shows_empty(api, make_server):
    server = api.get("/v2.1/servers/" + make_server())[1]["server"]
    assert server["metadata"] == {}
    assert (server["accessIPv4"], server["accessIPv6"]) == ("", "")


def test_bad_access_ip_is_400_and_creates_nothing(api, compute, admin_ctxt):
    status, body, _ = _create(api, accessIPv4="1.1.1")
    assert status == 400, body
    assert _create(api, accessIPv6="zz::1")[0] == 400
    assert db_api.instance_get_all(admin_ctxt, {"all_tenants": True}) == []


def test_update_sets_access_ips_only_when_given(api, make_server):
    server_id = make_server()
    url = "/v2.1/servers/" + server_id
    status, body, _ = api.put(url, {"server": {"accessIPv4": "10.0.0.1",
                                               "accessIPv6": "::1"}})
    assert status == 200, body
    assert body["server"]["accessIPv4"] == "10.0.0.1"
    assert body["server"]["accessIPv6"] == "::1"
    body = api.put(url, {"server": {"name": "renamed"}})[1]["server"]
    assert (body["name"], body["accessIPv4"]) == ("renamed", "10.0.0.1")
    assert api.put(url, {"server": {"accessIPv4": "::1"}})[0] == 400
    assert api.get(url)[1]["server"]["accessIPv4"] == "10.0.0.1"


def test_metadata_api_set_merge_get_delete(api, make_server):
    server_id = make_server()
    status, body, _ = api.put(_url(server_id), {
        "metadata": {"key1": "value1", "key2": "value2"}})
    assert (status, body) == (200, {"metadata": {"key1": "value1",
                                                 "key2": "value2"}})
    # PUT replaces the whole set
    status, body, _ = api.put(_url(server_id), {
        "metadata": {"meta2": "data2", "meta3": "data3"}})
    assert body == {"metadata": {"meta2": "data2", "meta3": "data3"}}
    # POST merges and answers the whole set
    status, body, _ = api.post(_url(server_id), {
        "metadata": {"meta2": "new", "key4": "v4"}})
    assert status == 200
    assert body == {"metadata": {"meta2": "new", "meta3": "data3",
                                 "key4": "v4"}}
    assert api.post(_url(server_id), {"metadata": {}})[1] == body
    assert api.get(_url(server_id)) [1] == body
    assert api.get(_url(server_id, "meta3"))[:2] == (
        200, {"meta": {"meta3": "data3"}})
    status, body, _ = api.put(_url(server_id, "nova"),
                              {"meta": {"nova": "alt"}})
    assert (status, body) == (200, {"meta": {"nova": "alt"}})
    status, body, _ = api.delete(_url(server_id, "meta3"))
    assert (status, body) == (204, None)
    assert api.get(_url(server_id))[1] == {"metadata": {
        "meta2": "new", "key4": "v4", "nova": "alt"}}
    shown = api.get("/v2.1/servers/" + server_id)[1]["server"]
    assert shown["metadata"] == {"meta2": "new", "key4": "v4",
                                 "nova": "alt"}


def test_metadata_api_errors(api, make_server):
    server_id = make_server()
    status, body, _ = api.get(_url(server_id, "nope"))
    assert status == 404
    assert body == {"itemNotFound": {
        "code": 404, "message": "Metadata item was not found"}}
    assert api.delete(_url(server_id, "nope"))[0] == 404
    status, body, _ = api.put(_url(server_id, "key"),
                              {"meta": {"other": "v"}})
    assert status == 400
    assert body["badRequest"]["message"] == "Request body and URI mismatch"
    assert api.put(_url(server_id, "a"),
                   {"meta": {"a": "1", "b": "2"}})[0] == 400
    assert api.put(_url(server_id), {"meta": {"a": "1"}})[0] == 400
    assert api.post(_url(server_id), {"metadata": {"": "blank"}})[0] == 400
    assert api.post(_url(server_id),
                    {"metadata": {"k" * 256: "v"}})[0] == 400
    assert api.post(_url(server_id),
                    {"metadata": {"k": "v" * 256}})[0] == 400
    assert api.post(_url(server_id), {"metadata": {"k": 1}})[0] == 400
    missing = str(uuid.uuid4())
    for call in (api.get(_url(missing)), api.get(_url(missing, "k")),
                 api.post(_url(missing), {"metadata": {"k": "v"}}),
                 api.put(_url(missing), {"metadata": {"k": "v"}}),
                 api.put(_url(missing, "k"), {"meta": {"k": "v"}}),
                 api.delete(_url(missing, "k"))):
        assert call[0] == 404
    # another project's server is not found
    assert api.get(_url(server_id), token="u2:p2")[0] == 404
    assert api.get(_url(server_id))[1] == {"metadata": {}}


def test_metadata_quota_counts_the_result(api, make_server):
    """128 items at most after the change: 403 and nothing written."""
    server_id = make_server()
    full = {"k%d" % n: "v" for n in range(128)}
    assert api.put(_url(server_id), {"metadata": full})[0] == 200
    status, body, _ = api.post(_url(server_id), {"metadata": {"x": "y"}})
    assert status == 403
    assert body["forbidden"]["message"] == \
        "Maximum number of metadata items exceeds 128"
    assert api.put(_url(server_id, "x"), {"meta": {"x": "y"}})[0] == 403
    # replacing a key of a full set is fine
    assert api.post(_url(server_id), {"metadata": {"k0": "new"}})[0] == 200
    too_many = dict(full, extra="1")
    assert api.put(_url(server_id), {"metadata": too_many})[0] == 403
    assert api.get(_url(server_id))[1]["metadata"] == dict(full, k0="new")


def test_metadata_changes_refused_by_state(api, make_server, admin_ctxt):
    """nova's check: active, paused, suspended or stopped, and nothing in
    flight; reading is always allowed."""
    server_id = make_server()
    api.put(_url(server_id), {"metadata": {"k": "v"}})
    db_api.instance_update(admin_ctxt, server_id,
                           {"vm_state": "building", "task_state": None})
    status, body, _ = api.post(_url(server_id), {"metadata": {"a": "b"}})
    assert status == 409
    assert body["conflictingRequest"]["message"] == (
        "Cannot 'update metadata' instance %s while it is in vm_state "
        "building" % server_id)
    status, body, _ = api.delete(_url(server_id, "k"))
    assert status == 409 and "'delete metadata'" in \
        body["conflictingRequest"]["message"]
    assert api.get(_url(server_id, "k"))[0] == 200
    for vm_state in ("paused", "suspended", "stopped"):
        db_api.instance_update(admin_ctxt, server_id,
                               {"vm_state": vm_state, "task_state": None})
        assert api.post(_url(server_id), {"metadata": {"a": "b"}})[0] == 200
    db_api.instance_update(admin_ctxt, server_id,
                           {"vm_state": "active", "task_state": "pausing"})
    assert api.put(_url(server_id, "a"), {"meta": {"a": "c"}})[0] == 409


def test_delete_server_deletes_its_metadata(api, make_server, admin_ctxt):
    server_id = make_server()
    api.put(_url(server_id), {"metadata": {"k": "v"}})
    db_api.instance_destroy(admin_ctxt, server_id)
    assert db_api.instance_metadata_get(admin_ctxt, server_id) == {}
