"""The ledgers a leak would show in, for tools/bench_attach.py.

:func:`leak_snapshot` counts everything an attach/detach can leave
behind, host-wide (loop devices, LVs, targets, BDMs, attachments, domain
disks, the libvirt secrets of the compute host the bench runs on) and
the three daemons' file descriptors and RSS;
:func:`our_residue` lists what is left of one run's own objects.
"""

import os

import libvirt
import sqlalchemy as sa

import bench_cinder_load as load
import journey
from minicinder.volume.drivers import lvm
from minicinder.volume.targets import tgt
from minicompute.virt.libvirt import config
from ministack import executor

DAEMONS = ("miniapi", "minicompute", "minicinder")
STATUS_DIR = "/opt/stack/status"


def _count(url, query):
    with sa.create_engine(url).connect() as conn:
        return conn.execute(sa.text(query)).scalar()


def daemon_pid(daemon):
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
    for sid, dom_name in list(bench.servers.items()):
        if not dom_name:
            continue
        try:    # through the server's own host's libvirtd
            xml = bench.domain(sid).XMLDesc(0)
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
        pid = daemon_pid(daemon)
        if pid is None or not os.path.exists("/proc/%d" % pid):
            continue
        # minicinder's API worker processes, each on its own line.
        for n, member in enumerate(load.process_tree(pid)):
            name = daemon if not n else "%s worker %d" % (daemon, n)
            snap["fds %s" % name] = len(os.listdir("/proc/%d/fd" % member))
            snap["RSS KiB %s" % name] = _rss_kib(member)
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
        # In every libvirtd the run reached (the floors' host's, and the
        # hosts the scale run's servers landed on).
        "secrets": [s.usageID() for conn in bench.conns.values()
                    for s in (conn.secretLookupByUUIDString(u)
                              for u in conn.listSecrets())
                    if mine(s.usageID() or "")],
        "domains": [],
        "volumes": [],
    }
    for sid in bench.all_servers:
        if bench.cloud.compute("GET", "/servers/%s" % sid).status_code != 404:
            left["domains"].append(sid)
    for vid in bench.all_volumes:
        if bench.cloud.volume("GET", "/volumes/%s" % vid).status_code != 404:
            left["volumes"].append(vid)
    # The latency floor's guest, bench-floor-<run>, and the concurrent
    # floor's, bench-floor-<run>-c<i>.
    left["domains"] += [d.name() for d in bench.conn.listAllDomains()
                        if d.name() == "bench-floor-%s" % run
                        or d.name().startswith("bench-floor-%s-" % run)]
    return {k: v for k, v in left.items() if v}
