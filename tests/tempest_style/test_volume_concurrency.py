"""Concurrent attaches of N volumes to one server (the cinder-tempest-
plugin's test_volume_concurrency.py → test_attach_volumes_to_server).

N is ``[volume] concurrent_attachments``.
"""

from concurrent import futures

from tests.tempest_style import waiters
from tests.tempest_style.decorators import idempotent_id


@idempotent_id("2cc2b4a9-c281-4cec-bb24-e0a2ebd889c2")
def test_attach_volumes_to_server(cloud, servers, guest_of, cleanup):
    count = cloud.conf.concurrent_attachments
    server_id = servers[1]
    guest = guest_of(server_id)
    before = len(guest.disks()) if guest else None
    created = [cloud.create_volume(cleanup, wait=False)
               for _ in range(count)]
    for volume in created:
        waiters.wait_for_volume_status(cloud.volumes, volume["id"],
                                       "available")
    with futures.ThreadPoolExecutor(count) as pool:
        posted = list(pool.map(
            lambda v: cloud.attach_volume(cleanup, server_id, v["id"]),
            created))
    assert sorted(a["volumeId"] for a in posted) == sorted(
        v["id"] for v in created)
    devices = [a["device"] for a in posted]
    assert len(set(devices)) == count, devices
    for volume in created:
        vol = cloud.volumes.show_volume(volume["id"])["volume"]
        assert vol["status"] == "in-use", vol
    listed = cloud.compute.list_volume_attachments(server_id)[
        "volumeAttachments"]
    assert len(listed) == count, listed
    if guest:
        guest.wait_for_disk_count(before + count)
        for volume in created:
            guest.device_for(volume["id"])
    with futures.ThreadPoolExecutor(count) as pool:
        list(pool.map(lambda v: cloud.detach_volume(server_id, v["id"]),
                      created))
    if guest:
        guest.wait_for_disk_count(before)
