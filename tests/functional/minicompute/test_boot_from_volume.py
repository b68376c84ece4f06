"""Boot from volume on live guests, end to end and for real.

Each test creates servers through miniapi's REST API with
``block_device_mapping_v2`` as the clients send it, then checks every
ledger: Cinder's volume (status, attachments, bootable), nova's
``block_device_mapping``, ``virsh domblklist`` (vda is the iSCSI LUN, no
local disk file) and, inside the guest, ``lsblk`` (its SERIAL column:
vda carries the volume id). Every test deletes what it made.
"""

import contextlib

import pytest

from tests.support import journey
from tests.support import private_stack
from tests.support import waiting

pytestmark = pytest.mark.slow

VG = private_stack.VG


def _image_volume(stack, name, size=1):
    """A bootable volume made by Cinder from the registered image."""
    cinder = stack["cinder"]
    journey.wait_for_vg_space(VG, size)
    resp = cinder._req("POST", "/volumes", json={"volume": {
        "size": size, "name": journey.unique(name),
        "imageRef": stack["image"]["id"]}})
    assert resp.status_code == 202, resp.text
    vid = resp.json()["volume"]["id"]
    cinder.wait_status(vid, "available", timeout=180)
    return vid


def _project_volumes(stack):
    resp = stack["cinder"]._req("GET", "/volumes")
    assert resp.status_code == 200, resp.text
    return {v["id"] for v in resp.json()["volumes"]}


def _create(stack, name, mappings, flavor=None, image_ref=""):
    nova = stack["nova"]
    body = {"name": journey.unique(name), "networks": "none",
            "flavorRef": flavor or private_stack.smallest_flavor(nova),
            "imageRef": image_ref, "block_device_mapping_v2": mappings}
    return nova.req("POST", "/servers", json={"server": body})


@contextlib.contextmanager
def _server(stack, name, mappings, **kwargs):
    """An ACTIVE volume-backed server, deleted (and waited for) at exit."""
    resp = _create(stack, name, mappings, **kwargs)
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    try:
        stack["nova"].wait_server(sid, "ACTIVE", timeout=300)
        yield sid
    finally:
        _delete(stack, sid)


def _delete(stack, sid):
    """Delete the server and wait until it is gone (from ERROR too)."""
    nova = stack["nova"]
    nova.delete_server(sid)
    waiting.wait_for("server %s deleted" % sid,
                     lambda: nova.show_server(sid) is None, timeout=180)


def _volume_ids(server):
    return [v["id"] for v in server["os-extended-volumes:volumes_attached"]]


def _guest_serials(stack, sid):
    """``{name: serial}`` from ``lsblk -n`` in the guest (the guest
    image's lsblk prints NAME MAJ:MIN RM SIZE RO TYPE SERIAL)."""
    probe = stack["probe"]
    dom = probe.domain_name(sid)
    rc, out, err = probe.guest(dom, ["lsblk", "-n"])
    assert rc == 0, err
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return {row[0]: row[6] if len(row) > 6 else "" for row in rows}


def _check_root_on_lun(stack, sid, volume_id):
    probe = stack["probe"]
    dom = probe.domain_name(sid)
    source = probe.domblklist(dom)["vda"]
    # An iSCSI LUN (QEMU's initiator: iqn/lun; the kernel's: its by-path
    # device), never a disk file in the instance directory.
    assert "iqn" in source, source
    serials = waiting.wait_for(
        "the guest's vda serial", lambda: _guest_serials(stack, sid),
        lambda found: "vda" in found, timeout=60)
    # virtio-blk shows the first 20 characters of the serial.
    assert serials["vda"] == volume_id[:20], serials


def test_boot_from_image_volume_deleted_on_termination(stack):
    """image -> volume: the host creates the root volume from the image;
    delete_on_termination removes it with the server."""
    mapping = {"uuid": stack["image"]["id"], "source_type": "image",
               "destination_type": "volume", "boot_index": 0,
               "volume_size": 1, "delete_on_termination": True}
    journey.wait_for_vg_space(VG, 1)
    with _server(stack, "bfv-image", [mapping]) as sid:
        server = stack["nova"].show_server(sid)
        assert server["image"] == ""
        [vid] = _volume_ids(server)
        volume = stack["cinder"].show(vid)
        assert volume["status"] == "in-use" and volume["bootable"] == "true"
        [att] = stack["cinder"].attachments(vid)
        assert att["status"] == "attached"
        bdm = stack["probe"].bdm(sid, vid)
        assert (bdm["device_name"], bdm["boot_index"]) == ("/dev/vda", 0)
        assert bdm["connection_info"]
        _check_root_on_lun(stack, sid, vid)
    stack["cinder"].wait_status(vid, "deleted", timeout=120)


def test_boot_from_user_volume_with_blank_disk(stack):
    """volume -> volume (kept: delete_on_termination false) plus a blank
    data volume (deleted with the server); the boot volume, in use by
    the server, is refused to a second server with a 400."""
    boot = _image_volume(stack, "bfv-boot")
    mappings = [{"uuid": boot, "source_type": "volume",
                 "destination_type": "volume", "boot_index": 0},
                {"source_type": "blank", "destination_type": "volume",
                 "volume_size": 1, "boot_index": -1,
                 "delete_on_termination": True}]
    try:
        with _server(stack, "bfv-user", mappings) as sid:
            server = stack["nova"].show_server(sid)
            assert server["image"] == ""
            ids = _volume_ids(server)
            assert boot in ids and len(ids) == 2
            [blank] = [v for v in ids if v != boot]
            _check_root_on_lun(stack, sid, boot)
            assert _guest_serials(stack, sid)["vdb"] == blank[:20]
            assert stack["probe"].bdm(sid, blank)["device_name"] == \
                "/dev/vdb"
            # The volume in use: 400, and no server, BDM or attachment.
            before = len(stack["cinder"].attachments(boot))
            resp = _create(stack, "bfv-again", mappings[:1])
            assert resp.status_code == 400, resp.text
            assert resp.json()["badRequest"]["message"].startswith(
                "Invalid volume:"), resp.text
            assert len(stack["cinder"].attachments(boot)) == before
            assert stack["cinder"].status(boot) == "in-use"
        stack["cinder"].wait_status(boot, "available", timeout=120)
        assert stack["cinder"].attachments(boot) == []
        stack["cinder"].wait_status(blank, "deleted", timeout=120)
    finally:
        stack["cinder"].force_cleanup(boot)


def test_failed_spawn_rolls_back(stack):
    """The guest cannot start (more vCPUs than the machine type allows)
    after its volumes were created, updated and connected: the server is
    ERROR, the created volume deleted, the user's volume available with
    no attachment, no BDM left."""
    nova = stack["nova"]
    resp = nova.req("POST", "/flavors", json={"flavor": {
        "name": journey.unique("bfv-too-many-cpus"), "ram": 128,
        "vcpus": 300, "disk": 1}})
    assert resp.status_code == 200, resp.text
    flavor = resp.json()["flavor"]["id"]
    user = _image_volume(stack, "bfv-rollback")
    sid = None
    try:
        before = _project_volumes(stack)
        resp = _create(stack, "bfv-fails", [
            {"uuid": stack["image"]["id"], "source_type": "image",
             "destination_type": "volume", "boot_index": 0,
             "volume_size": 1},
            {"uuid": user, "source_type": "volume",
             "destination_type": "volume", "boot_index": 1}],
            flavor=flavor)
        assert resp.status_code == 202, resp.text
        sid = resp.json()["server"]["id"]
        nova.wait_server(sid, "ERROR", timeout=300)
        server = nova.show_server(sid)
        assert server["fault"]["message"]
        assert _volume_ids(server) == []
        stack["cinder"].wait_status(user, "available", timeout=60)
        assert stack["cinder"].attachments(user) == []
        waiting.wait_for("the created volume deleted",
                         lambda: _project_volumes(stack),
                         lambda ids: ids == before, timeout=120)
        assert stack["probe"].bdm(sid, user) is None
    finally:
        if sid:
            _delete(stack, sid)
        stack["cinder"].force_cleanup(user)
        nova.req("DELETE", "/flavors/%s" % flavor)
