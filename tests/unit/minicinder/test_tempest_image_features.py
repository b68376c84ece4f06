"""What upstream tempest's volume tests exercise of volumes made from
images: the image's metadata on the volume, images that do not fit, the
image-metadata actions (fake driver, in-process app, an image laid out
as devstack's lib/image does)."""

import pytest

from minicinder import exception
from tests.unit.minicinder.tempest_actions import action as _action
from tests.unit.minicinder.tempest_actions import fault as _fault

IMAGE = "3d3d3d3d-0000-4000-8000-000000000001"


@pytest.fixture
def image_stack(tmp_path):
    """A stack whose state path holds one registered image (1 GiB
    min_disk, a small disk file), as devstack's lib/image lays it out."""
    import json

    from minicinder import service
    from minicinder.db import session as db_session
    from minicinder.volume import manager as volume_manager
    from minicinder.volume.drivers import fake
    from tests.support import minicinder_inprocess as inprocess

    image_dir = tmp_path / "images" / IMAGE
    image_dir.mkdir(parents=True)
    (image_dir / "disk.qcow2").write_bytes(b"\0" * 4096)
    (image_dir / "image.json").write_text(json.dumps({
        "id": IMAGE, "name": "guest", "disk": "disk.qcow2",
        "disk_format": "qcow2", "min_disk": 1, "min_ram": 128,
        "virtual_size": 64 * 1024 * 1024}))
    conf = inprocess.make_conf(state_path=str(tmp_path))
    database = db_session.Database("sqlite:///%s" % (tmp_path / "c.db"))
    database.upgrade()
    driver = fake.FakeDriver()
    svc = service.CinderService(conf, database, driver,
                                executor=volume_manager.InlineExecutor(),
                                compute=inprocess.FakeNova())
    yield inprocess.CinderClient(svc.app), driver
    svc.stop()


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
