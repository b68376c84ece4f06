"""Shelve, offload and unshelve on live guests with their volumes.

A private stack (``[DEFAULT] shelved_offload_time`` 0, upstream's
default): each shelve goes straight to SHELVED_OFFLOADED. While
offloaded, every ledger shows a volume parked: Cinder's volume
``reserved`` with one attachment that has no connector and no
connection_info, nova's BDM naming that attachment with no
connection_info, no domain on the host, and no initiator in the
volume's tgt ACL. A volume attached while offloaded is in-use at once,
exported nowhere, with no device. After unshelve every volume is in-use
again, the guest sees them and the data written before the shelve is
intact. Every test deletes what it made.
"""

import os

import pytest

from ministack import images
from tests.functional.minicompute import test_boot_from_volume as bfv
from tests.support import journey
from tests.support import private_stack
from tests.support import waiting

pytestmark = pytest.mark.slow

DATA = b"shelved and back " * 16


def _action(stack, sid, body):
    resp = stack["nova"].req("POST", "/servers/%s/action" % sid, json=body)
    assert resp.status_code == 202, resp.text


def _domain_defined(stack, sid):
    from ministack import executor
    out, _ = executor.execute("virsh", "-c", "qemu:///system", "list",
                              "--all", "--name")
    return stack["probe"].domain_name(sid) in out.split()


def _acls(volume_id):
    from minicinder.volume.targets import tgt
    for target in tgt.TgtAdm().show_targets():
        if target["iqn"].endswith(volume_id):
            return target["acls"]
    return []


def _check_parked(stack, sid, volume_ids):
    cinder, probe = stack["cinder"], stack["probe"]
    server = stack["nova"].show_server(sid)
    assert server["OS-EXT-SRV-ATTR:host"] is None, server
    assert not _domain_defined(stack, sid)
    for vid in volume_ids:
        assert cinder.status(vid) == "reserved"
        [att] = cinder.attachments(vid)
        assert att["status"] == "reserved"
        resp = cinder._req("GET", "/attachments/%s" % att["id"])
        assert resp.status_code == 200, resp.text
        assert not resp.json()["attachment"]["connection_info"]
        bdm = probe.bdm(sid, vid)
        assert bdm["attachment_id"] == att["id"]
        assert bdm["connection_info"] is None
        assert _acls(vid) == []


def _check_back(stack, sid, volume_ids):
    cinder = stack["cinder"]
    server = stack["nova"].show_server(sid)
    assert server["OS-EXT-SRV-ATTR:host"] == stack["host"]
    for vid in volume_ids:
        assert cinder.status(vid) == "in-use"
        [att] = cinder.attachments(vid)
        assert att["status"] == "attached"
        assert stack["probe"].bdm(sid, vid)["connection_info"]


def _snapshots(stack, sid):
    return images.snapshots_of(sid, stack["images_root"])


def test_shelve_offload_unshelve_with_an_attached_volume(stack, volumes):
    nova, probe = stack["nova"], stack["probe"]
    with private_stack.servers(nova, stack["image"]["id"],
                               "shelve%s" % stack["run"], 1) as [sid]:
        vid = volumes("shelve-data")
        bfv_resp = nova.attach(sid, vid)
        assert bfv_resp.status_code == 200, bfv_resp.text
        stack["cinder"].wait_status(vid, "in-use")
        dom = probe.domain_name(sid)
        dev = waiting.wait_for("volume in guest",
                               lambda: probe.guest_dev_for(dom, vid),
                               timeout=30)
        probe.write_block(dom, dev, DATA)

        _action(stack, sid, {"shelve": None})
        nova.wait_server(sid, "SHELVED_OFFLOADED", timeout=180)
        _check_parked(stack, sid, [vid])
        [snapshot] = _snapshots(stack, sid)
        assert snapshot["name"].endswith("-shelved")
        # Created queued by the API, uploaded by the host.
        assert snapshot["status"] == "active" and snapshot["size"] > 0
        assert len(snapshot["os_hash_value"]) == 128

        # Attached while offloaded: in-use at once, exported nowhere, no
        # device until the unshelve names it.
        late = volumes("shelve-late")
        resp = nova.attach(sid, late)
        assert resp.status_code == 200, resp.text
        assert resp.json()["volumeAttachment"]["device"] is None
        assert stack["cinder"].status(late) == "in-use"
        [att] = stack["cinder"].attachments(late)
        assert att["status"] == "attached"
        assert probe.bdm(sid, late)["device_name"] is None
        assert _acls(late) == []

        _action(stack, sid, {"unshelve": None})
        nova.wait_server(sid, "ACTIVE", timeout=300)
        _check_back(stack, sid, [vid, late])
        dev = waiting.wait_for("volume in guest again",
                               lambda: probe.guest_dev_for(dom, vid),
                               timeout=60)
        assert probe.read_block(dom, dev, len(DATA)) == DATA
        assert waiting.wait_for("the late volume in the guest",
                                lambda: probe.guest_dev_for(dom, late),
                                timeout=60)
        assert probe.bdm(sid, late)["device_name"] == "/dev/vdc"
        assert _snapshots(stack, sid) == []
        for volume_id in (vid, late):
            assert nova.detach(sid, volume_id).status_code == 202
            stack["cinder"].wait_status(volume_id, "available", timeout=60)


def test_volume_backed_shelve_and_unshelve(stack):
    """No snapshot for a volume-backed server; its root volume is parked
    and comes back as the guest's vda."""
    mapping = {"uuid": stack["image"]["id"], "source_type": "image",
               "destination_type": "volume", "boot_index": 0,
               "volume_size": 1, "delete_on_termination": True}
    journey.wait_for_vg_space(bfv.VG, 1)
    with bfv._server(stack, "shelve-bfv", [mapping]) as sid:
        [vid] = bfv._volume_ids(stack["nova"].show_server(sid))
        _action(stack, sid, {"shelve": None})
        stack["nova"].wait_server(sid, "SHELVED_OFFLOADED", timeout=180)
        _check_parked(stack, sid, [vid])
        assert _snapshots(stack, sid) == []
        _action(stack, sid, {"unshelve": None})
        stack["nova"].wait_server(sid, "ACTIVE", timeout=300)
        _check_back(stack, sid, [vid])
        bfv._check_root_on_lun(stack, sid, vid)
    stack["cinder"].wait_status(vid, "deleted", timeout=120)


def test_failed_unshelve_parks_the_volumes_again(stack, volumes):
    """The snapshot's kernel is gone, so the spawn fails after the
    volume's attachment was updated with the host's connector: the guest
    is destroyed, the volume parked again (reserved, no connector, no
    initiator in its ACL), the server SHELVED_OFFLOADED with no host and
    the event an Error; a delete then frees the volume."""
    nova = stack["nova"]
    with private_stack.servers(nova, stack["image"]["id"],
                               "unshelvefail%s" % stack["run"], 1) as [sid]:
        vid = volumes("unshelve-fails")
        assert nova.attach(sid, vid).status_code == 200
        stack["cinder"].wait_status(vid, "in-use")
        _action(stack, sid, {"shelve": None})
        nova.wait_server(sid, "SHELVED_OFFLOADED", timeout=180)
        [snapshot] = _snapshots(stack, sid)
        os.unlink(snapshot["kernel"])
        _action(stack, sid, {"unshelve": None})
        action = nova.finished_action(sid, "unshelve", timeout=180)
        assert [e["result"] for e in action["events"]] == ["Error"]
        server = nova.show_server(sid)
        assert (server["status"], server["OS-EXT-STS:task_state"]) == (
            "SHELVED_OFFLOADED", None)
        _check_parked(stack, sid, [vid])
    stack["cinder"].wait_status(vid, "available", timeout=120)
    assert stack["cinder"].attachments(vid) == []
