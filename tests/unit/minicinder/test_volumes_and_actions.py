"""Volumes, types, views, versions and the legacy actions (fake driver)."""

import uuid

from minicinder import exception
from tests.support.minicinder_inprocess import connector

INSTANCE = "51c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b33"


def test_versions_documents(cinder):
    root = cinder.get("/", version=None)
    assert root.status_code == 300
    [version] = root.body["versions"]
    assert (version["id"], version["version"], version["min_version"]) == (
        "v3.0", "3.71", "3.0")
    v3 = cinder.get("/v3/", version=None)
    assert v3.status_code == 200 and v3.body == root.body


def test_volume_view_shape(cinder):
    vol = cinder.create_volume(name="data")
    body = cinder.volume(vol)
    assert body["name"] == "data" and body["size"] == 1
    assert body["bootable"] == "false" and body["multiattach"] is False
    assert body["volume_type"] == "__DEFAULT__"
    assert body["attachments"] == []
    assert "group_id" in body and "shared_targets" not in body   # 3.44
    at_348 = cinder.get("/volumes/%s" % vol, version="3.48").body["volume"]
    assert at_348["shared_targets"] is True
    user = cinder.as_user("bob").get("/volumes/%s" % vol).body["volume"]
    assert "os-vol-host-attr:host" not in user


def test_create_failure_goes_error(cinder, driver):
    driver.fail["create_volume"] = exception.VolumeBackendError(reason="x")
    vol = cinder.create_volume()
    assert cinder.volume(vol)["status"] == "error"
    assert cinder.delete("/volumes/%s" % vol).status_code == 202
    assert cinder.get("/volumes/%s" % vol).status_code == 404


def test_delete_wipes_and_refuses_attached(cinder, driver):
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    assert cinder.delete("/volumes/%s" % vol).status_code == 400
    assert cinder.volume(vol)["status"] == "reserved"
    att = cinder.get("/attachments?volume_id=%s" % vol).body[
        "attachments"][0]
    cinder.as_nova().delete("/attachments/%s" % att["id"])
    assert cinder.delete("/volumes/%s" % vol).status_code == 202
    assert vol in driver.wiped
    assert cinder.get("/volumes/%s" % vol).status_code == 404


def test_list_filters_and_paging(cinder):
    ids = [cinder.create_volume(name="n%d" % i) for i in range(3)]
    listed = cinder.get("/volumes?name=n1").body["volumes"]
    assert [v["id"] for v in listed] == [ids[1]]
    page = cinder.get("/volumes/detail?limit=2").body
    assert len(page["volumes"]) == 2 and page["volumes_links"]
    rest = cinder.get("/volumes?limit=2&marker=%s"
                      % page["volumes"][-1]["id"]).body["volumes"]
    assert len(rest) == 1
    assert cinder.get("/volumes?sort=size:sideways").status_code == 400
    other = cinder.as_user("bob", project="elsewhere")
    assert other.get("/volumes").body == {"volumes": []}
    # Upstream ignores a non-admin's all_tenants: its own volumes.
    assert other.get("/volumes?all_tenants=1").body == {"volumes": []}
    assert len(cinder.get("/volumes?all_tenants=1").body["volumes"]) == 3


def test_update_name(cinder):
    vol = cinder.create_volume()
    resp = cinder.put("/volumes/%s" % vol, {"volume": {
        "name": "renamed", "description": "d"}})
    assert resp.status_code == 200
    assert resp.body["volume"]["name"] == "renamed"


def test_types_admin_only(cinder):
    bob = cinder.as_user("bob")
    assert bob.post("/types", {"volume_type": {
        "name": "x"}}).status_code == 403
    assert cinder.post("/types", {"volume_type": {
        "name": "__DEFAULT__"}}).status_code == 409
    names = [t["name"] for t in cinder.get("/types").body["volume_types"]]
    assert "__DEFAULT__" in names
    assert cinder.get("/types/default").body["volume_type"]["name"] == \
        "__DEFAULT__"


def test_legacy_flow_states(cinder, driver):
    vol = cinder.create_volume()
    act = "/volumes/%s/action" % vol
    assert cinder.post(act, {"os-reserve": None}).status_code == 202
    assert cinder.volume(vol)["status"] == "attaching"
    assert cinder.post(act, {"os-unreserve": {}}).status_code == 202
    assert cinder.volume(vol)["status"] == "available"
    cinder.post(act, {"os-reserve": {}})
    resp = cinder.post(act, {"os-initialize_connection": {
        "connector": connector()}})
    assert resp.status_code == 200
    assert resp.body["connection_info"]["data"]["access_mode"] == "rw"
    assert cinder.post(act, {"os-attach": {
        "instance_uuid": INSTANCE,
        "mountpoint": "/dev/vdb"}}).status_code == 202
    volume = cinder.volume(vol)
    assert volume["status"] == "in-use"
    assert cinder.post(act, {"os-begin_detaching": {}}).status_code == 202
    assert cinder.volume(vol)["status"] == "detaching"
    cinder.as_nova().post(act, {"os-terminate_connection": {
        "connector": connector()}})
    assert not driver.exports[vol]
    assert cinder.as_nova().post(act, {"os-detach": {}}).status_code == 202
    assert cinder.volume(vol)["status"] == "available"


def test_legacy_connection_info_carries_the_attachment_apis_keys(cinder):
    """The legacy export's ``data`` holds every key the attachment API's
    flattened connection_info does, but the two naming the attachment
    and the transport (which the legacy body keeps beside ``data``)."""
    legacy_vol, new_vol = cinder.create_volume(), cinder.create_volume()
    legacy = cinder.post("/volumes/%s/action" % legacy_vol, {
        "os-initialize_connection": {"connector": connector()}}).body[
            "connection_info"]
    att = cinder.reserve(new_vol, INSTANCE)
    flat = cinder.put("/attachments/%s" % att["id"], {"attachment": {
        "connector": connector()}}).body["attachment"]["connection_info"]
    assert legacy["driver_volume_type"] == flat["driver_volume_type"]
    assert set(legacy["data"]) == set(flat) - {"driver_volume_type",
                                               "attachment_id"}
    assert legacy["data"]["enforce_multipath"] is False
    enforced = dict(connector(), enforce_multipath=True)
    assert cinder.post("/volumes/%s/action" % legacy_vol, {
        "os-initialize_connection": {"connector": enforced}}).body[
            "connection_info"]["data"]["enforce_multipath"] is True


def test_admin_actions(cinder, driver):
    vol = cinder.create_volume()
    act = "/volumes/%s/action" % vol
    att = cinder.reserve(vol, INSTANCE)
    cinder.put("/attachments/%s" % att["id"],
               {"attachment": {"connector": connector()}})
    bob = cinder.as_user("bob")
    assert bob.post(act, {"os-force_detach": {}}).status_code == 403
    assert cinder.as_nova().post(act, {"os-force_detach": {
        "attachment_id": att["id"]}}).status_code == 202
    assert cinder.volume(vol)["status"] == "available"
    assert not driver.exports[vol]
    assert cinder.post(act, {"os-reset_status": {
        "status": "error"}}).status_code == 202
    assert cinder.volume(vol)["status"] == "error"
    assert cinder.post(act, {"os-reset_status": {
        "status": "in-use"}}).status_code == 400
    assert cinder.post(act, {"os-bogus": {}}).status_code == 400
    assert cinder.post("/volumes/%s/action" % uuid.uuid4(),
                       {"os-reserve": {}}).status_code == 404
