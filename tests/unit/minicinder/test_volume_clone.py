"""A volume created from another (``source_volid``): the copy, and the
checks upstream makes first (fake driver, in-process app; the LVM copy
itself is tests/functional/minicinder/test_volume_clone.py)."""

import pytest

from minicinder import exception
from minicinder.db import api as db
from tests.support.minicinder_inprocess import connector
from tests.unit.minicinder.tempest_actions import action as _action
from tests.unit.minicinder.tempest_actions import fault as _fault

INSTANCE = "5e5e5e5e-0000-4000-8000-000000000001"


def _clone(cinder, source, **fields):
    return cinder.post("/volumes", {"volume": dict(
        fields, source_volid=source)})


def test_a_clone_copies_the_source(cinder, driver):
    source = cinder.create_volume(size=2, name="src")
    created = _clone(cinder, source, name="copy")
    assert created.status_code == 202, created.body
    assert created.body["volume"]["size"] == 2      # the source's
    clone = created.body["volume"]["id"]
    shown = cinder.volume(clone)
    assert (shown["status"], shown["source_volid"], shown["size"],
            shown["bootable"]) == ("available", source, 2, "false")
    assert shown["volume_type"] == cinder.volume(source)["volume_type"]
    assert driver.clones == {clone: source}
    assert driver.volumes[clone] == 2
    # A larger clone is allowed; the source is untouched.
    bigger = _clone(cinder, source, size=3).body["volume"]["id"]
    assert cinder.volume(bigger)["size"] == 3
    assert cinder.volume(source)["status"] == "available"
    assert cinder.get("/volumes/summary", version="3.12").body[
        "volume-summary"]["total_size"] == 7


def test_an_in_use_source_may_be_cloned(cinder, driver):
    source = cinder.create_volume()
    attachment = cinder.reserve(source, INSTANCE)["id"]
    assert cinder.put("/attachments/%s" % attachment, {"attachment": {
        "connector": connector()}}).status_code == 200
    assert cinder.post("/attachments/%s/action" % attachment,
                       {"os-complete": {}}).status_code == 204
    assert cinder.volume(source)["status"] == "in-use"
    clone = _clone(cinder, source).body["volume"]["id"]
    assert cinder.volume(clone)["status"] == "available"
    assert cinder.volume(clone)["attachments"] == []


def test_a_bootable_source_gives_a_bootable_clone(cinder, stack):
    _cinder, _driver, svc = stack
    source = cinder.create_volume()
    with svc.database.write() as session:
        db.volume_update(session, source, {"bootable": True})
        db.volume_glance_metadata_create(session, source, {
            "image_id": "i-1", "image_name": "guest"})
    clone = _clone(cinder, source).body["volume"]["id"]
    shown = cinder.volume(clone)
    assert shown["bootable"] == "true"
    assert shown["volume_image_metadata"] == {
        "image_id": "i-1", "image_name": "guest"}


@pytest.mark.parametrize("status", ["error", "deleting", "creating",
                                    "reserved", "maintenance"])
def test_a_source_must_be_available_or_in_use(cinder, driver, status):
    source = cinder.create_volume()
    _action(cinder, source, "os-reset_status", {"status": status})
    message = _fault(_clone(cinder, source), 400)
    assert "Originating source volume status must be one of " \
           "'available, in-use' values" in message
    assert list(driver.volumes) == [source]


def test_a_clone_is_never_smaller_than_its_source(cinder, driver):
    source = cinder.create_volume(size=2)
    message = _fault(_clone(cinder, source, size=1), 400)
    assert message == ("Invalid input received: Volume size '1'GB cannot "
                       "be smaller than original volume size 2GB. They "
                       "must be >= original volume size.")
    assert list(driver.volumes) == [source]


def test_only_one_source_and_the_same_zone(cinder):
    source = cinder.create_volume()
    message = _fault(_clone(cinder, source, size=1,
                            imageRef="3d3d3d3d-0000-4000-8000-000000000001"),
                     400)
    assert "May specify only one of source_volid, imageRef" in message
    message = _fault(_clone(cinder, source, availability_zone="elsewhere"),
                     400)
    assert message == ("Invalid input received: Volume must be in the same "
                       "availability zone as the source volume")


def test_another_projects_volume_is_not_found(cinder):
    source = cinder.create_volume()
    other = cinder.as_user("eve", project="p-eve")
    _fault(_clone(other, source), 404)
    assert "is not a 'uuid'" in _fault(_clone(cinder, "not-a-uuid"), 400)


def test_size_is_needed_without_a_source(cinder):
    for body in ({"name": "x"}, {"name": "x", "size": None}):
        message = _fault(cinder.post("/volumes", {"volume": body}), 400)
        assert "Invalid volume size provided for create request: null" \
            in message


def test_a_null_size_is_the_sources(cinder):
    """cinderclient sends ``"size": null`` when none is given."""
    source = cinder.create_volume(size=2)
    created = _clone(cinder, source, size=None)
    assert created.status_code == 202, created.body
    assert created.body["volume"]["size"] == 2


def test_a_copy_that_fails_leaves_an_error_volume_and_no_device(cinder,
                                                                 driver):
    source = cinder.create_volume()
    driver.fail["create_cloned_volume"] = exception.VolumeBackendError(
        reason="dd failed")
    clone = _clone(cinder, source).body["volume"]["id"]
    assert cinder.volume(clone)["status"] == "error"
    assert clone not in driver.volumes
    assert cinder.volume(source)["status"] == "available"
    assert cinder.delete("/volumes/%s" % clone).status_code == 202


def test_a_source_gone_before_the_copy_is_not_copied(stack):
    """The API saw the source available; by the time the backend job
    holds the source's lock it is being deleted: the clone errors."""
    cinder, driver, svc = stack
    source = cinder.create_volume()
    original = svc.manager.create_volume_async

    def delete_first(volume_id, image=None, source_volid=None):
        with svc.database.write() as session:
            db.volume_update(session, source_volid, {"status": "deleting"})
        return original(volume_id, image, source_volid)

    svc.manager.create_volume_async = delete_first
    clone = _clone(cinder, source).body["volume"]["id"]
    assert cinder.volume(clone)["status"] == "error"
    assert clone not in driver.volumes and clone not in driver.clones
