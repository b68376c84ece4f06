"""A volume across its server's life (tempest's compute/servers/
test_delete_server.py and test_device_tagging.py)."""

from tests.tempest_style import waiters
from tests.tempest_style.decorators import idempotent_id
from tests.tempest_style.decorators import requires_microversion

TAG = "volume-tag"


@idempotent_id("3c84028e-28b1-4b72-8806-d2a8087f38d1")
def test_delete_server_while_in_attached_volume(cloud, cleanup):
    """Deleting a server frees its volume: the volume becomes available
    (delete_on_termination is false) and keeps its data path clean."""
    server = cloud.create_server(cleanup, name="delete")
    volume = cloud.create_volume(cleanup)
    cloud.attach_volume(cleanup, server["id"], volume["id"])
    cloud.compute.delete_server(server["id"], expected=204)
    waiters.wait_for_server_deleted(cloud.compute, server["id"],
                                    timeout=cloud.conf.build_timeout)
    waiters.wait_for_volume_status(cloud.volumes, volume["id"], "available",
                                   timeout=cloud.conf.build_timeout)
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert vol["attachments"] == [], vol


@idempotent_id("165f3542-cddb-4d77-9e8e-4fbcebb931c7")
def test_tagged_attachment(cloud, servers, cleanup):
    """2.49 accepts a tag; from 2.70 every view shows it; detach frees the
    volume. (Tempest reads the tag from the metadata API or the config
    drive, which ministack's guests do not have.)"""
    requires_microversion(cloud.conf, "compute", "2.70")
    server_id = servers[1]
    volume = cloud.create_volume(cleanup)
    posted = cloud.attach_volume(cleanup, server_id, volume["id"],
                                 microversion="2.70", tag=TAG)
    assert posted["tag"] == TAG, posted
    listed = cloud.compute.list_volume_attachments(
        server_id, microversion="2.70")["volumeAttachments"]
    assert [a.get("tag") for a in listed] == [TAG], listed
    shown = cloud.compute.show_volume_attachment(
        server_id, volume["id"], microversion="2.70")["volumeAttachment"]
    assert shown == posted, (shown, posted)
    old = cloud.compute.show_volume_attachment(
        server_id, volume["id"], microversion="2.69")["volumeAttachment"]
    assert "tag" not in old, old
    cloud.detach_volume(server_id, volume["id"])


@idempotent_id("b377c9b7-f12a-4efa-b5cd-ed3518fe04bf")
def test_tagged_attachment_before_2_49(cloud, servers, cleanup):
    """Before 2.49 ``tag`` is an unknown key: 400, nothing reserved."""
    volume = cloud.create_volume(cleanup)
    cloud.compute.attach_volume(servers[1], volume["id"], tag=TAG,
                                microversion="2.48", expected=400)
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "available"
