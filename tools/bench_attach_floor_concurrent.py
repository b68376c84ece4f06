"""The concurrent raw floor of tools/bench_attach.py: g x v disks by hand.

The stack's concurrent phase (``bench_attach_concurrency``) attaches ``g``
servers x ``v`` volumes at once through the API and then detaches them at
once. Those wall times are judged against a floor that does the same
number of disks at once *by hand*, so :class:`ConcurrentFloor` does:

* ``g`` transient guests booted by :meth:`bench_attach_floor.Floor.boot`
  (same builder, image and flavor as nova's), all started before any
  waiting so they boot in parallel, while nothing is timed;
* one LV per disk created beforehand, outside the timed part, as the
  stack phase creates its volumes first (and its loop device, as
  :meth:`Floor.round` maps it before its clock starts);
* **attach all**, timed: a thread per disk makes the tgt target (CHAP,
  initiator ACL), the libvirt CHAP secret and ``attachDeviceFlags`` as
  ``vdb``, ``vdc``, ... of its guest; the clock stops when every guest
  shows all its serials, probed the way the stack phase's settle probes
  them (:func:`bench_attach_probes.guest_serials`, every 0.2 s);
* **detach all**, timed: a thread per disk asks for the unplug, waits for
  libvirt's ``DEVICE_REMOVED`` event (as minicompute does, through
  :class:`minicompute.virt.libvirt.host.Host`), then deletes the target
  and the secret; the clock stops when that is done for every disk and no
  guest shows any of the serials.

tgt picks target ids as "highest + 1", so target creation and deletion
are serialised in this process and retried when another process took the
id, as minicinder's LVM driver does: that is what a correct concurrent
export costs, not overhead.

On a lab of several compute hosts the guests, secrets and removal events
are those of the libvirtd of the host the bench runs on (``uri``), the
disks name the lab's portal and present that host's initiator name
(``bench_attach_hosts``).

Each guest's :class:`Floor` records its domain, LVs, targets and secrets
before they exist, so :meth:`ConcurrentFloor.cleanup` (called by the
phase and again by the bench's clean-up, also after a failure or Ctrl-C)
removes whatever was made.
"""

import collections
import concurrent.futures
import secrets
import threading
import time
import xml.etree.ElementTree as ET

import libvirt

from bench_attach_floor import Floor
from bench_attach_hosts import DEFAULT_PORTAL
import bench_attach_probes as probes
from bench_attach_report import say
from minicompute.virt import device_names
from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import guest_agent
from minicompute.virt.libvirt import host as libvirt_host
from ministack import exception

#: g TCG guests booting at once on 2 cores (10 at once once missed 120 s).
BOOT_TIMEOUT = 600
SETTLE_TIMEOUT = 180
TARGET_RETRIES = 3

Disk = collections.namedtuple("Disk", "guest dev name iqn usage serial")


def plan(run, g, v):
    """The ``g * v`` disks, guest by guest: device names ``vdb``, ``vdc``,
    ... in each guest (``vda`` is its root disk), LV/target/secret names
    that carry the run id (the bench's residue check finds them by it) and
    serials unique within the run, at most 20 characters (virtio's
    limit)."""
    disks = []
    for gi in range(g):
        for vi in range(v):
            name = "bench-floor-%s-c%d-%d" % (run, gi, vi)
            iqn = "iqn.2010-10.org.openstack:%s" % name
            disks.append(Disk(
                guest=gi, dev=device_names.generate_device_name("vd", vi + 1),
                name=name, iqn=iqn, usage="bench-floor-chap-%s" % iqn,
                serial="bc%sg%dv%d" % (run, gi, vi)))
    return disks


def settled(disks, want, present):
    """Whether a guest's ``[(dev, serial), ...]`` shows every serial of
    ``want`` (``present``) or none of them (not ``present``)."""
    ours = {serial for _, serial in disks if serial in want}
    return ours == set(want) if present else not ours


def disk_aliases(xml_text):
    """``{target dev: alias}`` of a live domain's disks (the alias is what
    libvirt's DEVICE_REMOVED event names)."""
    aliases = {}
    for disk in ET.fromstring(xml_text).findall("./devices/disk"):
        target, alias = disk.find("target"), disk.find("alias")
        if target is not None and alias is not None:
            aliases[target.get("dev")] = alias.get("name")
    return aliases


class Stopped(Exception):
    """The phase is being cleaned up: a worker stops where it is."""


class ConcurrentFloor:
    """``g`` floor guests x ``v`` disks attached at once, then detached.

    :meth:`boot` first (untimed), then :meth:`run` as often as wanted,
    :meth:`cleanup` always.
    """

    def __init__(self, conn, vg, run, uri="qemu:///system",
                 portal=DEFAULT_PORTAL, initiator=None):
        """:param uri: the libvirtd of ``conn`` (its events are watched
            on a connection of their own).
        :param portal, initiator: as :class:`Floor`'s."""
        self.conn, self.vg, self.run_id = conn, vg, run
        self.uri, self.portal, self.initiator = uri, portal, initiator
        self.floors = []        # a Floor per guest: domain, LVs, targets...
        self.events = None      # minicompute's Host: DEVICE_REMOVED events
        self._pool = None
        self._tgt_lock = threading.Lock()
        self._closing = threading.Event()
        self._waiters = []      # pending removal waiters, released on stop
        self._xml = {}          # disk name -> the disk XML attached
        self._secrets = {}      # disk name -> virSecret

    # --- set-up ----------------------------------------------------------

    def boot(self, g, image, memory_mb, virt_type):
        """Boot ``g`` guests at once and wait for their agents (here, in
        the main thread, so Ctrl-C interrupts the wait)."""
        self._closing.clear()
        self.events = libvirt_host.Host(self.uri)
        self.events.get_connection()   # event loop + callbacks, before use
        for i in range(g):
            floor = Floor(self.conn, self.vg, "%s-c%d" % (self.run_id, i),
                          portal=self.portal, initiator=self.initiator)
            self.floors.append(floor)
            floor.boot(image, memory_mb, virt_type, wait=False)
        deadline = time.monotonic() + BOOT_TIMEOUT
        for floor in self.floors:
            guest_agent.wait_for_agent(
                floor.domain, timeout=max(1, deadline - time.monotonic()))

    # --- the timed phases --------------------------------------------------

    def run(self, v, mark=lambda phase: None):
        """Attach ``v`` disks to each guest at once, then detach them at
        once; returns the wall times and error counts. ``mark(phase)``
        is called as each timed part starts (and with None as it ends),
        for a CPU sampler."""
        disks = plan(self.run_id, len(self.floors), v)
        paths = {}
        for disk in disks:      # untimed, as the stack's volume creation
            floor = self.floors[disk.guest]
            floor.lvs.add(disk.name)
            floor.lvm.create_volume(disk.name, 1)
            paths[disk.name] = floor.lvm.get_device_path(disk.name)
        result = {"g": len(self.floors), "v": v}
        self._pool = concurrent.futures.ThreadPoolExecutor(len(disks))
        try:
            mark("floor attach-all")
            start = time.perf_counter()
            failed = self._all(self._attach, disks, paths)
            attached = [d for d in disks if d.name not in failed]
            unsettled = self._settle(attached, present=True)
            result["attach_wall"] = time.perf_counter() - start
            mark(None)
            result["attach_errors"] = len(failed) + unsettled
            aliases = {i: disk_aliases(f.domain.XMLDesc(0))
                       for i, f in enumerate(self.floors)}
            mark("floor detach-all")
            start = time.perf_counter()
            failed = self._all(self._detach, attached, aliases)
            unsettled = self._settle(attached, present=False)
            result["detach_wall"] = time.perf_counter() - start
            mark(None)
            result["detach_errors"] = len(failed) + unsettled
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
        for disk in disks:
            if disk.iqn not in self.floors[disk.guest].targets:
                self.floors[disk.guest].lvm.delete_volume(disk.name)
                self.floors[disk.guest].lvs.discard(disk.name)
        return result

    def _all(self, step, disks, extra):
        """``step(disk, extra)`` for every disk at once, a thread each;
        returns ``{disk name: error}`` of those that failed."""
        futures = {self._pool.submit(step, d, extra): d for d in disks}
        failed = {}
        for future in concurrent.futures.as_completed(futures):
            error = future.exception()
            if error is not None:
                failed[futures[future].name] = error
        for name, error in sorted(failed.items())[:3]:
            say("   floor: %s: %s" % (name, error))
        return failed

    def _check(self):
        if self._closing.is_set():
            raise Stopped("cleaning up")

    def _attach(self, disk, paths):
        floor = self.floors[disk.guest]
        user = "bench%s" % secrets.token_hex(4)
        password = secrets.token_urlsafe(12)
        floor.targets.add(disk.iqn)
        for attempt in range(1, TARGET_RETRIES + 1):
            self._check()
            try:
                with self._tgt_lock:
                    floor.tgt.create_target(
                        disk.iqn, paths[disk.name], lun=1,
                        chap=(user, password), initiators=[floor.initiator])
                break
            except exception.ProcessExecutionError:
                # Another process took the same tid: as minicinder, retry.
                if attempt == TARGET_RETRIES:
                    raise
        self._check()
        floor.secrets.add(disk.usage)
        secret = self.conn.secretDefineXML(config.iscsi_secret_xml(
            disk.usage))
        self._secrets[disk.name] = secret
        secret.setValue(password.encode())
        self._xml[disk.name] = floor.disk_xml(
            disk.dev, disk.iqn, disk.serial, user, disk.usage)
        self._check()
        floor.domain.attachDeviceFlags(self._xml[disk.name],
                                       libvirt.VIR_DOMAIN_AFFECT_LIVE)

    def _detach(self, disk, aliases):
        floor = self.floors[disk.guest]
        uuid, alias = floor.domain.UUIDString(), aliases[disk.guest][disk.dev]
        waiter = self.events.expect_removal(uuid, alias)
        self._waiters.append(waiter)
        try:
            self._check()
            floor.domain.detachDeviceFlags(self._xml[disk.name],
                                           libvirt.VIR_DOMAIN_AFFECT_LIVE)
            removed = waiter.wait(SETTLE_TIMEOUT)
        finally:
            self.events.forget_removal(uuid, alias)
        if not removed:
            raise RuntimeError("the guest did not release %s (%s)" % (
                disk.dev, "removal failed" if removed is False
                else "no event within %ss" % SETTLE_TIMEOUT))
        self._check()
        with self._tgt_lock:
            floor.tgt.delete_target(disk.iqn)
        floor.targets.discard(disk.iqn)
        self._secrets.pop(disk.name).undefine()
        floor.secrets.discard(disk.usage)

    def _settle(self, disks, present):
        """Probe each guest until it shows all (or none) of its disks'
        serials, as the stack phase's settle does; returns how many
        guests never got there."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        errors = 0
        for gi in sorted({d.guest for d in disks}):
            want = {d.serial for d in disks if d.guest == gi}
            dom = self.floors[gi].domain
            while not settled(probes.guest_serials(dom), want, present):
                if time.monotonic() > deadline:
                    errors += 1
                    break
                time.sleep(0.2)
        return errors

    # --- clean-up --------------------------------------------------------

    def cleanup(self):
        """Stop the workers, then undo every guest's Floor (domain, LVs,
        targets, secrets, files); safe to call more than once."""
        self._closing.set()
        for waiter in list(self._waiters):
            waiter.set(False)          # a detach worker stops waiting
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        left = []
        for floor in self.floors:
            try:
                floor.cleanup()
            except Exception as exc:   # keep cleaning the others
                say("   cleanup: floor guest %s: %s" % (floor.run, exc))
                left.append(floor)
        self.floors = left
        if self.events is not None:
            self.events.close()
            self.events = None
