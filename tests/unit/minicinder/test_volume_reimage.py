"""3.68 ``os-reimage``: an image written over an existing volume
(fake driver, in-process app, an image laid out as devstack's lib/image
does).

The statuses as upstream: available/error (and reserved with
``reimage_reserved``) -> downloading -> back; a reserved volume's server
is told with ``volume-reimaged``; a failed copy is ``error`` and tells
nobody; every refusal changes nothing.
"""

import json

import pytest

from minicinder import exception
from minicinder import service
from minicinder.db import session as db_session
from minicinder.volume import manager as volume_manager
from minicinder.volume.drivers import fake
from tests.support import minicinder_inprocess as inprocess

IMAGE = "3d3d3d3d-0000-4000-8000-000000000001"
BIG_IMAGE = "3d3d3d3d-0000-4000-8000-000000000002"
INSTANCE = "51c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b99"


def _register(root, image_id, virtual_size):
    image_dir = root / "images" / image_id
    image_dir.mkdir(parents=True)
    (image_dir / "disk.qcow2").write_bytes(b"\0" * 4096)
    (image_dir / "image.json").write_text(json.dumps({
        "id": image_id, "name": "guest-%s" % image_id[-1],
        "disk": "disk.qcow2", "disk_format": "qcow2", "min_disk": 1,
        "virtual_size": virtual_size}))


@pytest.fixture
def reimage_stack(tmp_path):
    """``(client, driver, nova)`` with two registered images: one that
    fits a 1 GiB volume and one of 3 GiB."""
    _register(tmp_path, IMAGE, 64 * 1024 * 1024)
    _register(tmp_path, BIG_IMAGE, 3 * 1024 ** 3)
    conf = inprocess.make_conf(state_path=str(tmp_path))
    database = db_session.Database("sqlite:///%s" % (tmp_path / "c.db"))
    database.upgrade()
    driver = fake.FakeDriver()
    nova = inprocess.FakeNova()
    svc = service.CinderService(conf, database, driver,
                                executor=volume_manager.InlineExecutor(),
                                compute=nova)
    yield inprocess.CinderClient(svc.app), driver, nova
    svc.stop()


def _reimage(cinder, vol, image=IMAGE, version="3.68", **args):
    return cinder.post("/volumes/%s/action" % vol, {"os-reimage": dict(
        {"image_id": image}, **args)}, version=version)


def test_reimage_available_volume(reimage_stack):
    cinder, driver, nova = reimage_stack
    vol = cinder.create_volume()
    resp = _reimage(cinder, vol)
    assert resp.status_code == 202, resp.body
    shown = cinder.volume(vol)
    assert shown["status"] == "available"
    assert shown["volume_image_metadata"]["image_id"] == IMAGE
    assert driver.images[vol] == IMAGE
    assert nova.reimaged == []


def test_reimage_reserved_volume_tells_nova(reimage_stack):
    cinder, driver, nova = reimage_stack
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    assert _reimage(cinder, vol, reimage_reserved=True).status_code == 202
    assert cinder.volume(vol)["status"] == "reserved"
    assert driver.images[vol] == IMAGE
    assert nova.reimaged == [([INSTANCE], vol)]


def test_reserved_needs_reimage_reserved(reimage_stack):
    cinder, driver, nova = reimage_stack
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    resp = _reimage(cinder, vol)
    assert resp.status_code == 400
    assert "must be available or error" in \
        resp.body["badRequest"]["message"]
    assert cinder.volume(vol)["status"] == "reserved"
    assert vol not in driver.images


def test_reimage_needs_3_68(reimage_stack):
    cinder, _, _ = reimage_stack
    vol = cinder.create_volume()
    resp = _reimage(cinder, vol, version="3.67")
    assert resp.status_code == 400
    assert "no such action" in resp.body["badRequest"]["message"]


@pytest.mark.parametrize("args", [
    {"image_id": "not-a-uuid"}, {"reimage_reserved": "maybe"},
    {"bogus": 1}])
def test_reimage_bad_body(reimage_stack, args):
    cinder, _, _ = reimage_stack
    vol = cinder.create_volume()
    body = dict({"image_id": IMAGE}, **args)
    resp = cinder.post("/volumes/%s/action" % vol, {"os-reimage": body},
                       version="3.68")
    assert resp.status_code == 400
    assert cinder.volume(vol)["status"] == "available"


def test_reimage_image_too_big_is_400(reimage_stack):
    cinder, driver, _ = reimage_stack
    vol = cinder.create_volume()
    resp = _reimage(cinder, vol, image=BIG_IMAGE)
    assert resp.status_code == 400
    assert "doesn't fit" in resp.body["badRequest"]["message"]
    assert cinder.volume(vol)["status"] == "available"
    assert vol not in driver.images


def test_reimage_unknown_image_is_404(reimage_stack):
    cinder, _, _ = reimage_stack
    vol = cinder.create_volume()
    resp = _reimage(cinder, vol,
                    image="3d3d3d3d-0000-4000-8000-00000000dead")
    assert resp.status_code == 404
    assert cinder.volume(vol)["status"] == "available"


def test_reimage_in_use_volume_is_400(reimage_stack):
    cinder, _, _ = reimage_stack
    vol = cinder.create_volume()
    resp = cinder.post("/volumes/%s/action" % vol, {"os-attach": {
        "instance_uuid": INSTANCE, "mountpoint": "/dev/vdb"}})
    assert resp.status_code == 202
    resp = _reimage(cinder, vol, reimage_reserved=True)
    assert resp.status_code == 400
    assert cinder.volume(vol)["status"] == "in-use"


def test_reimage_of_a_volume_held_twice_is_409(reimage_stack):
    cinder, _, _ = reimage_stack
    response = cinder.post("/types", {"volume_type": {
        "name": "multiattach", "extra_specs": {"multiattach": "<is> True"}}})
    assert response.status_code == 200, response.body
    vol = cinder.create_volume(volume_type="multiattach")
    assert cinder.post("/volumes/%s/action" % vol, {"os-attach": {
        "instance_uuid": INSTANCE, "mountpoint": "/dev/vdb"}}) \
        .status_code == 202
    cinder.reserve(vol, "61c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b99")
    resp = _reimage(cinder, vol, reimage_reserved=True)
    assert resp.status_code == 409
    assert resp.body["conflictingRequest"]["message"] == (
        "Cannot re-image a volume which is attached to more than one "
        "server.")


def test_failed_copy_is_error_and_tells_nobody(reimage_stack):
    cinder, driver, nova = reimage_stack
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    driver.fail["copy_image_to_volume"] = exception.VolumeBackendError(
        reason="qemu-img failed")
    assert _reimage(cinder, vol, reimage_reserved=True).status_code == 202
    assert cinder.volume(vol)["status"] == "error"
    assert nova.reimaged == []


def test_nova_down_leaves_the_volume_reimaged(reimage_stack):
    cinder, driver, nova = reimage_stack
    vol = cinder.create_volume()
    cinder.reserve(vol, INSTANCE)
    nova.down = True
    assert _reimage(cinder, vol, reimage_reserved=True).status_code == 202
    assert cinder.volume(vol)["status"] == "reserved"
    assert driver.images[vol] == IMAGE
