"""Extending an attached volume on the deployed lab, seen in every ledger
(issue 29): Cinder's size, the LV, tgt's LUN, libvirt's disk and the
guest's own block device.

Unlike the private stacks of this folder, these tests work on the lab
``devstack/stack.sh`` (or ``./lab.sh``) deployed, through its real
clients (the tempest-style suite's, configured by
``/etc/ministack/tempest.conf``) and the operator's tools. Each compute
host of the lab gets a server of the admin's, pinned there (compute
2.74's ``host``): on a one-host lab the first host, on a two-host lab
(``COMPUTE_HOSTS=2``) the first host and compute2 too, since their
libvirtds, initiators and addresses differ. Each host's libvirtd is
reached through the URI its minicompute config names
(``minicompute.hosts``).

* The extend (3.42+, asked at 3.71 as ``openstack
  --os-volume-api-version 3.71 volume set --size`` asks it): the LV grows
  in place, tgt's LUN reports the new size, Cinder tells Nova
  (``volume-extended``), the host resizes the disk in the running guest
  (``virDomainBlockResize``): ``virsh domblkinfo`` and the guest's
  ``/sys/block/vdX/size`` show the new size, the guest reads back what
  it writes past the old end, and the server's ``extend_volume`` action
  has its ``compute_extend_volume`` event.
* The failure path: no room after the LV to grow it in place. The
  volume is back ``in-use`` at its old size (upstream's scheduler
  answer), every ledger still shows the old size, Nova was not told (no
  action), and the volume still grows when asked for what fits. The lab
  ends clean (``ministack-audit``).

Everything made is deleted even when a test fails (``Cleanups``).
"""

import concurrent.futures
import json
import os
import subprocess

import pytest
import sqlalchemy as sa

from minicinder.volume.targets import tgt
from minicompute import hosts as compute_hosts
from tests.support import lab_hosts
from tests.support.cleanups import Cleanups
from tests.tempest_style import auth
from tests.tempest_style import base
from tests.tempest_style import clients
from tests.tempest_style import config as suite_config
from tests.tempest_style import guest as guest_mod
from tests.tempest_style import waiters

pytestmark = pytest.mark.slow

GiB = 1024 ** 3
PIN = "2.74"
#: What ``openstack --os-volume-api-version 3.71 volume set --size`` sends.
EXTEND_VERSION = "3.71"
CINDER_CONF = "/etc/ministack/minicinder.conf"
CINDER_LOG = "/opt/stack/logs/minicinder.log"


# [None] without a deployed lab: the test skips (a failure in CI).
HOSTS = lab_hosts.running_hosts() or [None]


def _volume_group():
    import configparser
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(CINDER_CONF)
    return parser.get("DEFAULT", "volume_group",
                      fallback="stack-volumes-lvmdriver-1")


@pytest.fixture(scope="module")
def lab():
    if not os.path.exists(suite_config.DEFAULT_PATH) or HOSTS == [None]:
        pytest.skip("no deployed lab (%s, /etc/ministack/minicompute.conf):"
                    " ./lab.sh" % suite_config.DEFAULT_PATH)
    conf = suite_config.load()
    session = auth.authenticate(conf, conf.admin, admin=True)
    compute = clients.ComputeClient(session.compute_endpoint, session.token)
    volumes = clients.VolumeClient(session.volume_endpoint, session.token)
    cloud = base.Cloud(conf, compute, volumes, compute, volumes)
    stack = Cleanups()
    try:
        yield {"cloud": cloud, "cleanup": stack,
               "hosts": compute_hosts.compute_hosts(), "vg": _volume_group()}
    finally:
        stack.run()


@pytest.fixture(scope="module")
def servers(lab):
    """{host: server id}: one ACTIVE server of the admin's on each host
    (booted together: TCG guests on 2 cores are slow to boot)."""
    cloud = lab["cloud"]
    made = {}
    for host in HOSTS:
        server = cloud.compute.request("POST", "/servers", {"server": {
            "name": base.rand_name("extend-%s" % host),
            "imageRef": cloud.conf.image_ref,
            "flavorRef": cloud.conf.flavor_ref, "networks": "none",
            "host": host}}, expected=202, microversion=PIN)[2]["server"]
        lab["cleanup"].add(cloud.delete_server, server["id"])
        made[host] = server["id"]
    with concurrent.futures.ThreadPoolExecutor(len(made)) as pool:
        list(pool.map(lambda sid: waiters.wait_for_server_status(
            cloud.compute, sid, "ACTIVE", timeout=cloud.conf.build_timeout),
            made.values()))
    for host, server_id in made.items():
        shown = cloud.compute.show_server(server_id)["server"]
        assert shown["OS-EXT-SRV-ATTR:host"] == host, shown
    return made


@pytest.fixture
def cleanup():
    stack = Cleanups()
    yield stack
    stack.run()


class _HostConf:
    """What the tempest-style Guest reads of tempest.conf, for one host."""

    def __init__(self, conf, uri):
        self.libvirt_uri = uri
        self.agent_timeout = conf.agent_timeout
        self.nova_db_url = conf.nova_db_url


# -- the ledgers ------------------------------------------------------------

class Ledgers:
    """One attached volume of one server, as each ledger shows it."""

    def __init__(self, lab, host, server_id, volume_id):
        self.cloud = lab["cloud"]
        self.vg = lab["vg"]
        self.uri = lab["hosts"][host].libvirt_uri
        self.server_id, self.volume_id = server_id, volume_id
        self.guest = guest_mod.Guest(_HostConf(self.cloud.conf, self.uri),
                                     self.cloud.admin_compute, server_id)
        self.guest.wait_for_agent()
        self.dev = self.guest.device_for(volume_id)

    def cinder(self):
        volume = self.cloud.volumes.show_volume(self.volume_id)["volume"]
        return volume["status"], volume["size"]

    def lv_bytes(self):
        out = _run("lvs", "--noheadings", "--units", "b", "--nosuffix",
                   "-o", "lv_size", "%s/volume-%s" % (self.vg,
                                                      self.volume_id))
        return int(out.strip())

    def lun_size(self):
        """tgt's ``Size:`` of LUN 1 (``tgtadm --lld iscsi --op show
        --mode target``), e.g. ``2147 MB``."""
        for target in tgt.TgtAdm().show_targets():
            if target["iqn"].endswith(":volume-%s" % self.volume_id):
                return {lun["lun"]: lun["size"]
                        for lun in target["luns"]}.get(1)
        return None

    def domblkinfo(self):
        out = _run("virsh", "-c", self.uri, "domblkinfo",
                   self.guest.domain, self.dev)
        return int(dict(line.split(":", 1) for line in out.splitlines()
                        if ":" in line)["Capacity"].strip())

    def in_guest(self):
        """The guest kernel's size of the disk, in bytes."""
        return int(self.guest.execute(
            "cat /sys/block/%s/size" % self.dev).decode()) * 512

    def bdm_volume_size(self):
        engine = sa.create_engine(self.cloud.conf.nova_db_url)
        try:
            with engine.connect() as conn:
                return conn.execute(sa.text(
                    "SELECT volume_size FROM block_device_mapping WHERE "
                    "volume_id=:v AND instance_uuid=:i AND deleted=0"),
                    {"v": self.volume_id, "i": self.server_id}).scalar()
        finally:
            engine.dispose()

    def every(self):
        """Each ledger's size in bytes (tgt's in its own MB)."""
        status, size = self.cinder()
        return {"cinder": (status, size * GiB), "lv": self.lv_bytes(),
                "tgt": self.lun_size(), "libvirt": self.domblkinfo(),
                "guest": self.in_guest()}

    def room_after_lv(self):
        """GiB of free extents right after the LV (how far it can grow
        in place: ``pvs --segments``)."""
        out = _run("pvs", "--noheadings", "--segments", "--units", "b",
                   "--nosuffix", "--separator", "|", "-o",
                   "pv_name,vg_name,pvseg_start,pvseg_size,lv_name,"
                   "vg_extent_size")
        rows = [[f.strip() for f in line.split("|")]
                for line in out.splitlines()]
        rows = sorted((r for r in rows if len(r) == 6 and r[1] == self.vg),
                      key=lambda r: (r[0], int(r[2])))
        name = "volume-%s" % self.volume_id
        for i, row in enumerate(rows):
            if row[4] == name:
                after = rows[i + 1] if i + 1 < len(rows) else None
                if after is None or after[4] or after[0] != row[0]:
                    return 0
                return int(after[3]) * int(after[5]) // GiB
        raise AssertionError("LV %s not in %s" % (name, self.vg))


def _run(*argv):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (argv, done.stderr)
    return done.stdout


def _tgt_mb(size_bytes):
    """How tgt prints a LUN of ``size_bytes`` (decimal MB, rounded)."""
    return "%d MB" % round(size_bytes / 1e6)


def _grown_everywhere(size_gib):
    gib = size_gib * GiB
    return {"cinder": ("in-use", gib), "lv": gib, "tgt": _tgt_mb(gib),
            "libvirt": gib, "guest": gib}


def _extend(cloud, volume_id, new_size):
    cloud.volumes.request("POST", "/volumes/%s/action" % volume_id,
                          {"os-extend": {"new_size": new_size}},
                          expected=202, microversion=EXTEND_VERSION)


def _attached(lab, cleanup, host, server_id, size=1):
    cloud = lab["cloud"]
    volume = cloud.create_volume(cleanup, size=size,
                                 name=base.rand_name("extend"))
    cloud.attach_volume(cleanup, server_id, volume["id"])
    return Ledgers(lab, host, server_id, volume["id"])


def _extend_actions(cloud, server_id):
    """The server's extend_volume actions: {request id: {event: result}}
    (with each event's details on failure)."""
    actions = cloud.admin_compute.request(
        "GET", "/servers/%s/os-instance-actions" % server_id,
        expected=200, microversion="2.84")[2]["instanceActions"]
    found = {}
    for action in actions:
        if action["action"] != "extend_volume":
            continue
        detail = cloud.admin_compute.request(
            "GET", "/servers/%s/os-instance-actions/%s" % (
                server_id, action["request_id"]), expected=200,
            microversion="2.84")[2]["instanceAction"]
        found[action["request_id"]] = {
            e["event"]: (e["result"], e.get("details"))
            for e in detail.get("events", [])}
    return found


def _new_action(cloud, server_id, before):
    """The events of the one extend_volume action not in ``before``."""
    new = [events for request_id, events in
           _extend_actions(cloud, server_id).items()
           if request_id not in before]
    assert len(new) <= 1, new
    return new[0] if new else None


def _audit():
    done = subprocess.run(["/usr/local/bin/ministack-audit", "--json"],
                          capture_output=True, text=True, timeout=300)
    return done.returncode, json.loads(done.stdout)["found"]


def _audit_clean():
    """``ministack-audit`` finds nothing. An attach or detach of someone
    else's in flight on the shared lab can show for a moment (a BDM
    before its attachment): polled a little, never repaired."""
    waiters.wait_for("ministack-audit to find nothing", _audit,
                     lambda report: report == (0, []), timeout=90,
                     interval=5)


# -- the tests --------------------------------------------------------------

@pytest.mark.parametrize("host", HOSTS)
def test_extend_attached_volume_reaches_the_guest(lab, servers, cleanup,
                                                  host):
    """1 -> 2 GiB while attached: every ledger shows 2 GiB, the guest
    writes and reads past the old end, the action has its event."""
    cloud = lab["cloud"]
    server_id = servers[host]
    ledgers = _attached(lab, cleanup, host, server_id)
    assert ledgers.every() == _grown_everywhere(1)
    before = _extend_actions(cloud, server_id)
    head = os.urandom(4096)
    ledgers.guest.write(ledgers.dev, head)

    _extend(cloud, ledgers.volume_id, 2)
    waiters.wait_for("volume %s to be 2 GiB and in-use" % ledgers.volume_id,
                     ledgers.cinder, lambda v: v == ("in-use", 2),
                     lambda v: v[0].startswith("error"), timeout=120)
    waiters.wait_for("the guest to see 2 GiB on %s" % ledgers.dev,
                     ledgers.in_guest, lambda size: size == 2 * GiB,
                     timeout=120, interval=1)
    assert ledgers.every() == _grown_everywhere(2)
    assert ledgers.bdm_volume_size() == 2

    # The new extents are the guest's: past the old end, read back
    # bypassing the guest's cache; the data before it is untouched.
    tail = os.urandom(4096)
    block = GiB // 4096
    ledgers.guest.execute(
        "cat > /tmp/extend-in && dd if=/tmp/extend-in of=/dev/%s bs=4096 "
        "seek=%d conv=fsync 2>/dev/null" % (ledgers.dev, block), stdin=tail)
    assert ledgers.guest.execute(
        "dd if=/dev/%s bs=4096 skip=%d count=1 iflag=direct 2>/dev/null"
        % (ledgers.dev, block)) == tail
    assert ledgers.guest.read(ledgers.dev, 4096) == head

    events = waiters.wait_for(
        "the extend_volume action of server %s to end" % server_id,
        lambda: _new_action(cloud, server_id, before),
        lambda events: events and all(r for r, _ in events.values()),
        timeout=60, interval=1)
    assert events == {"compute_extend_volume": ("Success", None)}, events
    # The operator's own view from inside the guest, as the docs type it.
    done = subprocess.run(["/usr/local/bin/ministack-guest", server_id, "--",
                           "lsblk"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in
            done.stdout.splitlines()[1:] if line.strip()}
    # NAME MAJ:MIN RM SIZE RO TYPE SERIAL
    assert rows[ledgers.dev][3] == "2G", done.stdout


def test_no_room_to_grow_leaves_it_in_use_at_its_size(lab, servers):
    """Asked for more than the free extents after its LV hold: back
    in-use at 1 GiB in every ledger, Nova not told; then an extend that
    fits still works, and the lab ends clean."""
    cloud = lab["cloud"]
    host = HOSTS[-1]
    server_id = servers[host]
    cleanup = Cleanups()
    try:
        ledgers = _attached(lab, cleanup, host, server_id)
        room = ledgers.room_after_lv()
        assert room >= 1, "a new LV has its own size of room after it"
        before = _extend_actions(cloud, server_id)
        too_big = 1 + room + 1

        _extend(cloud, ledgers.volume_id, too_big)
        assert ledgers.cinder()[0] in ("extending", "in-use")
        waiters.wait_for(
            "volume %s back in-use" % ledgers.volume_id, ledgers.cinder,
            lambda v: v[0] == "in-use", lambda v: v[0].startswith("error"),
            timeout=120)
        assert ledgers.every() == _grown_everywhere(1)
        assert ledgers.bdm_volume_size() in (None, 1)
        assert _extend_actions(cloud, server_id) == before
        with open(CINDER_LOG, errors="replace") as log:
            assert "Volume %s stays 1 GiB" % ledgers.volume_id in log.read()

        # Nothing changed: what fits still grows, in place.
        _extend(cloud, ledgers.volume_id, 1 + room)
        waiters.wait_for(
            "the guest to see %d GiB" % (1 + room), ledgers.in_guest,
            lambda size: size == (1 + room) * GiB, timeout=120, interval=1)
        assert ledgers.every() == _grown_everywhere(1 + room)
    finally:
        cleanup.run()
    _audit_clean()
