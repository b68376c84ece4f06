"""One volume on two servers (tempest's AttachVolumeMultiAttachTest and the
cinder-tempest-plugin's test_volume_multiattach.py), at compute 2.60.

The volume's type carries ``multiattach="<is> True"``; the type is made by
the admin, the volumes by the user.
"""

import os

import pytest

from tests.tempest_style.decorators import idempotent_id
from tests.tempest_style.decorators import requires_microversion

MV = "2.60"


@pytest.fixture
def multiattach_volume(cloud, cleanup):
    if not cloud.conf.multiattach:
        pytest.skip("multiattach is disabled ([volume] multiattach)")
    requires_microversion(cloud.conf, "compute", MV)
    vtype = cloud.create_multiattach_type(cleanup)
    volume = cloud.create_volume(cleanup, volume_type=vtype["name"])
    assert volume["multiattach"] is True, volume
    return volume


def _attach_both(cloud, cleanup, servers, volume):
    return [cloud.attach_volume(cleanup, sid, volume["id"],
                                microversion=MV, multiattach=True)
            for sid in servers]


@idempotent_id("6e2b54a3-a9e6-43c0-9191-36318b268b74")
def test_list_get_volume_attachments_multiattach(cloud, servers, cleanup,
                                                 multiattach_volume):
    volume = multiattach_volume
    posted = _attach_both(cloud, cleanup, servers, volume)
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert vol["status"] == "in-use", vol
    server_ids = [a["server_id"] for a in vol["attachments"]]
    assert sorted(server_ids) == sorted(servers), vol["attachments"]
    for server_id, attachment in zip(servers, posted, strict=True):
        listed = cloud.compute.list_volume_attachments(
            server_id, microversion=MV)["volumeAttachments"]
        assert len(listed) == 1, listed
        assert listed[0] == attachment, (listed[0], attachment)
    # Detach one: the other attachment keeps the volume in-use.
    cloud.detach_volume(servers[0], volume["id"], status="in-use")
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert [a["server_id"] for a in vol["attachments"]] == [servers[1]]
    cloud.detach_volume(servers[1], volume["id"], status="available")


@idempotent_id("ea331c4f-c885-44ca-99cf-33963b0d2cb1")
def test_multiattach_data_integrity(cloud, servers, guest_of, cleanup,
                                    requires_guest, multiattach_volume):
    """Data server 1 writes to the shared disk reads back on server 2."""
    volume = multiattach_volume
    _attach_both(cloud, cleanup, servers, volume)
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert sorted(a["server_id"] for a in vol["attachments"]) == \
        sorted(servers)
    writer, reader = guest_of(servers[0]), guest_of(servers[1])
    data = os.urandom(4096)
    writer.write(writer.device_for(volume["id"]), data)
    assert reader.read(reader.device_for(volume["id"]), len(data)) == data
    for server_id in servers:
        cloud.detach_volume(server_id, volume["id"],
                            status="in-use" if server_id == servers[0]
                            else "available")


@idempotent_id("6ddd7459-2fa5-4ff8-ab88-193ab2cb5122")
def test_volume_multiattach_same_host_negative(cloud, servers, cleanup,
                                               multiattach_volume):
    """A second attach of a multiattach volume to the same server: 400."""
    volume = multiattach_volume
    cloud.attach_volume(cleanup, servers[0], volume["id"], microversion=MV,
                        multiattach=True)
    cloud.compute.attach_volume(servers[0], volume["id"], microversion=MV,
                                expected=400)
    vol = cloud.volumes.show_volume(volume["id"])["volume"]
    assert [a["server_id"] for a in vol["attachments"]] == [servers[0]], vol


@idempotent_id("4a13313b-362f-441a-b752-45d262e1f87c")
def test_attach_multiattach_volume_below_2_60(cloud, servers, cleanup,
                                              multiattach_volume):
    """Before 2.60 a multiattach volume cannot be attached (400), so old
    clients never share a disk without knowing."""
    cloud.compute.attach_volume(servers[0], multiattach_volume["id"],
                                microversion="2.59", expected=400)
    assert cloud.volumes.show_volume(multiattach_volume["id"])["volume"][
        "status"] == "available"
