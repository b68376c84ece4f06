"""What tools/bench_attach.py measures with, apart from the REST calls.

* :class:`GuestWaiter`: a loop *inside* the guest (started through the
  QEMU guest agent before the request) that exits when a disk serial
  appears in, or leaves, ``/sys/block/vd*/serial``. Polling from the host
  instead would cost two agent round trips per probe; here the host only
  polls ``guest-exec-status``, so the resolution is ~20 ms plus one agent
  round trip, the same for the stack and for the floor.
* :class:`Floor`: the raw floor -- the same kind of disk done by hand with
  the project's adapters (:class:`minicinder.volume.lvm.LVM`,
  :class:`minicinder.volume.tgt.TgtAdm`, the libvirt XML builders of
  ``minicompute.virt.libvirt.config`` and a libvirt CHAP secret) into a
  guest booted from the same image and flavor, outside nova (its domain
  name does not match ``instance_name_template``, so neither the
  reconciler nor the audit looks at it).
* :func:`leak_snapshot`: the ledgers a leak would show in.
* :func:`chart`: the PNG (matplotlib, Agg backend).
"""

import os
import secrets
import shutil
import statistics
import tempfile
import time
import uuid

import libvirt
import sqlalchemy as sa

import journey
from minicinder.volume import lvm
from minicinder.volume import tgt
from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import guest_agent
from minicompute.virt.libvirt import instance_files
from ministack import executor
from ministack import images

STATE_DIR = "/var/lib/ministack"
IMAGES = os.path.join(STATE_DIR, "images")
DAEMONS = ("miniapi", "minicompute", "minicinder")
STATUS_DIR = "/opt/stack/status"

# sh script run in the guest: $1 serial, $2 present|absent, $3 max polls.
# Builtins only (read, test) apart from sleep: a fork per probe is slow
# under TCG.
WAIT_SCRIPT = r"""
n=0
while [ $n -lt "$3" ]; do
  found=absent
  for f in /sys/block/vd*/serial; do
    [ -r "$f" ] || continue
    s=
    read -r s < "$f"   # no trailing newline: non-zero, but s is set
    [ "$s" = "$1" ] && found=present && break
  done
  [ $found = "$2" ] && exit 0
  n=$((n+1))
  sleep 0.02
done
exit 2
"""


class ReauthCloud:
    """journey.Cloud that takes a new token on 401 (long soaks outlive
    one) and pools enough connections for the concurrent phase."""

    def __init__(self, name):
        self.name = name
        self._login()

    def _login(self):
        import requests.adapters
        self._cloud = journey.Cloud.from_clouds_yaml(self.name)
        adapter = requests.adapters.HTTPAdapter(pool_maxsize=64)
        self._cloud.http.mount("http://", adapter)

    def _call(self, kind, *args, **kwargs):
        resp = getattr(self._cloud, kind)(*args, **kwargs)
        if resp.status_code == 401:
            self._login()
            resp = getattr(self._cloud, kind)(*args, **kwargs)
        return resp

    def compute(self, *args, **kwargs):
        return self._call("compute", *args, **kwargs)

    def volume(self, *args, **kwargs):
        return self._call("volume", *args, **kwargs)


def domain_name(nova_db, server_id, template):
    return journey.Ledgers(nova_db).domain_name(server_id, template)


class GuestWaiter:
    """Waits in the guest for ``serial`` to be present (or absent)."""

    def __init__(self, domain, serial, present, timeout=180):
        self.domain = domain
        self.finished_at = None
        self.exit_code = None
        self.pid = guest_agent.agent_command(domain, "guest-exec", {
            "path": "/bin/sh", "arg": [
                "-c", WAIT_SCRIPT, "sh", serial,
                "present" if present else "absent", str(int(timeout / .02))],
            "capture-output": True})["pid"]

    def done(self):
        if self.finished_at is None:
            status = guest_agent.agent_command(
                self.domain, "guest-exec-status", {"pid": self.pid})
            if status.get("exited"):
                self.finished_at = time.perf_counter()
                self.exit_code = status.get("exitcode")
                if self.exit_code:
                    raise SystemExit("guest waiter failed (exit %s)"
                                     % self.exit_code)
        return self.finished_at is not None

    def wait(self, timeout=180):
        deadline = time.monotonic() + timeout
        while not self.done():
            if time.monotonic() > deadline:
                raise SystemExit("guest waiter timed out")
            time.sleep(0.02)
        return self.finished_at


def guest_serials(domain):
    """``[(dev, serial), ...]`` of the guest's virtio disks."""
    rc, out, err = guest_agent.guest_exec(domain, [
        "/bin/sh", "-c", "for d in /sys/block/vd*; do echo ${d##*/} "
        "$(cat $d/serial 2>/dev/null); done"], timeout=60, interval=0.05)
    return [tuple((line.split() + [""])[:2]) for line in out.splitlines()
            if line.strip()]


class Floor:
    """The raw floor: LV + tgt target (CHAP, ACL) + secret + attachDevice.

    Keeps what it created so :meth:`cleanup` can undo it after a failure.
    """

    DEV = "vdb"

    def __init__(self, conn, vg, run):
        self.conn, self.run = conn, run
        self.lvm = lvm.LVM(vg)
        self.tgt = tgt.TgtAdm()
        self.initiator = "iqn.2004-10.org.ministack:bench-%s" % run
        self.tmp = None
        self.domain = None
        self.lvs, self.targets, self.secrets = set(), set(), set()

    def boot(self, image, memory_mb, virt_type):
        """A transient guest like nova's (same builder, image, flavor)."""
        # In the lab's tmp directory, which QEMU's group may traverse.
        self.tmp = tempfile.mkdtemp(prefix="bench-floor-",
                                    dir=os.path.join(STATE_DIR, "tmp"))
        os.chmod(self.tmp, 0o750)
        files = instance_files.create_boot_files(image, self.tmp)
        xml = config.domain_xml(
            "bench-floor-%s" % self.run, str(uuid.uuid4()),
            kernel=files["kernel"], initrd=files["initrd"],
            cmdline=image["cmdline"], root_disk=files["disk"],
            memory_mib=memory_mb,
            virt_type=virt_type)
        self.domain = self.conn.createXML(xml, 0)
        guest_agent.wait_for_agent(self.domain, timeout=180)
        return self.domain

    def round(self, dom, i):
        """One attach and detach; returns seconds (attached, visible,
        gone, undone)."""
        name = "bench-floor-%s-%d" % (self.run, i)
        iqn = "iqn.2010-10.org.openstack:%s" % name
        usage = "bench-floor-chap-%s" % iqn
        user, password = "bench%s" % secrets.token_hex(4), \
            secrets.token_urlsafe(12)
        serial = ("bf%s%d" % (self.run, i))[:20]
        self.lvs.add(name)
        self.lvm.create_volume(name, 1)
        path = self.lvm.get_device_path(name)
        waiter = GuestWaiter(dom, serial, present=True)
        start = time.perf_counter()
        self.targets.add(iqn)
        self.tgt.create_target(iqn, path, lun=1, chap=(user, password),
                               initiators=[self.initiator])
        self.secrets.add(usage)
        secret = self.conn.secretDefineXML(config.iscsi_secret_xml(usage))
        secret.setValue(password.encode())
        disk = config.iscsi_disk_xml(
            self.DEV, iqn=iqn, lun=1, host="127.0.0.1", serial=serial,
            initiator_iqn=self.initiator, auth_username=user,
            secret_usage=usage)
        dom.attachDeviceFlags(disk, libvirt.VIR_DOMAIN_AFFECT_LIVE)
        attached = time.perf_counter() - start
        visible = waiter.wait() - start
        waiter = GuestWaiter(dom, serial, present=False)
        start = time.perf_counter()
        dom.detachDeviceFlags(disk, libvirt.VIR_DOMAIN_AFFECT_LIVE)
        gone = waiter.wait() - start
        while self.DEV in config.disk_target_devs(dom.XMLDesc(0)):
            time.sleep(0.01)   # QEMU reports the unplug after the guest
        self.tgt.delete_target(iqn)
        self.targets.discard(iqn)
        secret.undefine()
        self.secrets.discard(usage)
        undone = time.perf_counter() - start
        self.lvm.delete_volume(name)
        self.lvs.discard(name)
        return attached, visible, gone, undone

    def shutdown(self):
        if self.domain is not None:
            try:
                self.domain.destroy()
            except libvirt.libvirtError:
                pass
            self.domain = None

    def cleanup(self):
        self.shutdown()   # transient: destroying it also drops the disk
        for iqn in list(self.targets):
            self.tgt.delete_target(iqn)
        for usage in list(self.secrets):
            try:
                self.conn.secretLookupByUsage(
                    libvirt.VIR_SECRET_USAGE_TYPE_ISCSI, usage).undefine()
            except libvirt.libvirtError:
                pass
        for name in list(self.lvs):
            self.lvm.delete_volume(name)
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def describe_guest(args, uri):
    """Fill in args.image_record, memory_mb and virt_type as nova sees
    them, so the floor's guest is the same kind as the stack's."""
    args.image_record = next(
        (i for i in images.list_images(root=IMAGES)
         if args.image in (i["name"], i["id"])), None)
    if args.image_record is None:
        raise SystemExit("image %s is not registered under %s"
                         % (args.image, IMAGES))
    with sa.create_engine(journey.nova_db_url()).connect() as conn:
        row = conn.execute(sa.text(
            "SELECT memory_mb FROM flavors WHERE flavorid=:f"),
            {"f": args.flavor}).first()
    if row is None:
        raise SystemExit("flavor %s not found" % args.flavor)
    args.memory_mb = row[0]
    args.virt_type = journey._ini("/etc/ministack/minicompute.conf").get(
        "libvirt", "virt_type", fallback="qemu")


def vg_free_gib(vg):
    out, _ = executor.execute("vgs", "--config", "global{activation=0}",
                              "--noheadings", "--units", "b", "--nosuffix",
                              "-o", "vg_free", vg)
    return int(out.strip()) / 2 ** 30


def settle_volume(bench, server_id, volume_id, timeout=120):
    """Detach ``volume_id`` wherever it is attached and wait for
    ``available`` (best effort: used after failures and in clean-up)."""
    resp = bench.cloud.volume("GET", "/volumes/%s" % volume_id)
    if not resp.ok:
        return
    volume = resp.json()["volume"]
    servers = {a["server_id"] for a in volume["attachments"]}
    if server_id and volume["status"] in ("reserved", "attaching"):
        servers.add(server_id)
    deadline = time.monotonic() + timeout
    while volume["status"] != "available" and time.monotonic() < deadline:
        if volume["status"] in ("in-use", "reserved", "error_detaching"):
            for sid in servers:
                bench.detach(sid, volume_id)
        time.sleep(1)
        volume = bench.cloud.volume("GET", "/volumes/%s"
                                    % volume_id).json()["volume"]


def _count(url, query):
    with sa.create_engine(url).connect() as conn:
        return conn.execute(sa.text(query)).scalar()


def _pid(daemon):
    try:
        with open(os.path.join(STATUS_DIR, "%s.child.pid" % daemon)) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def leak_snapshot(bench, vg):
    """Counts of everything an attach/detach can leave behind."""
    cinder_db = journey._ini("/etc/ministack/minicinder.conf").get(
        "database", "connection",
        fallback="sqlite:////var/lib/ministack/cinder.sqlite")
    loops, _ = executor.execute("losetup", "--list", "--noheadings")
    disks = 0
    for dom_name in filter(None, bench.servers.values()):
        try:
            xml = bench.conn.lookupByName(dom_name).XMLDesc(0)
            disks += len(config.disk_target_devs(xml))
        except libvirt.libvirtError:
            pass
    snap = {
        "loop devices": len(loops.splitlines()),
        "LVs in %s" % vg: len(lvm.LVM(vg).list_volumes()),
        "tgt targets": len(tgt.TgtAdm().show_targets()),
        "BDMs (nova, not deleted)": _count(
            bench.nova_db, "SELECT COUNT(*) FROM block_device_mapping "
            "WHERE deleted=0 AND volume_id IS NOT NULL"),
        "attachments (cinder, not deleted)": _count(
            cinder_db, "SELECT COUNT(*) FROM volume_attachment "
            "WHERE deleted=0"),
        "disks of bench domains": disks,
        "libvirt secrets": len(bench.conn.listSecrets()),
    }
    for daemon in DAEMONS:
        pid = _pid(daemon)
        if pid is None or not os.path.exists("/proc/%d" % pid):
            continue
        snap["fds %s" % daemon] = len(os.listdir("/proc/%d/fd" % pid))
        snap["RSS KiB %s" % daemon] = _rss_kib(pid)
    return snap


def our_residue(bench, vg, run):
    """What is left of this run's own objects (names with the run id or
    our volume ids), unaffected by other work on the box."""
    marks = [run] + sorted(bench.all_volumes)
    mine = lambda text: any(m in text for m in marks)   # noqa: E731
    left = {
        "LVs": [v["name"] for v in lvm.LVM(vg).list_volumes()
                if mine(v["name"])],
        "targets": [t["iqn"] for t in tgt.TgtAdm().show_targets()
                    if mine(t["iqn"])],
        "secrets": [s.usageID() for s in (
            bench.conn.secretLookupByUUIDString(u)
            for u in bench.conn.listSecrets()) if mine(s.usageID() or "")],
        "domains": [],
        "volumes": [],
    }
    for sid in bench.all_servers:
        if bench.cloud.compute("GET", "/servers/%s" % sid).status_code != 404:
            left["domains"].append(sid)
    for vid in bench.all_volumes:
        if bench.cloud.volume("GET", "/volumes/%s" % vid).status_code != 404:
            left["volumes"].append(vid)
    try:
        bench.conn.lookupByName("bench-floor-%s" % run)
        left["domains"].append("bench-floor-%s" % run)
    except libvirt.libvirtError:
        pass
    return {k: v for k, v in left.items() if v}


def chart(results, path):
    """Write the PNG; None when matplotlib is missing or nothing ran."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    lat, soak = results.get("latency"), results.get("soak")
    conc = results.get("concurrency")
    panels = [p for p in (lat, conc, soak and soak["cycles"]) if p]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 5))
    axes = list(axes) if len(panels) > 1 else [axes]
    if lat:
        ax = axes.pop(0)
        keys = [("api_in_use", "attach\nin-use"),
                ("api_visible", "attach\nguest"),
                ("floor_visible", "floor\nattach"),
                ("api_available", "detach\navailable"),
                ("api_gone", "detach\nguest"),
                ("floor_gone", "floor\ndetach")]
        data = [[x * 1000 for x in lat[k] if x is not None] for k, _ in keys]
        ax.boxplot(data, tick_labels=[label for _, label in keys])
        ax.set_ylabel("ms from request accepted")
        ax.set_title("attach/detach latency (n=%d)" % len(lat["api_visible"]))
    if conc:
        ax = axes.pop(0)
        ax.bar(["attach all", "detach all"],
               [conc["attach_wall"], conc["detach_wall"]])
        ax.set_ylabel("wall seconds")
        ax.set_title("%d servers x %d volumes at once (%d/%d errors)" % (
            conc["g"], conc["v"], conc["attach_errors"],
            conc["detach_errors"]))
    if soak and soak["cycles"]:
        ax = axes.pop(0)
        cycles = soak["cycles"]
        ax.plot([c[0] * 1000 for c in cycles], label="attach -> in-use")
        ax.plot([c[1] * 1000 for c in cycles], label="detach -> available")
        ax.set_xlabel("cycle")
        ax.set_ylabel("ms")
        ax.set_title("soak: %d cycles, median attach %.0f ms" % (
            len(cycles), statistics.median(c[0] for c in cycles) * 1000))
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
