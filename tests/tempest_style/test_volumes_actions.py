"""The legacy volume actions (tempest's volume/test_volumes_actions.py,
volume/test_volumes_negative.py and volume/admin/test_volumes_actions.py):
Cinder-only bookkeeping, no compute involved, as those tests do.

Tempest passes the id of a real server as ``instance_uuid``; so does this
suite (the shared server), though Cinder never asks Nova about it.
"""

import uuid

import pytest

from tests.tempest_style import waiters
from tests.tempest_style.decorators import idempotent_id

MOUNTPOINT = "/dev/vdb"


def _os_attach(cloud, cleanup, volume_id, server_id):
    """os-attach, wait for in-use; the cleanup os-detaches if still so."""
    cloud.volumes.attach_volume(volume_id, instance_uuid=server_id,
                                mountpoint=MOUNTPOINT)
    cleanup.add(_detach_if_in_use, cloud, volume_id)
    waiters.wait_for_volume_status(cloud.volumes, volume_id, "in-use")


def _detach_if_in_use(cloud, volume_id):
    vol = cloud.volumes.show_volume(volume_id)["volume"]
    if vol["status"] == "in-use":
        cloud.volumes.detach_volume(volume_id)
        waiters.wait_for_volume_status(cloud.volumes, volume_id,
                                       "available")


@idempotent_id("7a61838b-b77e-45da-812f-2f08a59e7258")
def test_attach_detach_volume_to_instance(cloud, servers, cleanup):
    volume = cloud.create_volume(cleanup)
    _os_attach(cloud, cleanup, volume["id"], servers[0])
    cloud.volumes.detach_volume(volume["id"])
    waiters.wait_for_volume_status(cloud.volumes, volume["id"], "available")
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "attachments"] == []


@idempotent_id("4d97fcc3-6ea6-495a-a767-78f463bcf447")
def test_get_volume_attachment(cloud, servers, cleanup):
    """The volume's attachments entry after os-attach: the mountpoint as
    device, the server, and ``id`` = the volume id (upstream's quirk)."""
    volume = cloud.create_volume(cleanup)
    _os_attach(cloud, cleanup, volume["id"], servers[0])
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert len(vol["attachments"]) == 1, vol["attachments"]
    attachment = vol["attachments"][0]
    assert attachment["device"] == MOUNTPOINT
    assert attachment["server_id"] == servers[0]
    assert attachment["id"] == volume["id"]
    assert attachment["volume_id"] == volume["id"]
    assert attachment["attachment_id"]


@idempotent_id("b52a3a37-b83d-41f9-95b9-df6e336f8cd2")
def test_reserve_unreserve_volume(cloud, cleanup):
    volume = cloud.create_volume(cleanup)
    cloud.volumes.reserve_volume(volume["id"])
    cleanup.add(cloud.volumes.unreserve_volume, volume["id"],
                expected=(202, 400))
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "attaching"
    cloud.volumes.unreserve_volume(volume["id"])
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "available"


@idempotent_id("52a1e450-77e9-4b60-997b-3284fe48ae56")
def test_reserve_volume_with_negative_volume_status(cloud, cleanup):
    """A second os-reserve of a reserved volume is 400."""
    volume = cloud.create_volume(cleanup)
    cloud.volumes.reserve_volume(volume["id"])
    cleanup.add(cloud.volumes.unreserve_volume, volume["id"])
    cloud.volumes.reserve_volume(volume["id"], expected=400)
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "attaching"


_NONEXISTENT = [
    ("os-attach", {"instance_uuid": "%(server)s", "mountpoint": MOUNTPOINT}),
    ("os-detach", {}),
    ("os-reserve", {}),
    ("os-unreserve", {}),
]


@pytest.mark.parametrize("action,body", _NONEXISTENT,
                         ids=[a for a, _ in _NONEXISTENT])
@idempotent_id("6aa8df05-eda5-4995-957a-8466935eaee2")
def test_action_with_nonexistent_volume_id(cloud, servers, action, body):
    """test_{attach,detach,reserve,unreserve}_volume*_with_nonexistent_id:
    every verb on an unknown volume id is 404."""
    body = {k: v % {"server": servers[0]} for k, v in body.items()}
    cloud.volumes.volume_action(str(uuid.uuid4()), action, body,
                                expected=404)


@idempotent_id("58534dc4-a9c3-4828-903d-cc89dd612314")
def test_detach_volumes_with_invalid_volume_id(cloud):
    """A volume id that is no UUID at all is 404 too."""
    cloud.volumes.detach_volume("xxx", expected=404)


@idempotent_id("8cd07c1c-f923-46ba-937c-c526ddd139b2")
def test_force_detach_volume(cloud, servers, cleanup):
    """Admin: os-attach, reset-status error, os-force_detach of that
    attachment → available with no attachments left."""
    volume = cloud.create_volume(cleanup)
    _os_attach(cloud, cleanup, volume["id"], servers[0])
    attachment = cloud.volumes.show_volume(volume["id"])["volume"][
        "attachments"][0]
    cloud.admin_volumes.reset_volume_status(volume["id"], status="error")
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "error"
    cloud.admin_volumes.force_detach_volume(
        volume["id"], connector=None,
        attachment_id=attachment["attachment_id"])
    waiters.wait_for_volume_status(cloud.volumes, volume["id"], "available")
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert "attachments" in vol
    assert vol["attachments"] == [], vol


@idempotent_id("b33ab2de-cc9c-427b-91c2-01608b9b1487")
def test_force_detach_volume_as_user_is_forbidden(cloud, servers, cleanup):
    """os-force_detach is admin-only (403) and changes nothing."""
    volume = cloud.create_volume(cleanup)
    _os_attach(cloud, cleanup, volume["id"], servers[0])
    attachment = cloud.volumes.show_volume(volume["id"])["volume"][
        "attachments"][0]
    cloud.volumes.force_detach_volume(
        volume["id"], connector=None,
        attachment_id=attachment["attachment_id"], expected=403)
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert vol["status"] == "in-use", vol
    assert len(vol["attachments"]) == 1, vol
