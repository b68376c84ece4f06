"""Refused attaches and detaches through the compute API (tempest's
AttachVolumeNegativeTest and the compute volumes negatives): the right
code, and nothing changed."""

import uuid

import pytest

from tests.tempest_style.decorators import idempotent_id
from tests.tempest_style.decorators import requires_microversion


@idempotent_id("de6f895d-4891-4581-bf0b-0fa10930be4f")
def test_delete_attached_volume(cloud, servers, cleanup):
    """Cinder refuses to delete an attached volume (400)."""
    volume = cloud.create_volume(cleanup)
    cloud.attach_volume(cleanup, servers[0], volume["id"])
    cloud.volumes.delete_volume(volume["id"], expected=400)
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "in-use"


@idempotent_id("672780c0-e1d5-4021-94da-41834755c4af")
def test_attach_attached_volume_to_same_server(cloud, servers, cleanup):
    volume = cloud.create_volume(cleanup)
    cloud.attach_volume(cleanup, servers[0], volume["id"])
    cloud.compute.attach_volume(servers[0], volume["id"], expected=400)
    listed = cloud.compute.list_volume_attachments(servers[0])[
        "volumeAttachments"]
    assert [a["volumeId"] for a in listed] == [volume["id"]], listed


@idempotent_id("131f53a7-b2b3-46b5-91fe-cb5ae4cd1410")
def test_attach_attached_volume_to_different_server(cloud, servers,
                                                    cleanup):
    volume = cloud.create_volume(cleanup)
    cloud.attach_volume(cleanup, servers[0], volume["id"])
    cloud.compute.attach_volume(servers[1], volume["id"], expected=400)
    assert cloud.compute.list_volume_attachments(servers[1])[
        "volumeAttachments"] == []
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert [a["server_id"] for a in vol["attachments"]] == [servers[0]], vol


@idempotent_id("4dea0ed3-b5af-454b-9923-b0ab05b4744a")
def test_detach_not_attached_volume(cloud, servers, cleanup):
    """Detaching a volume the server does not have is 404."""
    volume = cloud.create_volume(cleanup)
    cloud.compute.detach_volume(servers[0], volume["id"], expected=404)
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "available"


@idempotent_id("a7708b68-5ee8-4cb9-987a-72b0ba4a1e10")
def test_attach_volume_with_bad_device(cloud, servers, cleanup):
    """A device that is no device path is 400, and the volume stays
    available (nothing reserved)."""
    volume = cloud.create_volume(cleanup)
    cloud.compute.attach_volume(servers[0], volume["id"],
                                device="not-a-device", expected=400)
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "available"
    assert cloud.compute.list_volume_attachments(servers[0])[
        "volumeAttachments"] == []


@idempotent_id("5a6a37c6-a5e8-44ac-a943-8591eb9bd66e")
def test_attach_nonexistent_volume(cloud, servers):
    cloud.compute.attach_volume(servers[0], str(uuid.uuid4()),
                                expected=404)


@idempotent_id("c9ba9075-2b88-4397-a39d-cbd862335be6")
def test_update_attached_volume_with_nonexistent_volume_in_uri(
        cloud, servers, cleanup):
    """PUT naming an unknown volume in the URI.

    Tempest sends the swap form (2.1) as admin and expects 404. Since bug
    2112187 swap is allowed to the service role only and the policy check
    comes first, so an admin now gets 403 (older clouds: 404); either way
    nothing changes. From 2.85 the same URI with the same volume in the
    body is an ordinary update, allowed to the owner: 404.
    """
    volume = cloud.create_volume(cleanup)
    missing = str(uuid.uuid4())
    cloud.admin_compute.update_attached_volume(
        servers[0], missing, expected=(403, 404), volumeId=volume["id"])
    requires_microversion(cloud.conf, "compute", "2.85")
    cloud.compute.update_attached_volume(
        servers[0], missing, microversion="2.85", expected=404,
        volumeId=missing, delete_on_termination=True)
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "available"
    assert cloud.compute.list_volume_attachments(servers[0])[
        "volumeAttachments"] == []


_MALFORMED = [
    ("not-json", b"{volumeAttachment:"),
    ("no-envelope", b'{"volumeId": "%(volume)s"}'),
    ("volume-id-not-uuid", b'{"volumeAttachment": {"volumeId": "xyz"}}'),
    ("unknown-key",
     b'{"volumeAttachment": {"volumeId": "%(volume)s", "bogus": 1}}'),
    ("device-not-string",
     b'{"volumeAttachment": {"volumeId": "%(volume)s", "device": 5}}'),
]


@pytest.mark.parametrize("body", [b for _, b in _MALFORMED],
                         ids=[n for n, _ in _MALFORMED])
@idempotent_id("6beafef0-bdb6-4af3-8fa7-da5e5dc1aeb1")
def test_attach_volume_with_malformed_body(cloud, servers, body, cleanup):
    """Bodies no client library would send: 400 with a fault body, and
    the volume is untouched."""
    volume = cloud.create_volume(cleanup)
    code, _, fault = cloud.compute.request(
        "POST", "/servers/%s/os-volume_attachments" % servers[0],
        raw=body % {b"volume": volume["id"].encode()})
    assert code == 400, (code, fault)
    assert fault["badRequest"]["code"] == 400, fault
    assert fault["badRequest"]["message"], fault
    assert cloud.volumes.show_volume(volume["id"])["volume"][
        "status"] == "available"



@idempotent_id("49a7e7ee-6882-4b05-aaf7-c60a04237f32")
def test_server_detach_rules(cloud, servers, cleanup):
    """A user may not tear down, behind Nova's back, an attachment Nova
    uses (OSSA-2023-003; tempest's test_server_detach_rules and
    test_old_versions_reject): os-detach, os-force_detach and DELETE
    /attachments/{id} are refused (401, 403 or 409) and nothing changes."""
    volume = cloud.create_volume(cleanup)
    cloud.attach_volume(cleanup, servers[0], volume["id"])
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    attachment_id = vol["attachments"][0]["attachment_id"]
    refused = (401, 403, 409)
    cloud.volumes.detach_volume(volume["id"], attachment_id=attachment_id,
                                expected=refused)
    cloud.volumes.force_detach_volume(volume["id"], connector=None,
                                      attachment_id=attachment_id,
                                      expected=refused)
    cloud.volumes.request("DELETE", "/attachments/%s" % attachment_id,
                          microversion="3.27", expected=refused)
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert vol["status"] == "in-use", vol
    assert [a["attachment_id"] for a in vol["attachments"]] == [
        attachment_id], vol
    assert [a["volumeId"] for a in cloud.compute.list_volume_attachments(
        servers[0])["volumeAttachments"]] == [volume["id"]]
    cloud.detach_volume(servers[0], volume["id"])
