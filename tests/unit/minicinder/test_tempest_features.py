"""What upstream tempest's volume tests exercise beyond the attach
journey: quotas and limits, extend, force-delete, retype, read-only and
bootable flags, metadata, list filters, services, transfers and type
access (fake driver, in-process app; the views' shapes are checked
against tempest's schemas in ``test_tempest_schemas.py``)."""

import pytest

from minicinder import exception
from tests.unit.minicinder.conftest import connector

INSTANCE = "0b7e2b0e-5a8a-4c1f-9a62-6c0c3c8f0a01"


def _action(client, volume_id, name, args=None):
    return client.post("/volumes/%s/action" % volume_id,
                       {name: {} if args is None else args})


def _fault(response, code):
    assert response.status_code == code, response.body
    return next(iter(response.body.values()))["message"]


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
    vol = cinder.create_volume()
    assert "not supported" in _fault(cinder.post("/volumes", {"volume": {
        "size": 1, "source_volid": vol}}), 400)


def test_services_disable_freeze(cinder):
    services = cinder.get("/os-services?host=unit-host").body["services"]
    assert [(s["binary"], s["host"]) for s in services] == [
        ("cinder-volume", "unit-host@lvmdriver-1")]
    assert cinder.get("/os-services?binary=cinder-scheduler").body == {
        "services": []}
    _fault(cinder.as_user("bob").get("/os-services"), 403)
    body = {"host": "unit-host@lvmdriver-1", "binary": "cinder-volume"}
    _fault(cinder.put("/os-services/enable", dict(body, host="nope")), 404)
    _fault(cinder.put("/os-services/disable", dict(body, binary="x")), 404)
    _fault(cinder.put("/os-services/disable-log-reason", body), 400)
    _fault(cinder.put("/os-services/freeze", {"host": "nope"}), 400)
    assert cinder.put("/os-services/disable-log-reason", dict(
        body, disabled_reason="maintenance")).status_code == 200
    [service] = cinder.get("/os-services").body["services"]
    assert (service["status"], service["disabled_reason"]) == (
        "disabled", "maintenance")
    zones = cinder.get("/os-availability-zone").body
    assert zones["availabilityZoneInfo"][0]["zoneState"] == {
        "available": False}
    # No backend takes new volumes: upstream's "No valid backend".
    vol = cinder.create_volume()
    assert cinder.volume(vol)["status"] == "error"
    assert cinder.put("/os-services/enable", body).status_code == 200
    assert cinder.volume(cinder.create_volume())["status"] == "available"
    assert cinder.put("/os-services/freeze", {"host": "unit-host"}) \
        .status_code == 200
    [service] = cinder.get("/os-services").body["services"]
    assert service["frozen"] is True


def test_transfer(cinder):
    giver = cinder.as_user("giver", project="p-giver")
    taker = cinder.as_user("taker", project="p-taker")
    vol = giver.create_volume()
    created = giver.post("/os-volume-transfer", {"transfer": {
        "volume_id": vol, "name": "gift"}}).body["transfer"]
    url = "/os-volume-transfer/%s" % created["id"]
    assert giver.volume(vol)["status"] == "awaiting-transfer"
    _fault(giver.delete("/volumes/%s" % vol), 400)
    _fault(taker.get(url), 404)
    assert taker.get("/os-volume-transfer").body == {"transfers": []}
    _fault(taker.post(url + "/accept", {"accept": {"auth_key": "x"}}), 400)
    accepted = taker.post(url + "/accept", {"accept": {
        "auth_key": created["auth_key"]}})
    assert accepted.status_code == 202
    moved = taker.volume(vol)
    assert (moved["status"], moved["user_id"],
            moved["os-vol-tenant-attr:tenant_id"]) == (
        "available", "taker", "p-taker")
    _fault(giver.get("/volumes/%s" % vol), 404)
    _fault(taker.get(url), 404)
    again = taker.post("/os-volume-transfer", {"transfer": {
        "volume_id": vol}}).body["transfer"]
    assert taker.delete("/os-volume-transfer/%s" % again["id"]) \
        .status_code == 202
    assert taker.volume(vol)["status"] == "available"


def test_type_access(cinder):
    member = cinder.as_user("demo")
    private = cinder.post("/types", {"volume_type": {
        "name": "private", "os-volume-type-access:is_public": False}}) \
        .body["volume_type"]
    _fault(member.post("/volumes", {"volume": {
        "size": 1, "volume_type": private["id"]}}), 404)
    assert private["id"] not in [
        t["id"] for t in member.get("/types").body["volume_types"]]
    action = "/types/%s/action" % private["id"]
    add = {"addProjectAccess": {"project": member.project}}
    assert cinder.post(action, add).status_code == 202
    _fault(cinder.post(action, add), 409)
    _fault(member.post(action, add), 403)
    assert private["id"] in [
        t["id"] for t in member.get("/types").body["volume_types"]]
    vol = member.post("/volumes", {"volume": {
        "size": 1, "volume_type": private["id"]}}).body["volume"]
    assert vol["volume_type"] == "private"
    assert cinder.get("/types/%s/os-volume-type-access" % private["id"]) \
        .body == {"volume_type_access": [{"volume_type_id": private["id"],
                                          "project_id": member.project}]}
    _fault(cinder.get("/types/%s/os-volume-type-access"
                      % cinder.get("/types/default").body["volume_type"][
                          "id"]), 404)
    remove = {"removeProjectAccess": {"project": member.project}}
    assert cinder.post(action, remove).status_code == 202
    _fault(cinder.post(action, remove), 404)


def test_type_update_and_extra_spec_keys(cinder):
    vtype = cinder.post("/types", {"volume_type": {
        "name": "silver", "extra_specs": {"k": "v"}}}).body["volume_type"]
    url = "/types/%s" % vtype["id"]
    _fault(cinder.post("/types", {"volume_type": {"name": "  "}}), 400)
    _fault(cinder.post("/types", {"volume_type": {"name": "silver"}}), 409)
    _fault(cinder.put(url, {"volume_type": {}}), 400)
    updated = cinder.put(url, {"volume_type": {
        "name": "bronze", "description": "d", "is_public": False}}).body
    assert updated["volume_type"]["is_public"] is False
    default = cinder.get("/types/default").body["volume_type"]["id"]
    _fault(cinder.put("/types/%s" % default, {"volume_type": {
        "name": "renamed"}}), 400)
    assert cinder.get(url + "/extra_specs/k").body == {"k": "v"}
    _fault(cinder.get(url + "/extra_specs/nope"), 404)
    _fault(cinder.put(url + "/extra_specs/k", {"other": "v"}), 400)
    assert cinder.put(url + "/extra_specs/k", {"k": "w"}).body == {"k": "w"}
    assert cinder.delete(url + "/extra_specs/k").status_code == 202
    _fault(cinder.delete(url + "/extra_specs/k"), 404)


@pytest.fixture
def image_stack(tmp_path):
    """A stack whose state path holds one registered image (1 GiB
    min_disk, a small disk file), as devstack's lib/image lays it out."""
    import json

    from minicinder import service
    from minicinder.db import session as db_session
    from minicinder.volume import fake
    from minicinder.volume import manager as volume_manager
    from tests.unit.minicinder import conftest

    image_dir = tmp_path / "images" / IMAGE
    image_dir.mkdir(parents=True)
    (image_dir / "disk.qcow2").write_bytes(b"\0" * 4096)
    (image_dir / "image.json").write_text(json.dumps({
        "id": IMAGE, "name": "guest", "disk": "disk.qcow2",
        "disk_format": "qcow2", "min_disk": 1, "min_ram": 128,
        "virtual_size": 64 * 1024 * 1024}))
    conf = conftest.make_conf(state_path=str(tmp_path))
    database = db_session.Database("sqlite:///%s" % (tmp_path / "c.db"))
    database.upgrade()
    driver = fake.FakeDriver()
    svc = service.CinderService(conf, database, driver,
                                executor=volume_manager.InlineExecutor(),
                                compute=conftest.FakeNova())
    yield conftest.CinderClient(svc.app), driver
    svc.stop()


IMAGE = "3d3d3d3d-0000-4000-8000-000000000001"


def test_volume_from_image(image_stack):
    cinder, driver = image_stack
    created = cinder.post("/volumes", {"volume": {
        "size": 1, "imageRef": IMAGE}})
    assert created.status_code == 202, created.body
    assert "volume_image_metadata" not in created.body["volume"]
    vol = created.body["volume"]["id"]
    shown = cinder.volume(vol)
    assert (shown["status"], shown["bootable"]) == ("available", "true")
    assert driver.images[vol] == IMAGE
    meta = shown["volume_image_metadata"]
    assert (meta["image_id"], meta["image_name"], meta["min_disk"],
            meta["size"]) == (IMAGE, "guest", "1", "4096")
    detail = cinder.get("/volumes/detail").body["volumes"]
    assert detail[0]["volume_image_metadata"] == meta
    _fault(cinder.post("/volumes", {"volume": {
        "size": 1, "imageRef": "nope"}}), 404)
    driver.fail["copy_image_to_volume"] = exception.VolumeBackendError(
        reason="qemu-img failed")
    failed = cinder.post("/volumes", {"volume": {
        "size": 1, "imageRef": IMAGE}}).body["volume"]["id"]
    assert cinder.volume(failed)["status"] == "error"
    assert failed not in driver.volumes


def test_image_must_fit(image_stack, tmp_path):
    import json
    cinder, _driver = image_stack
    record = tmp_path / "images" / IMAGE / "image.json"
    image = json.loads(record.read_text())
    record.write_text(json.dumps(dict(image, min_disk=2)))
    assert "minDisk" in _fault(cinder.post("/volumes", {"volume": {
        "size": 1, "imageRef": IMAGE}}), 400)
    record.write_text(json.dumps(dict(image, status="deactivated")))
    assert "not active" in _fault(cinder.post("/volumes", {"volume": {
        "size": 1, "imageRef": IMAGE}}), 400)
    record.write_text(json.dumps(dict(image, virtual_size=3 * 1024 ** 3)))
    assert "virtual size" in _fault(cinder.post("/volumes", {"volume": {
        "size": 2, "imageRef": IMAGE}}), 400)


def test_image_metadata_actions(image_stack):
    cinder, _driver = image_stack
    vol = cinder.post("/volumes", {"volume": {
        "size": 1, "imageRef": IMAGE}}).body["volume"]["id"]
    set_ = _action(cinder, vol, "os-set_image_metadata", {
        "metadata": {"kernel_id": "k", "ramdisk_id": "r"}})
    assert set_.status_code == 200
    assert set_.body["metadata"]["image_id"] == IMAGE
    assert set_.body["metadata"]["kernel_id"] == "k"
    unset = _action(cinder, vol, "os-unset_image_metadata",
                    {"key": "ramdisk_id"})
    assert unset.status_code == 200 and unset.body is None
    _fault(_action(cinder, vol, "os-unset_image_metadata",
                   {"key": "ramdisk_id"}), 404)
    shown = _action(cinder, vol, "os-show_image_metadata").body["metadata"]
    assert "ramdisk_id" not in shown and shown["kernel_id"] == "k"
    assert cinder.volume(vol)["volume_image_metadata"] == shown
    # Any volume may be given image metadata; it shows from then on.
    plain = cinder.create_volume()
    assert "volume_image_metadata" not in cinder.volume(plain)
    _action(cinder, plain, "os-set_image_metadata",
            {"metadata": {"image_name": "x"}})
    assert cinder.volume(plain)["volume_image_metadata"] == {
        "image_name": "x"}


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
