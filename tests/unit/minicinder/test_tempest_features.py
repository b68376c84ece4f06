"""What upstream tempest's volume tests exercise beyond the attach
journey, on a volume: quotas and limits, extend, force-delete, retype,
read-only and bootable flags, metadata, list filters, tempest's os-attach
flows (fake driver, in-process app; the views' shapes are checked
against tempest's schemas in ``test_tempest_schemas.py``; services,
transfers and types in ``test_tempest_admin_features.py``, volumes from
images in ``test_tempest_image_features.py``)."""

import pytest

from minicinder import exception
from tests.support.minicinder_inprocess import connector
from tests.unit.minicinder.tempest_actions import action as _action
from tests.unit.minicinder.tempest_actions import fault as _fault

INSTANCE = "0b7e2b0e-5a8a-4c1f-9a62-6c0c3c8f0a01"


def test_quotas_refuse_creates_and_extends(cinder):
    member = cinder.as_user("demo")
    vol = member.create_volume()
    quota_url = "/os-quota-sets/%s" % member.project
    assert member.put(quota_url, {"quota_set": {"volumes": 5}}) \
        .status_code == 403
    # Below the usage is accepted unless skip_validation is false.
    assert _fault(cinder.put(quota_url, {"quota_set": {
        "volumes": 0, "skip_validation": False}}), 400)
    assert cinder.put(quota_url, {"quota_set": {
        "volumes": 1, "gigabytes": 2}}).status_code == 200
    assert "volumes" in _fault(member.post("/volumes", {
        "volume": {"size": 1}}), 413)
    assert cinder.put(quota_url, {"quota_set": {
        "volumes": -1}}).status_code == 200
    assert "gigabytes" in _fault(member.post("/volumes", {
        "volume": {"size": 2}}), 413)
    _fault(_action(member, vol, "os-extend", {"new_size": 3}), 413)
    assert member.volume(vol)["status"] == "available"
    usage = member.get(quota_url + "?usage=True").body["quota_set"]
    assert usage["volumes"] == {"limit": -1, "in_use": 1, "reserved": 0}
    limits = member.get("/limits").body["limits"]["absolute"]
    assert (limits["totalVolumesUsed"], limits["totalGigabytesUsed"],
            limits["maxTotalVolumeGigabytes"]) == (1, 1, 2)
    assert cinder.delete(quota_url).status_code == 200
    assert member.get(quota_url).body["quota_set"]["gigabytes"] == 1000


def test_extend(cinder, driver):
    vol = cinder.create_volume()
    for bad in (0, 1, "abc", None, "9" * 5000):
        _fault(_action(cinder, vol, "os-extend", {"new_size": bad}), 400)
    _fault(_action(cinder, "0" * 8 + "-0000-4000-8000-" + "0" * 12,
                   "os-extend", {"new_size": 2}), 404)
    assert _action(cinder, vol, "os-extend", {"new_size": 2}) \
        .status_code == 202
    assert cinder.volume(vol)["size"] == 2 and driver.volumes[vol] == 2
    driver.fail["extend_volume"] = exception.VolumeBackendError(reason="x")
    _action(cinder, vol, "os-extend", {"new_size": 3})
    assert cinder.volume(vol)["status"] == "error_extending"
    assert cinder.volume(vol)["size"] == 2


def test_extend_needs_available(cinder):
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    assert "available" in _fault(
        _action(cinder, vol, "os-extend", {"new_size": 2}), 400)


def test_force_delete(cinder, driver):
    member = cinder.as_user("demo")
    vol = member.create_volume()
    _fault(_action(member, vol, "os-force_delete"), 403)
    for status in ("creating", "attaching", "maintenance", "error"):
        assert _action(cinder, vol, "os-reset_status",
                       {"status": status}).status_code == 202
        assert member.volume(vol)["status"] == status
    assert _action(cinder, vol, "os-force_delete").status_code == 202
    assert member.get("/volumes/%s" % vol).status_code == 404
    assert vol in driver.wiped
    attached = member.create_volume()
    _action(member, attached, "os-attach", {"instance_uuid": INSTANCE,
                                            "mountpoint": "/dev/vdb"})
    _fault(_action(cinder, attached, "os-force_delete"), 400)


def test_readonly_is_enforced(cinder):
    vol = cinder.create_volume()
    assert _action(cinder, vol, "os-update_readonly_flag",
                   {"readonly": True}).status_code == 202
    assert cinder.volume(vol)["metadata"] == {"readonly": "True"}
    _fault(_action(cinder, vol, "os-attach", {
        "instance_uuid": INSTANCE, "mountpoint": "/dev/vdb"}), 400)
    info = _action(cinder, vol, "os-initialize_connection",
                   {"connector": connector()}).body["connection_info"]
    assert info["data"]["access_mode"] == "ro"
    att = cinder.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": INSTANCE,
        "connector": connector()}}).body["attachment"]
    assert att["attach_mode"] == "ro"
    assert att["connection_info"]["access_mode"] == "ro"
    # Only an available volume's flag can change.
    _fault(_action(cinder, vol, "os-update_readonly_flag",
                   {"readonly": False}), 400)
    _fault(_action(cinder, vol, "os-update_readonly_flag",
                   {"readonly": "perhaps"}), 400)


def test_bootable_and_retype(cinder):
    vol = cinder.create_volume()
    response = _action(cinder, vol, "os-set_bootable", {"bootable": "true"})
    assert response.status_code == 200 and response.body is None
    assert cinder.volume(vol)["bootable"] == "true"
    other = cinder.post("/types", {"volume_type": {"name": "gold"}}).body[
        "volume_type"]
    _fault(_action(cinder, vol, "os-retype", {"new_type": "__DEFAULT__"}),
           400)
    _fault(_action(cinder, vol, "os-retype", {"new_type": "nope"}), 404)
    assert _action(cinder, vol, "os-retype", {
        "new_type": other["id"], "migration_policy": "never"}) \
        .status_code == 202
    assert cinder.volume(vol)["volume_type"] == "gold"


def test_metadata_api(cinder):
    vol = cinder.create_volume()
    url = "/volumes/%s/metadata" % vol
    assert cinder.post(url, {"metadata": {"a": "1", "b": "2"}}).body == {
        "metadata": {"a": "1", "b": "2"}}
    assert cinder.put(url, {"metadata": {"b": "3"}}).body == {
        "metadata": {"b": "3"}}
    assert cinder.get(url + "/b").body == {"meta": {"b": "3"}}
    _fault(cinder.get(url + "/a"), 404)
    _fault(cinder.put(url + "/b", {"meta": {"c": "1"}}), 400)
    _fault(cinder.put(url + "/b", {"meta": {"b": "1", "c": "1"}}), 400)
    assert cinder.put(url + "/b", {"meta": {"b": "4"}}).body == {
        "meta": {"b": "4"}}
    response = cinder.delete(url + "/b")
    assert response.status_code == 200 and response.body is None
    _fault(cinder.delete(url + "/b"), 404)
    _fault(cinder.as_user("bob", project="else").get(url), 404)
    _action(cinder, vol, "os-reset_status", {"status": "maintenance"})
    _fault(cinder.post(url, {"metadata": {"a": "1"}}), 400)


def test_list_filters(cinder):
    tagged = cinder.post("/volumes", {"volume": {
        "size": 1, "metadata": {"Type": "work"}}}).body["volume"]["id"]
    cinder.create_volume()
    listed = cinder.get("/volumes?metadata={'Type': 'work'}").body
    assert [v["id"] for v in listed["volumes"]] == [tagged]
    _fault(cinder.get("/volumes?metadata=nope"), 400)
    assert len(cinder.get("/volumes?availability_zone=nova").body[
        "volumes"]) == 2
    assert cinder.get("/volumes?availability_zone=x").body["volumes"] == []
    counted = cinder.get("/volumes?with_count=true&limit=1", version="3.45")
    assert counted.body["count"] == 2
    summary = cinder.get("/volumes/summary", version="3.36").body
    assert summary == {"volume-summary": {
        "total_size": 2, "total_count": 2, "metadata": {"Type": ["work"]}}}
    _fault(cinder.get("/volumes/summary", version="3.11"), 404)


@pytest.mark.parametrize("path", ["/volumes/", "/types/", "/attachments/"])
def test_no_trailing_slash_routes(cinder, path):
    _fault(cinder.get(path), 404)


def test_sources_that_never_exist(cinder):
    missing = "7c7c7c7c-0000-4000-8000-000000000000"
    for key in ("snapshot_id", "backup_id", "group_id",
                "consistencygroup_id", "source_volid"):
        _fault(cinder.post("/volumes", {"volume": {
            "size": 1, key: missing}}), 404)


def test_tempest_attach_detach_and_force_detach(cinder, nova):
    """tempest's VolumesActionsTest flows: a user os-attach'es a volume
    to its server without Nova (no BDM: Nova answers 404 when asked),
    os-detach'es it; an admin resets it to error and force-detaches the
    attachment with no connector."""
    member = cinder.as_user("demo")
    vol = member.create_volume()
    attach = {"instance_uuid": INSTANCE, "mountpoint": "/dev/vdb"}
    assert _action(member, vol, "os-attach", attach).status_code == 202
    shown = member.volume(vol)
    assert shown["status"] == "in-use"
    [attachment] = shown["attachments"]
    assert (attachment["server_id"], attachment["device"],
            attachment["id"], attachment["volume_id"]) == (
        INSTANCE, "/dev/vdb", vol, vol)
    assert _action(member, vol, "os-detach", {}).status_code == 202
    assert member.volume(vol)["status"] == "available"
    _action(member, vol, "os-attach", attach)
    attachment_id = member.volume(vol)["attachments"][0]["attachment_id"]
    _action(cinder, vol, "os-reset_status", {"status": "error"})
    assert _action(cinder, vol, "os-force_detach", {
        "connector": None, "attachment_id": attachment_id}) \
        .status_code == 202
    shown = member.volume(vol)
    assert (shown["status"], shown["attachments"]) == ("available", [])
    assert (INSTANCE, vol) in nova.asked


def test_quota_target_too_long_for_the_database(cinder):
    _fault(cinder.put("/os-quota-sets/%s" % ("p" * 256),
                      {"quota_set": {"volumes": 1}}), 400)


@pytest.mark.parametrize("value", [1.0, -0.0, 2.5])
def test_quota_limit_that_is_not_an_integer_is_400(cinder, value):
    """JSON's 1.0 passes the schema's integer type; cinder's
    validate_integer (int(str(value))) refuses it with a 400, and no
    quota changes (the fuzz tier found a 500 here)."""
    url = "/os-quota-sets/%s" % "p-float"
    before = cinder.get(url).body["quota_set"]
    resp = cinder.put(url, {"quota_set": {"volumes": 4,
                                          "gigabytes": value}})
    assert "integer" in _fault(resp, 400)
    assert cinder.get(url).body["quota_set"] == before
