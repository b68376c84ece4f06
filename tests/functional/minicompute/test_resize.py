"""Resize and cold migration with an attached volume, on the deployed lab.

Like ``test_extend_attached.py``, these tests work on the lab
``devstack/stack.sh`` deployed (devstack sets
``allow_resize_to_same_host``), through the tempest-style suite's
clients and the operator's tools; each host's libvirtd is reached
through the URI its minicompute config names.

* A resize to ``m1.micro`` then ``confirmResize``, and a resize back then
  ``revertResize``: the data written before is read after, the volume is
  ``in-use`` with one attachment whose host is the server's, the
  domain and the guest have the flavor's memory.
* A resize that would shrink the local disk fails on the source before
  anything moves: the migration in ``error``, the server ACTIVE with
  its flavor, host and volume.
* The cold migration between two hosts is the multinode tier's
  (tests/multinode/test_cold_migration.py, with these steps).

Each ends with ``ministack-audit`` clean; everything made is deleted
even when a test fails (``Cleanups``).
"""

import pytest

from tests.functional.minicompute import test_extend_attached as lab_mod
from tests.support.cleanups import Cleanups
from tests.tempest_style import base
from tests.tempest_style import guest as guest_mod
from tests.tempest_style import waiters

pytestmark = pytest.mark.slow

HOSTS = lab_mod.HOSTS
DATA = b"resized and still here " * 24
#: m1.nano (the tempest flavor) and m1.micro, devstack's flavors.
SMALL, BIG = "42", "84"
lab = lab_mod.lab


@pytest.fixture
def cleanup():
    stack = Cleanups()
    yield stack
    stack.run()


def _server_with_volume(lab, cleanup, host, flavor=SMALL):
    """An ACTIVE server of the admin's pinned on ``host`` with a volume
    holding :data:`DATA`; returns (server id, volume id)."""
    cloud = lab["cloud"]
    server = cloud.compute.request("POST", "/servers", {"server": {
        "name": base.rand_name("resize"), "imageRef": cloud.conf.image_ref,
        "flavorRef": flavor, "networks": "none", "host": host}},
        expected=202, microversion=lab_mod.PIN)[2]["server"]
    cleanup.add(cloud.delete_server, server["id"])
    waiters.wait_for_server_status(cloud.compute, server["id"], "ACTIVE",
                                   timeout=cloud.conf.build_timeout)
    volume = cloud.create_volume(cleanup, size=1,
                                 name=base.rand_name("resize"))
    cloud.attach_volume(cleanup, server["id"], volume["id"])
    guest = _guest(lab, server["id"])
    guest.write(guest.device_for(volume["id"]), DATA)
    return server["id"], volume["id"]


def _host_of(lab, server_id):
    return lab["cloud"].compute.show_server(server_id)["server"][
        "OS-EXT-SRV-ATTR:host"]


def _guest(lab, server_id):
    host = _host_of(lab, server_id)
    guest = guest_mod.Guest(
        lab_mod._HostConf(lab["cloud"].conf, lab["hosts"][host].libvirt_uri),
        lab["cloud"].admin_compute, server_id)
    guest.wait_for_agent()
    return guest


def _action(lab, server_id, body, expected=202, microversion=None):
    lab["cloud"].compute.request("POST", "/servers/%s/action" % server_id,
                                 body, expected=expected,
                                 microversion=microversion)


def _wait(lab, server_id, status):
    waiters.wait_for_server_status(lab["cloud"].compute, server_id, status,
                                   timeout=lab["cloud"].conf.build_timeout)


def _check(lab, server_id, volume_id, memory_mb):
    """The volume usable in the guest, one attachment on the server's
    host, the flavor's memory in the domain and the guest."""
    cloud = lab["cloud"]
    host = _host_of(lab, server_id)
    volume = cloud.volumes.show_volume(volume_id)["volume"]
    assert volume["status"] == "in-use"
    [attachment] = volume["attachments"]
    assert attachment["server_id"] == server_id
    assert attachment["host_name"] == host, (attachment, host)
    guest = _guest(lab, server_id)
    assert guest.read(guest.device_for(volume_id), len(DATA)) == DATA
    info = guest.virsh.run("dominfo", guest.domain)[1]
    max_kib = [line for line in info.splitlines()
               if line.startswith("Max memory")][0].split()[2]
    assert int(max_kib) == memory_mb * 1024, info
    return int(guest.execute(
        "sed -n 's/^MemTotal: *\\([0-9]*\\) kB/\\1/p' /proc/meminfo"))


def _migrations(lab, server_id):
    return lab["cloud"].admin_compute.request(
        "GET", "/os-migrations?instance_uuid=%s" % server_id, expected=200,
        microversion="2.59")[2]["migrations"]


def test_resize_confirm_then_revert_keeps_the_volume(lab, cleanup):
    server_id, volume_id = _server_with_volume(lab, cleanup, HOSTS[0])
    small_mem = _check(lab, server_id, volume_id, 128)

    _action(lab, server_id, {"resize": {"flavorRef": BIG}})
    _wait(lab, server_id, "VERIFY_RESIZE")
    big_mem = _check(lab, server_id, volume_id, 192)
    assert big_mem > small_mem
    _action(lab, server_id, {"confirmResize": None}, expected=204)
    _wait(lab, server_id, "ACTIVE")
    _check(lab, server_id, volume_id, 192)
    flavor = lab["cloud"].compute.request(
        "GET", "/servers/%s" % server_id, expected=200,
        microversion="2.47")[2]["server"]["flavor"]
    assert flavor["original_name"] == "m1.micro"

    _action(lab, server_id, {"resize": {"flavorRef": SMALL}})
    _wait(lab, server_id, "VERIFY_RESIZE")
    _check(lab, server_id, volume_id, 128)
    _action(lab, server_id, {"revertResize": None})
    _wait(lab, server_id, "ACTIVE")
    _check(lab, server_id, volume_id, 192)
    statuses = sorted(m["status"] for m in _migrations(lab, server_id))
    assert statuses == ["confirmed", "reverted"], statuses
    cleanup.run()
    lab_mod._audit_clean()


def test_shrinking_the_disk_fails_and_leaves_the_server_as_it_was(lab,
                                                                  cleanup):
    """A flavor of 2 GiB to m1.micro's 1 GiB: refused on the source
    before anything moves ("Unable to resize disk down."), the migration
    in error, the server ACTIVE with its flavor and its volume."""
    cloud = lab["cloud"]
    flavor = cloud.compute.request("POST", "/flavors", {"flavor": {
        "name": base.rand_name("resize-2g"), "ram": 128, "vcpus": 1,
        "disk": 2}}, expected=200)[2]["flavor"]
    cleanup.add(cloud.compute.request, "DELETE",
                "/flavors/%s" % flavor["id"], expected=202)
    server_id, volume_id = _server_with_volume(lab, cleanup, HOSTS[0],
                                               flavor=flavor["id"])
    _action(lab, server_id, {"resize": {"flavorRef": BIG}})
    waiters.wait_for(
        "the resize of %s to fail" % server_id,
        lambda: [m["status"] for m in _migrations(lab, server_id)],
        lambda statuses: statuses == ["error"], timeout=120, interval=1)
    _wait(lab, server_id, "ACTIVE")
    shown = cloud.compute.request("GET", "/servers/%s" % server_id,
                                  expected=200,
                                  microversion="2.1")[2]["server"]
    assert shown["flavor"]["id"] == flavor["id"]
    assert shown["OS-EXT-SRV-ATTR:host"] == HOSTS[0]
    _check(lab, server_id, volume_id, 128)
    cleanup.run()
    lab_mod._audit_clean()
