"""Live migration and cold migration of a server sharing a multiattach
volume with a server of the other host, on the deployed two-host lab
(``COMPUTE_HOSTS=2 ./lab.sh``).

Server A starts on the first host, server B on the second; one
multiattach volume is attached to both. In a second variant server C
sits beside A on the first host and uses the volume too, so A's leaving
a host another guest still uses the volume on is covered both ways.
The servers that stay put write and read the volume during every move
of A; after it, data A writes they read and the other way round.

After every move (each ends with ``ministack-audit`` clean):

* one attachment per server, on the server's host; tgt's ACL names the
  initiators of exactly the hosts the servers are on;
* one iSCSI session (I_T nexus) per guest (QEMU's libiscsi logs in once
  per guest), those of the servers that stayed the very ones they had
  before A moved; the target's CHAP secret defined on every host used.

The moves: a live migration of A to B's host and back; one the
destination (B's host) refuses after making A's new attachment
(``DestinationDiskExists``), undone without touching B's connection; a
cold migration to B's host confirmed, then one back to the first host
reverted (A returns to B's host).

Skipped without a two-host lab. Everything made is deleted even when a
test fails (``Cleanups``).
"""

import os
import re
import shutil
import subprocess

import pytest

from tests.multinode import conftest as mn
from tests.multinode import test_live_migration as livemig
from tests.support.cleanups import Cleanups

pytestmark = pytest.mark.slow

HOSTS = livemig.HOSTS
MULTIATTACH = "2.60"
lab = livemig.lab
_TARGET = re.compile(r"Target [0-9]+: (\S+)\Z")
_NEXUS = re.compile(r"\s+I_T nexus: ([0-9]+)\Z")
_INITIATOR = re.compile(r"\s+Initiator: (\S+)")


@pytest.fixture
def cleanup():
    stack = Cleanups()
    yield stack
    stack.run()


#: Where the servers that stay put are: B on the second host, and in the
#: second variant C beside A on the first (its host's ACL entry, secret
#: and session must outlive A's leaving).
STAYERS = {"b": (1,), "b-and-c": (1, 0)}


@pytest.fixture(params=sorted(STAYERS))
def shared(request, lab, cleanup):
    """(A, [stayers], volume id, {nexus ids of the stayers}): A on the
    first host, the stayers where :data:`STAYERS` says, one multiattach
    volume attached to all (A last, so the stayers' logins are known)."""
    cloud = lab["cloud"]
    a = mn.boot_on(cloud, cleanup, HOSTS[0], "ma-a")
    stayers = [mn.boot_on(cloud, cleanup, HOSTS[i], "ma-stay")
               for i in STAYERS[request.param]]
    mn.wait_active(cloud, a, *stayers)
    vtype = cloud.create_multiattach_type(cleanup)
    volume_id = cloud.create_volume(cleanup,
                                    volume_type=vtype["name"])["id"]
    for server_id in stayers:
        cloud.attach_volume(cleanup, server_id, volume_id,
                            microversion=MULTIATTACH, multiattach=True)
    for server_id in stayers:
        livemig._guest(lab, server_id).device_for(volume_id)
    kept = {n for found in _nexuses(volume_id).values() for n in found}
    assert len(kept) == len(stayers), kept
    cloud.attach_volume(cleanup, a, volume_id, microversion=MULTIATTACH,
                        multiattach=True)
    return a, stayers, volume_id, kept


def _nexuses(volume_id):
    """{initiator: sorted I_T nexus ids} of the volume's tgt target, from
    ``tgtadm``'s own listing (a new login is a new nexus id)."""
    out = subprocess.run(
        ["tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "show"],
        capture_output=True, text=True, timeout=60, check=True).stdout
    found, mine, nexus = {}, False, None
    for line in out.splitlines():
        target = _TARGET.match(line)
        if target:
            mine = target.group(1).endswith(volume_id)
            continue
        if not mine:
            continue
        match = _NEXUS.match(line)
        if match:
            nexus = match.group(1)
            continue
        match = _INITIATOR.match(line)
        if match and nexus is not None:
            found.setdefault(match.group(1), set()).add(nexus)
            nexus = None
    return {k: sorted(v) for k, v in found.items()}


def _connection_info(cloud, volume_id, server_id):
    """The connection_info Cinder gave the server's host (3.44)."""
    [found] = [att for att in livemig._attachments(cloud, volume_id)
               if att["instance"] == server_id]
    return cloud.volumes.request(
        "GET", "/attachments/%s" % found["id"], expected=200,
        microversion="3.44")[2]["attachment"]["connection_info"]


def _iqn(host):
    return mn.initiator_of(host, HOSTS[0])


def _round_trip(lab, writer, reader, volume_id, tag):
    """``writer`` writes a block naming ``tag``; ``reader`` reads it."""
    data = (b"%s %s\n" % (tag.encode(), writer.encode())).ljust(512, b".")
    w = livemig._guest(lab, writer)
    w.write(w.device_for(volume_id), data)
    r = livemig._guest(lab, reader)
    got = r.read(r.device_for(volume_id), len(data))
    assert got == data, (tag, got[:80])


def _stayers_use_it(lab, stayers, volume_id, tag):
    """Each stayer writes and reads back its own block."""
    for server_id in stayers:
        _round_trip(lab, server_id, server_id, volume_id, tag)


def _assert_placed(lab, a, stayers, volume_id, kept):
    """Attachments where the servers are, the ACL of exactly those
    hosts, the stayers' sessions still there, each host's CHAP secret
    defined, data crossing both ways, the audit clean."""
    cloud = lab["cloud"]
    where = {s: mn.server_host(cloud, s) for s in [a] + stayers}
    volume = cloud.volumes.show_volume(volume_id)["volume"]
    assert volume["status"] == "in-use", volume
    found = {att["server_id"]: att["host_name"]
             for att in volume["attachments"]}
    assert found == where, (found, where)
    assert len(livemig._attachments(cloud, volume_id)) == len(where)
    assert mn.acl_of(volume_id) == sorted({_iqn(h) for h in where.values()})
    # QEMU's libiscsi logs in once per guest: one I_T nexus per server,
    # the stayers' the ones they had from the start.
    nexuses = _nexuses(volume_id)
    wanted = {}
    for server_id, host in where.items():
        wanted.setdefault(_iqn(host), []).append(server_id)
    assert {k: len(v) for k, v in nexuses.items()} == \
        {k: len(v) for k, v in wanted.items()}, (nexuses, where)
    assert kept <= {n for found in nexuses.values() for n in found}, \
        (nexuses, kept)
    # The host's side of the connection a guest uses: the CHAP secret.
    target_iqn = _connection_info(cloud, volume_id, a)["target_iqn"]
    for host in set(where.values()):
        assert target_iqn in mn.virsh(lab["hosts"][host].libvirt_uri,
                                      "secret-list"), host
    for other in stayers:
        _round_trip(lab, a, other, volume_id, "a-to-stayer")
        _round_trip(lab, other, a, volume_id, "stayer-to-a")
    livemig._audit_clean()


def _wait_moving(lab, server_id, stayers, volume_id, settled):
    """Until ``settled(server)``, the stayers keep using the volume;
    returns how many times it did."""
    cloud = lab["cloud"]
    rounds = 0
    while True:
        shown = cloud.admin_compute.show_server(server_id)["server"]
        if settled(shown):
            return rounds
        assert rounds < 200, shown
        _stayers_use_it(lab, stayers, volume_id, "during-%d" % rounds)
        rounds += 1


def test_live_migration_keeps_the_other_host_s_connection(lab, cleanup,
                                                          shared):
    a, stayers, volume_id, kept = shared
    cloud = lab["cloud"]
    _assert_placed(lab, a, stayers, volume_id, kept)
    for dest in (HOSTS[1], HOSTS[0]):
        livemig._migrate(cloud, a, dest)
        rounds = _wait_moving(lab, a, stayers, volume_id,
                              lambda s: s["OS-EXT-STS:task_state"] is None)
        assert rounds >= 1
        assert livemig._migration(cloud, a)["status"] == "completed"
        assert mn.server_host(cloud, a) == dest
        _assert_placed(lab, a, stayers, volume_id, kept)
    cleanup.run()
    livemig._audit_clean()


def _action(cloud, server_id, body, expected=202):
    cloud.compute.request("POST", "/servers/%s/action" % server_id, body,
                          expected=expected)


def _status(status):
    return lambda s: s["status"] == status and \
        s["OS-EXT-STS:task_state"] is None


def test_cold_migration_keeps_the_other_host_s_connection(lab, cleanup,
                                                          shared):
    a, stayers, volume_id, kept = shared
    cloud = lab["cloud"]
    _action(cloud, a, {"migrate": None})
    _wait_moving(lab, a, stayers, volume_id, _status("VERIFY_RESIZE"))
    assert mn.server_host(cloud, a) == HOSTS[1]
    _action(cloud, a, {"confirmResize": None}, expected=204)
    _wait_moving(lab, a, stayers, volume_id, _status("ACTIVE"))
    _assert_placed(lab, a, stayers, volume_id, kept)

    # Away from B's host, then reverted back to it.
    _action(cloud, a, {"migrate": None})
    _wait_moving(lab, a, stayers, volume_id, _status("VERIFY_RESIZE"))
    assert mn.server_host(cloud, a) == HOSTS[0]
    _assert_placed(lab, a, stayers, volume_id, kept)
    _action(cloud, a, {"revertResize": None})
    _wait_moving(lab, a, stayers, volume_id, _status("ACTIVE"))
    assert mn.server_host(cloud, a) == HOSTS[1]
    _assert_placed(lab, a, stayers, volume_id, kept)
    cleanup.run()
    livemig._audit_clean()


def test_refused_live_migration_keeps_the_destination_s_connection(
        lab, cleanup, shared):
    """The destination (B's host) makes A's attachment, then refuses
    (A's directory already exists there: ``DestinationDiskExists``): the
    undo deletes only A's new attachment; B's ACL entry, secret and
    session stay."""
    a, stayers, volume_id, kept = shared
    cloud = lab["cloud"]
    dest_dir = os.path.join(
        livemig._instances_path(lab["hosts"][HOSTS[1]]), a)
    os.makedirs(dest_dir)
    cleanup.add(shutil.rmtree, dest_dir, True)
    livemig._migrate(cloud, a, HOSTS[1])
    _wait_moving(lab, a, stayers, volume_id,
                 lambda s: s["OS-EXT-STS:task_state"] is None)
    assert livemig._migration(cloud, a)["status"] == "failed"
    assert mn.server_host(cloud, a) == HOSTS[0]
    _assert_placed(lab, a, stayers, volume_id, kept)
    cleanup.run()
    livemig._audit_clean()
