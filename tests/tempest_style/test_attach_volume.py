"""Attach and detach through the compute API (tempest's
compute/volumes/test_attach_volume.py, AttachVolumeTestJSON), checked in
the guest too: its disk count and the serials under /sys/block/vd*/serial.

Requests carry no microversion (2.1), as tempest's base class sends.
"""

from tests.tempest_style import waiters
from tests.tempest_style.decorators import idempotent_id
from tests.tempest_style.decorators import requires_microversion


@idempotent_id("090bbaf9-d737-447a-8576-35befd628be0")
def test_attach_detach_volume(cloud, servers, guest_of, cleanup):
    """Attach, stop/start with the volume (the guest sees one disk more),
    detach, stop/start again (the guest is back to its disks)."""
    server_id = servers[0]
    guest = guest_of(server_id)
    before = len(guest.disks()) if guest else None
    volume = cloud.create_volume(cleanup)
    attachment = cloud.attach_volume(cleanup, server_id, volume["id"],
                                     device="/dev/vdb")
    assert attachment["volumeId"] == volume["id"]
    assert attachment["serverId"] == server_id

    cloud.stop_server(server_id)
    cloud.start_server(server_id)
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert vol["status"] == "in-use", vol
    if guest:
        guest.wait_for_agent()
        guest.wait_for_disk_count(before + 1)
        assert guest.device_for(volume["id"])

    cloud.detach_volume(server_id, attachment["volumeId"])
    cloud.stop_server(server_id)
    cloud.start_server(server_id)
    if guest:
        guest.wait_for_agent()
        disks = guest.wait_for_disk_count(before)
        assert not any(s and volume["id"].startswith(s)
                       for s in disks.values()), disks


@idempotent_id("6492023a-f0e6-4cda-b0fd-a571dfef336e")
def test_list_get_volume_attachments(cloud, servers, guest_of, cleanup):
    """The POST response is exactly an entry of the list; show agrees;
    a second volume makes two; the guest sees each volume's serial come
    and go."""
    server_id = servers[0]
    guest = guest_of(server_id)
    volume = cloud.create_volume(cleanup)
    attachment = cloud.attach_volume(cleanup, server_id, volume["id"])
    listed = cloud.compute.list_volume_attachments(server_id)[
        "volumeAttachments"]
    assert len(listed) == 1, listed
    assert attachment in listed, (attachment, listed)
    assert set(attachment) == {"id", "volumeId", "serverId", "device"}, \
        attachment

    shown = cloud.compute.show_volume_attachment(
        server_id, attachment["id"])["volumeAttachment"]
    assert shown["serverId"] == server_id
    assert shown["volumeId"] == volume["id"]
    assert shown["id"] == attachment["id"]
    assert shown == attachment
    if guest:
        # The guest names the disk itself (the API's device is a hint),
        # so it is found by its serial, not by name.
        first = guest.device_for(volume["id"])

    volume_2 = cloud.create_volume(cleanup)
    attachment_2 = cloud.attach_volume(cleanup, server_id, volume_2["id"])
    listed = cloud.compute.list_volume_attachments(server_id)[
        "volumeAttachments"]
    assert len(listed) == 2, listed
    assert attachment_2 in listed, (attachment_2, listed)
    if guest:
        assert guest.device_for(volume_2["id"]) != first

    for att in (attachment, attachment_2):
        cloud.detach_volume(server_id, att["volumeId"])
    assert cloud.compute.list_volume_attachments(server_id)[
        "volumeAttachments"] == []
    if guest:
        for vol in (volume, volume_2):
            _wait_serial_gone(guest, vol["id"])


def _wait_serial_gone(guest, volume_id, timeout=60):
    waiters.wait_for(
        "guest %s to stop seeing volume %s" % (guest.domain, volume_id),
        guest.disks, lambda disks: not any(
            s and volume_id.startswith(s) for s in disks.values()),
        timeout=timeout, interval=1)


@idempotent_id("abb0f5f9-5996-4959-ad34-daefb7c12703")
def test_list_volume_attachments_2_89(cloud, servers, cleanup):
    """From 2.89 the list names the Cinder attachment and the BDM instead
    of the legacy ``id``; the attachment id is the one Cinder reports."""
    requires_microversion(cloud.conf, "compute", "2.89")
    server_id = servers[0]
    volume = cloud.create_volume(cleanup)
    cloud.attach_volume(cleanup, server_id, volume["id"])
    listed = cloud.compute.list_volume_attachments(
        server_id, microversion="2.89")["volumeAttachments"]
    assert len(listed) == 1, listed
    entry = listed[0]
    assert "id" not in entry, entry
    assert {"attachment_id", "bdm_uuid", "tag",
            "delete_on_termination"} <= set(entry), entry
    cinder = cloud.volumes.show_volume(volume["id"])["volume"]
    assert [a["attachment_id"] for a in cinder["attachments"]] == [
        entry["attachment_id"]], (cinder["attachments"], entry)
    shown = cloud.compute.show_volume_attachment(
        server_id, volume["id"], microversion="2.89")["volumeAttachment"]
    assert shown == entry
    cloud.detach_volume(server_id, volume["id"])


@idempotent_id("1df0cfd7-e07b-4f53-baa5-05f2c8bbc6f7")
def test_update_volume_attachment_delete_on_termination(cloud, servers,
                                                        cleanup):
    """2.85: PUT may change delete_on_termination (and only that)."""
    requires_microversion(cloud.conf, "compute", "2.85")
    server_id = servers[0]
    volume = cloud.create_volume(cleanup)
    attachment = cloud.attach_volume(cleanup, server_id, volume["id"],
                                     microversion="2.85")
    assert attachment["delete_on_termination"] is False, attachment
    cloud.compute.update_attached_volume(
        server_id, volume["id"], microversion="2.85",
        volumeId=volume["id"], delete_on_termination=True)
    shown = cloud.compute.show_volume_attachment(
        server_id, volume["id"], microversion="2.85")["volumeAttachment"]
    assert shown["delete_on_termination"] is True, shown
    # Any other field that differs is refused (400), nothing changes.
    cloud.compute.update_attached_volume(
        server_id, volume["id"], microversion="2.85", expected=400,
        volumeId=volume["id"], delete_on_termination=False,
        device="/dev/vdz")
    shown = cloud.compute.show_volume_attachment(
        server_id, volume["id"], microversion="2.85")["volumeAttachment"]
    assert shown["delete_on_termination"] is True, shown
    cloud.detach_volume(server_id, volume["id"])
