"""The attachments API over HTTP, in-process with the fake driver."""

import uuid

from tests.support.minicinder_inprocess import connector

INSTANCE = "31c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b11"
INSTANCE2 = "41c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b22"


def test_full_handshake(cinder, driver):
    """reserve -> update -> complete -> delete, with states after each."""
    vol = cinder.create_volume()
    assert cinder.volume(vol)["status"] == "available"

    att = cinder.reserve(vol, INSTANCE)
    assert att == {"id": att["id"], "status": "reserved",
                   "instance": INSTANCE, "volume_id": vol,
                   "attached_at": "", "detached_at": "",
                   "attach_mode": "null", "connection_info": {}}
    assert cinder.volume(vol)["status"] == "reserved"
    assert cinder.volume(vol)["attachments"] == []

    resp = cinder.put("/attachments/%s" % att["id"],
                      {"attachment": {"connector": connector()}})
    assert resp.status_code == 200, resp.body
    updated = resp.body["attachment"]
    assert updated["status"] == "attaching"      # fresh, not stale
    assert updated["attach_mode"] == "rw"
    assert updated["attached_at"] != ""
    info = updated["connection_info"]
    assert info["driver_volume_type"] == "iscsi"
    assert info["target_iqn"].endswith("volume-%s" % vol)
    assert info["target_lun"] == 1
    assert info["auth_method"] == "CHAP"
    assert info["attachment_id"] == att["id"]
    assert driver.exports[vol] == {connector()["initiator"]}
    assert cinder.volume(vol)["status"] == "attaching"

    resp = cinder.post("/attachments/%s/action" % att["id"],
                       {"os-complete": {}})
    assert resp.status_code == 204
    assert resp.body is None
    volume = cinder.volume(vol)
    assert volume["status"] == "in-use"
    [entry] = volume["attachments"]
    assert entry["id"] == vol and entry["attachment_id"] == att["id"]
    assert entry["server_id"] == INSTANCE and entry["device"] == "/dev/vdb"
    assert entry["host_name"] == "unit-host"    # admin sees it

    resp = cinder.as_nova().delete("/attachments/%s" % att["id"])
    assert resp.status_code == 200
    assert resp.body == {"attachments": []}
    assert cinder.volume(vol)["status"] == "available"
    assert not driver.exports.get(vol)   # target kept, ACL empty


def test_create_with_connector_connects_in_one_call(cinder, driver):
    vol = cinder.create_volume()
    resp = cinder.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": INSTANCE,
        "connector": connector()}})
    assert resp.status_code == 200
    assert resp.body["attachment"]["status"] == "attaching"
    assert resp.body["attachment"]["connection_info"]["auth_password"]


def test_create_with_connector_failure_undoes_reservation(cinder, driver):
    """A backend failure leaves the volume available, no attachment."""
    from minicinder import exception
    vol = cinder.create_volume()
    driver.fail["initialize_connection"] = exception.VolumeBackendError(
        reason="boom")
    resp = cinder.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": INSTANCE,
        "connector": connector()}})
    assert resp.status_code == 500
    assert "computeFault" in resp.body
    assert cinder.volume(vol)["status"] == "available"
    assert cinder.get("/attachments?volume_id=%s" % vol).body == {
        "attachments": []}
    assert not driver.exports.get(vol)   # target kept, ACL empty


def test_second_reserve_on_single_attach_volume_is_400(cinder):
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    resp = cinder.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": INSTANCE2}})
    assert resp.status_code == 400
    assert "reserved" in resp.body["badRequest"]["message"]


def test_same_instance_may_reserve_again(cinder):
    """LP 1694530: the migration override."""
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    assert cinder.reserve(vol, INSTANCE)["status"] == "reserved"


def test_multiattach_two_instances(cinder, driver, multiattach_type):
    vol = cinder.create_volume(volume_type=multiattach_type)
    assert cinder.volume(vol)["multiattach"] is True
    atts = []
    for inst, ini in ((INSTANCE, "iqn.2024-01.test:a"),
                      (INSTANCE2, "iqn.2024-01.test:b")):
        att = cinder.reserve(vol, inst)
        cinder.put("/attachments/%s" % att["id"], {"attachment": {
            "connector": connector(initiator=ini)}})
        cinder.post("/attachments/%s/action" % att["id"],
                    {"os-complete": {}})
        atts.append(att["id"])
    volume = cinder.volume(vol)
    assert volume["status"] == "in-use"
    assert len(volume["attachments"]) == 2
    assert driver.exports[vol] == {"iqn.2024-01.test:a", "iqn.2024-01.test:b"}
    resp = cinder.as_nova().delete("/attachments/%s" % atts[0])
    assert [a["id"] for a in resp.body["attachments"]] == [atts[1]]
    assert cinder.volume(vol)["status"] == "in-use"
    assert driver.exports[vol] == {"iqn.2024-01.test:b"}
    cinder.as_nova().delete("/attachments/%s" % atts[1])
    assert cinder.volume(vol)["status"] == "available"
    assert not driver.exports.get(vol)   # target kept, ACL empty


def test_reserved_multiattach_rejects_other_instance(cinder,
                                                     multiattach_type):
    vol = cinder.create_volume(volume_type=multiattach_type)
    cinder.reserve(vol, INSTANCE)
    resp = cinder.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": INSTANCE2}})
    assert resp.status_code == 400


def test_shared_initiator_keeps_access_until_last(cinder, driver,
                                                  multiattach_type):
    """Two attachments from one host: the first delete keeps the ACL."""
    vol = cinder.create_volume(volume_type=multiattach_type)
    ids = []
    for inst in (INSTANCE, INSTANCE2):
        att = cinder.reserve(vol, inst)
        cinder.put("/attachments/%s" % att["id"],
                   {"attachment": {"connector": connector()}})
        cinder.post("/attachments/%s/action" % att["id"],
                    {"os-complete": {}})
        ids.append(att["id"])
    cinder.as_nova().delete("/attachments/%s" % ids[0])
    assert driver.exports[vol] == {connector()["initiator"]}
    cinder.as_nova().delete("/attachments/%s" % ids[1])
    assert not driver.exports.get(vol)   # target kept, ACL empty


def test_delete_reserved_leaves_other_in_use(cinder, multiattach_type):
    """Deleting in-use one while another is reserved -> reserved."""
    vol = cinder.create_volume(volume_type=multiattach_type)
    first = cinder.reserve(vol, INSTANCE)
    cinder.put("/attachments/%s" % first["id"],
               {"attachment": {"connector": connector()}})
    cinder.post("/attachments/%s/action" % first["id"], {"os-complete": {}})
    cinder.reserve(vol, INSTANCE2)
    cinder.as_nova().delete("/attachments/%s" % first["id"])
    assert cinder.volume(vol)["status"] == "reserved"


def test_duplicate_connector_on_single_attach_is_409(cinder):
    vol = cinder.create_volume()
    first = cinder.reserve(vol, INSTANCE)
    cinder.put("/attachments/%s" % first["id"],
               {"attachment": {"connector": connector()}})
    cinder.post("/attachments/%s/action" % first["id"], {"os-complete": {}})
    second = cinder.reserve(vol, INSTANCE)     # same-instance override
    resp = cinder.put("/attachments/%s" % second["id"],
                      {"attachment": {"connector": connector()}})
    assert resp.status_code == 409
    assert "conflictingRequest" in resp.body


def test_update_without_initiator_is_400_and_changes_nothing(cinder, driver):
    vol = cinder.create_volume()
    att = cinder.reserve(vol, INSTANCE)
    resp = cinder.put("/attachments/%s" % att["id"],
                      {"attachment": {"connector": {"host": "h"}}})
    assert resp.status_code == 400
    assert "initiator" in resp.body["badRequest"]["message"]
    assert cinder.get("/attachments/%s" % att["id"]).body[
        "attachment"]["status"] == "reserved"
    assert not driver.exports.get(vol)   # target kept, ACL empty


def test_complete_before_update_needs_an_instance(cinder):
    """An attachment without an instance is completed only once
    connected (400); an instance's, without a connector, is completed as
    upstream's os-complete does (nova's attach to a shelved-offloaded
    server): in-use, exported nowhere; the unshelve's update then
    connects it."""
    vol = cinder.create_volume()
    att = cinder.reserve(vol, None)
    resp = cinder.post("/attachments/%s/action" % att["id"],
                       {"os-complete": None})
    assert resp.status_code == 400
    assert cinder.volume(vol)["status"] == "reserved"
    vol2 = cinder.create_volume()
    att = cinder.reserve(vol2, INSTANCE)
    resp = cinder.post("/attachments/%s/action" % att["id"],
                       {"os-complete": None})
    assert resp.status_code == 204
    assert cinder.volume(vol2)["status"] == "in-use"
    resp = cinder.put("/attachments/%s" % att["id"],
                      {"attachment": {"connector": connector()}})
    assert resp.status_code == 200, resp.body
    assert cinder.volume(vol2)["status"] == "attaching"
    # Connected and complete: a second update is refused.
    assert cinder.post("/attachments/%s/action" % att["id"],
                       {"os-complete": None}).status_code == 204
    resp = cinder.put("/attachments/%s" % att["id"],
                      {"attachment": {"connector": connector()}})
    assert resp.status_code == 409


def test_mode_is_3_54(cinder):
    vol = cinder.create_volume()
    body = {"attachment": {"volume_uuid": vol, "instance_uuid": INSTANCE,
                           "mode": "ro"}}
    assert cinder.post("/attachments", body).status_code == 400
    resp = cinder.post("/attachments", body, version="3.54")
    assert resp.status_code == 200
    assert resp.body["attachment"]["attach_mode"] == "ro"


def test_microversion_gates(cinder):
    """404 below 3.27 (and 3.44 for complete), 406 out of range, 400 bad."""
    vol = cinder.create_volume()
    assert cinder.get("/attachments", version="3.26").status_code == 404
    assert cinder.get("/attachments", version=None).status_code == 404
    att = cinder.reserve(vol, INSTANCE)
    resp = cinder.post("/attachments/%s/action" % att["id"],
                       {"os-complete": {}}, version="3.43")
    assert resp.status_code == 404
    resp = cinder.get("/attachments", version="3.99")
    assert resp.status_code == 406
    assert resp.body["notAcceptable"]["message"].startswith(
        "Version 3.99 is not supported")
    assert cinder.get("/attachments", version="3.x").status_code == 400
    assert cinder.get("/attachments", version="latest").headers[
        "OpenStack-API-Version"] == "volume 3.71"


def test_schema_errors_are_400(cinder):
    vol = cinder.create_volume()
    bad_bodies = [
        {"attachment": {"volume_uuid": vol, "bogus": 1}},
        {"attachment": {"volume_uuid": "not-a-uuid"}},
        {"attachment": {"instance_uuid": INSTANCE}},
        {"attachment": {"volume_uuid": vol, "connector": "x"}},
        {"attachments": {}},
        [],
    ]
    for body in bad_bodies:
        resp = cinder.post("/attachments", body)
        assert resp.status_code == 400, body
        assert "badRequest" in resp.body
    assert cinder.post("/attachments", raw="{nope").status_code == 400
    assert cinder.volume(vol)["status"] == "available"


def test_oversized_body_is_413(cinder):
    resp = cinder.post("/attachments", raw='{"a": "%s"}' % ("x" * 200000))
    assert resp.status_code == 413


def test_not_found_cases(cinder):
    missing = str(uuid.uuid4())
    resp = cinder.post("/attachments", {"attachment": {
        "volume_uuid": missing}})
    assert resp.status_code == 404
    assert "itemNotFound" in resp.body
    assert cinder.get("/attachments/%s" % missing).status_code == 404
    assert cinder.get("/attachments/nope").status_code == 404
    assert cinder.delete("/attachments/%s" % missing).status_code == 404
    assert cinder.put("/attachments/%s" % missing, {
        "attachment": {"connector": connector()}}).status_code == 404


def test_project_isolation(cinder):
    """Another project gets 404 and does not see the attachment listed."""
    vol = cinder.create_volume()
    att = cinder.reserve(vol, INSTANCE)
    other = cinder.as_user("bob", project="otherproject")
    assert other.get("/attachments/%s" % att["id"]).status_code == 404
    assert other.get("/volumes/%s" % vol).status_code == 404
    assert other.post("/attachments", {"attachment": {
        "volume_uuid": vol}}).status_code == 404
    assert other.get("/attachments").body == {"attachments": []}
    # Upstream ignores a non-admin's all_tenants: its own attachments.
    assert other.get("/attachments?all_tenants=1").body == {
        "attachments": []}
    listed = cinder.get("/attachments/detail?all_tenants=True&volume_id=%s"
                        % vol).body["attachments"]
    assert [a["id"] for a in listed] == [att["id"]]


def test_list_filters(cinder):
    vol = cinder.create_volume()
    att = cinder.reserve(vol, INSTANCE)
    assert cinder.get("/attachments?instance_id=%s" % INSTANCE).body == {
        "attachments": [{"id": att["id"], "status": "reserved",
                         "instance": INSTANCE, "volume_id": vol}]}
    assert cinder.get("/attachments?instance_id=%s" % INSTANCE2).body == {
        "attachments": []}
    assert len(cinder.get("/attachments?status=reserved").body[
        "attachments"]) == 1
    resp = cinder.get("/attachments?bogus=1")
    assert resp.status_code == 400
    assert "bogus" in resp.body["badRequest"]["message"]
    assert cinder.get("/attachments?all_tenants=maybe").status_code == 400


def test_response_headers(cinder):
    resp = cinder.get("/attachments", headers={
        "X-OpenStack-Request-ID":
            "req-12345678-1234-1234-1234-123456789abc"})
    assert resp.headers["OpenStack-API-Version"] == "volume 3.44"
    assert resp.headers["Vary"] == "OpenStack-API-Version"
    assert resp.headers["x-openstack-request-id"].startswith("req-")
    fault = cinder.get("/attachments", version="9.0")
    assert fault.headers["Vary"] == "OpenStack-API-Version"
    assert fault.headers["x-openstack-request-id"].startswith("req-")


def test_list_pages_newest_first(cinder):
    """limit and marker page through the list newest first; a marker the
    caller cannot see is a 400."""
    made = []
    for _ in range(3):
        made.append(cinder.reserve(cinder.create_volume(), INSTANCE)["id"])
    newest_first = [a["id"] for a in
                    cinder.get("/attachments").body["attachments"]]
    assert newest_first[:3] == made[::-1]
    page = cinder.get("/attachments?limit=2").body
    assert [a["id"] for a in page["attachments"]] == newest_first[:2]
    assert "marker=%s" % newest_first[1] in \
        page["attachments_links"][0]["href"]
    rest = cinder.get("/attachments/detail?marker=%s"
                      % newest_first[1]).body["attachments"]
    assert [a["id"] for a in rest] == newest_first[2:]
    assert rest[0]["connection_info"] == {} and rest[0]["attached_at"] == ""
    other = cinder.as_user("bob", project="otherproject")
    resp = other.get("/attachments?marker=%s" % made[0])
    assert resp.status_code == 400
    assert "marker" in resp.body["badRequest"]["message"]


def test_show_and_list_are_one_statement_each(stack):
    """The show and the list each read with one select (no ORM load of
    the attachment and its volume)."""
    from tests.support import sql_statements
    cinder, _driver, svc = stack
    att = cinder.reserve(cinder.create_volume(), INSTANCE)
    with sql_statements.recorded(svc.database) as seen:
        shown = cinder.get("/attachments/%s" % att["id"]).body["attachment"]
    assert len(seen) == 1
    assert shown["id"] == att["id"] and shown["status"] == "reserved"
    for path in ("/attachments", "/attachments/detail?instance_id=%s"
                 % INSTANCE):
        with sql_statements.recorded(svc.database) as seen:
            listed = cinder.get(path).body["attachments"]
        assert len(seen) == 1, path
        assert att["id"] in [a["id"] for a in listed]
