"""Logical volumes in one LVM volume group, as block devices.

The adapter between minicinder's LVM driver and the ``lvm2`` commands (and
``losetup`` / ``blkdiscard`` / ``dd``). Every command goes through the
injected ``execute`` (default :func:`ministack.executor.execute`) with an
argv list, so unit tests pass a recording fake.

Two worlds, detected once per :class:`LVM` object with ``dmsetup version``:

* **device-mapper present** (a normal host): LVs are activated and the
  block device is ``/dev/<vg>/<lv>``.
* **no device-mapper** (this lab's kernel): LVM still keeps its metadata
  (every command runs with ``--config global{activation=0}``), but an LV
  cannot be activated. Because volumes are created ``--alloc contiguous``,
  an LV is one run of extents on one PV, and a loop device over exactly
  that byte range (``losetup -o OFFSET --sizelimit SIZE PV``) *is* the
  volume. :meth:`LVM.get_device_path` finds such a loop or creates it;
  :meth:`LVM.release_device` detaches it.

Errors: commands that fail raise
:class:`ministack.exception.ProcessExecutionError`; asking for the device
of an LV that does not exist raises :class:`VolumeNotFound`. The driver
translates both into its own exceptions.
"""

import logging
import threading

from minicinder.volume import locks
from minicinder.volume.drivers import loop_device
from ministack import exception
from ministack import executor

LOG = logging.getLogger(__name__)

# lvcreate/lvs/... option that keeps LVM away from device-mapper.
NO_ACTIVATION = ("--config", "global{activation=0}")


class VolumeNotFound(exception.NotFound):
    msg_fmt = "Logical volume %(vg)s/%(name)s does not exist."


class NoContiguousSpace(exception.MinistackException):
    msg_fmt = ("Logical volume %(vg)s/%(name)s cannot grow in place: the "
               "extents after it are taken.")


class NotContiguous(exception.MinistackException):
    msg_fmt = ("Logical volume %(vg)s/%(name)s is not one contiguous "
               "segment (%(ranges)s); it cannot be mapped by a loop device.")


class LVM:
    """The volumes of volume group ``vg_name``.

    :param execute: command runner with :func:`ministack.executor.execute`'s
        signature.
    :param device_mapper: force the mode (tests); None detects it.
    """

    def __init__(self, vg_name, execute=executor.execute, device_mapper=None,
                 resize_loop=loop_device.set_sizelimit):
        """:param resize_loop: ``(loop path, size)``: grows a bound loop
            device
            (:func:`minicinder.volume.drivers.loop_device.set_sizelimit`).
        """
        self.vg_name = vg_name
        self._execute = execute
        self._device_mapper = device_mapper
        self._resize_loop = resize_loop
        # Serialises find-or-create of loop devices within this process, so
        # two concurrent exports of one volume don't map it twice.
        self._loop_lock = threading.Lock()

    # --- helpers ---

    @property
    def device_mapper(self):
        """True when the kernel has device-mapper (checked once)."""
        if self._device_mapper is None:
            # dmsetup prints "Driver version" only when it reached the
            # kernel; without dm it exits 1 (not an error worth a warning).
            out, _ = self._execute("dmsetup", "version",
                                   check_exit_code=False)
            self._device_mapper = "Driver version" in out
            LOG.info("device-mapper %s: LVs are reached %s",
                     "present" if self._device_mapper else "missing",
                     "through /dev/%s" % self.vg_name
                     if self._device_mapper else "through loop devices")
        return self._device_mapper

    def _lvm(self, command, *args, **kwargs):
        """Run an lvm2 command, without activation when dm is missing."""
        argv = [command]
        if not self.device_mapper:
            argv.extend(NO_ACTIVATION)
        argv.extend(args)
        return self._execute(*argv, **kwargs)

    def _lv(self, name):
        return "%s/%s" % (self.vg_name, name)

    # --- volumes ---

    def list_volumes(self):
        """The LVs of the group: ``[{"name": ..., "size": bytes}, ...]``."""
        out, _ = self._lvm("lvs", "--noheadings", "--units", "b",
                           "--nosuffix", "--separator", "|",
                           "-o", "lv_name,lv_size", self.vg_name)
        volumes = []
        for line in out.splitlines():
            if line.strip():
                name, size = line.strip().split("|")
                volumes.append({"name": name, "size": int(size)})
        return volumes

    def volume_exists(self, name):
        return any(v["name"] == name for v in self.list_volumes())

    def create_volume(self, name, size_gb):
        """Create LV ``name`` of ``size_gb`` GiB, contiguous (idempotent).

        Contiguous allocation is what lets a single loop device map the
        volume when device-mapper is missing.
        """
        if self.volume_exists(name):
            LOG.info("LV %s already exists", self._lv(name))
            return
        args = ["-n", name, "-L", "%dg" % size_gb, "--alloc", "contiguous",
                "--yes"]
        if self.device_mapper:
            LOG.info("Creating LV %s (%s GiB)", self._lv(name), size_gb)
            self._lvm("lvcreate", *args, self.vg_name)
            return
        # Nothing can be activated or zeroed without device-mapper.
        args.extend(["-an", "-Zn"])
        # The extents are chosen, then taken: two creates at once (API
        # workers are processes) must not choose the same range, nor a
        # create the room an extend is growing into.
        with locks.lock(self._extents_lock):
            where = self._room_to_grow(size_gb)
            LOG.info("Creating LV %s (%s GiB)%s", self._lv(name), size_gb,
                     " at %s" % where[0] if where else "")
            self._lvm("lvcreate", *args, self.vg_name, *where)

    @property
    def _extents_lock(self):
        return "minicinder-vg-extents-%s" % self.vg_name

    def _room_to_grow(self, size_gb):
        """Where a new contiguous LV should go so it can grow in place.

        LVM's contiguous allocation is first fit: a new LV fills the first
        hole it fits and the next LV is created right after it, so an LV
        could never grow while attached (its loop device must stay one
        run of extents). Instead the LV goes into the largest free area,
        at the end of it less its own size of room (it can double in
        place), and the rest of the area stays one piece before it.

        :returns: ``("PV:first-last",)`` for ``lvcreate``, or ``()`` to
            let LVM choose (no area fits: lvcreate then says so).
        """
        out, _ = self._lvm("pvs", "--noheadings", "--segments",
                           "--separator", "|", "-o",
                           "pv_name,vg_name,pvseg_start,pvseg_size,lv_name,"
                           "vg_extent_size", "--units", "b", "--nosuffix")
        free = []
        extent = None
        for line in out.splitlines():
            fields = [f.strip() for f in line.split("|")]
            if len(fields) != 6 or fields[1] != self.vg_name:
                continue
            extent = int(fields[5])
            if not fields[4]:
                free.append((int(fields[3]), fields[0], int(fields[2])))
        if not free or not extent:
            return ()
        needed = -(-size_gb * 1024 ** 3 // extent)
        length, pv, start = max(free, key=lambda area: (area[0], -area[2]))
        if length < needed:
            return ()
        slack = length - needed
        first = start + slack - min(slack // 2, needed)
        return ("%s:%d-%d" % (pv, first, first + needed - 1),)

    def extend_volume(self, name, size_gb):
        """Grow LV ``name`` to ``size_gb`` GiB in place.

        Without device-mapper the LV must stay one run of extents (a loop
        device maps exactly one), so the new extents must directly follow
        it. Release the LV's loop devices first: they map the old range.

        :raises NoContiguousSpace: those extents are taken (nothing
            changed; see :meth:`copy_volume` to move the data instead).
        """
        args = ["-L", "%dg" % size_gb]
        if not self.device_mapper:
            args.extend(["--alloc", "contiguous"])
        LOG.info("Extending LV %s to %s GiB", self._lv(name), size_gb)
        try:
            with locks.lock(self._extents_lock):
                self._lvm("lvextend", *args, self._lv(name))
        except exception.ProcessExecutionError as exc:
            if not self.device_mapper and "contiguous" in (exc.stderr or ""):
                raise NoContiguousSpace(vg=self.vg_name, name=name) from exc
            raise

    def reduce_volume(self, name, size_gb):
        """Shrink LV ``name`` back to ``size_gb`` GiB: only the undo of an
        in-place extend whose new extents were never exposed."""
        LOG.info("Reducing LV %s back to %s GiB", self._lv(name), size_gb)
        self._lvm("lvreduce", "-f", "-L", "%dg" % size_gb, self._lv(name))

    def grow_loops(self, name, old_range):
        """Grow the loop devices over ``old_range`` (``extent_range``
        before LV ``name`` grew in place) to its new range, live: tgtd
        keeps its LUN open on them (no-op with device-mapper).

        :returns: the loop devices grown.
        """
        if self.device_mapper:
            return []
        pv, offset, size = self.extent_range(name)
        if (pv, offset) != old_range[:2]:
            raise NotContiguous(vg=self.vg_name, name=name,
                                ranges="moved from %s:%s" % old_range[:2])
        with self._loop_lock:
            loops = self.find_loops(*old_range)
            for loop in loops:
                self._resize_loop(loop, size)
        return loops

    def rename_volume(self, name, new_name):
        """Rename LV ``name`` (its loop devices are released first)."""
        self.release_device(name)
        LOG.info("Renaming LV %s to %s", self._lv(name), new_name)
        self._lvm("lvrename", self.vg_name, name, new_name)

    def copy_volume(self, source, target):
        """Copy LV ``source``'s data onto the start of LV ``target``,
        which must already read as zeroes (:meth:`clear_volume`): zero
        blocks are skipped (``conv=sparse``), so a copy onto a loop over
        a sparse file does not allocate them."""
        src, dst = self.get_device_path(source), self.get_device_path(target)
        size_mib = self.extent_range(source)[2] // (1024 * 1024) \
            if not self.device_mapper else None
        LOG.info("Copying LV %s to %s", self._lv(source), self._lv(target))
        count = ["count=%d" % size_mib] if size_mib else []
        self._execute("dd", "if=%s" % src, "of=%s" % dst, "bs=1M", *count,
                      "conv=sparse,fsync", timeout=3600)

    def delete_volume(self, name):
        """Remove LV ``name`` and any loop over it (missing LV: no-op).

        Does not wipe; call :meth:`clear_volume` first for that.
        """
        if not self.volume_exists(name):
            LOG.info("LV %s already gone", self._lv(name))
            return
        self.release_device(name)
        LOG.info("Removing LV %s", self._lv(name))
        self._lvm("lvremove", "-f", self._lv(name))

    def clear_volume(self, name):
        """Zero the whole volume (cinder's ``volume_clear = zero``).

        Without device-mapper the volume is a loop device, and a loop
        device turns a discard into ``fallocate(PUNCH_HOLE)`` of what is
        under it: the range reads back as zeroes and, over the lab's
        sparse backing file, its disk space is given back. ``blkdiscard
        -z`` there would do the opposite (``FALLOC_FL_ZERO_RANGE``
        allocates every block: deleting 200 volumes once filled the host's
        disk). Other devices are asked to write zeroes (``blkdiscard
        -z``); a device that refuses either gets ``dd``.
        """
        path = self.get_device_path(name)
        punch = path.startswith("/dev/loop")
        LOG.info("Zeroing %s (%s) by %s", self._lv(name), path,
                 "discard" if punch else "write-zeroes")
        try:
            self._execute("blkdiscard", *(() if punch else ("-z",)), path,
                          timeout=600)
        except exception.ProcessExecutionError:
            size_mib = self.extent_range(name)[2] // (1024 * 1024)
            self._execute("dd", "if=/dev/zero", "of=%s" % path, "bs=1M",
                          "count=%d" % size_mib, "oflag=direct",
                          "conv=fsync", timeout=3600)

    # --- block devices ---

    def get_device_path(self, name):
        """A block device for LV ``name`` (created on demand, idempotent).

        :returns: ``/dev/<vg>/<name>`` with device-mapper, else the loop
            device over the LV's extents.
        :raises VolumeNotFound: no such LV.
        """
        if self.device_mapper:
            if not self.volume_exists(name):
                raise VolumeNotFound(vg=self.vg_name, name=name)
            self._execute("lvchange", "-ay", self._lv(name))
            return "/dev/%s/%s" % (self.vg_name, name)
        pv, offset, size = self.extent_range(name)
        with self._loop_lock:
            existing = self.find_loops(pv, offset, size)
            if existing:
                return existing[0]
            out, _ = self._execute("losetup", "--show", "-f", "-o", offset,
                                   "--sizelimit", size, pv)
            loop = out.strip()
            LOG.info("Mapped %s to %s (%s bytes at %s on %s)",
                     self._lv(name), loop, size, offset, pv)
            return loop

    def release_device(self, name):
        """Detach every loop device over LV ``name`` (no-op with dm)."""
        if self.device_mapper:
            return
        try:
            pv, offset, size = self.extent_range(name)
        except VolumeNotFound:
            return
        with self._loop_lock:
            for loop in self.find_loops(pv, offset, size):
                LOG.info("Detaching %s from %s", loop, self._lv(name))
                self._execute("losetup", "-d", loop)

    def extent_range(self, name):
        """``(pv, byte offset, byte size)`` of contiguous LV ``name``.

        :raises VolumeNotFound: no such LV.
        :raises NotContiguous: the LV has more than one segment.
        """
        out, _ = self._lvm("lvs", "--noheadings", "--units", "b",
                           "--nosuffix", "--separator", "|",
                           "-o", "lv_name,seg_pe_ranges,vg_extent_size",
                           self.vg_name)
        segments = [fields for fields in
                    (line.strip().split("|") for line in out.splitlines())
                    if fields[0] == name]
        if not segments:
            raise VolumeNotFound(vg=self.vg_name, name=name)
        ranges = [s[1] for s in segments]
        # One segment on one PV: "/dev/loop0:25-49".
        if len(ranges) != 1 or " " in ranges[0].strip():
            raise NotContiguous(vg=self.vg_name, name=name,
                                ranges=" ".join(ranges))
        pv, extents = ranges[0].strip().rsplit(":", 1)
        first, last = (int(x) for x in extents.split("-"))
        extent_size = int(segments[0][2])
        out, _ = self._lvm("pvs", "--noheadings", "--units", "b",
                           "--nosuffix", "-o", "pe_start", pv)
        pe_start = int(out.strip())
        return (pv, pe_start + first * extent_size,
                (last - first + 1) * extent_size)

    def find_loops(self, backing, offset, size):
        """Loop devices over exactly ``size`` bytes at ``offset`` of
        ``backing`` (see :meth:`extent_range`)."""
        return [loop["name"] for loop in self._loops()
                if (loop["backing"], loop["offset"], loop["size"]) ==
                (backing, offset, size)]

    def _loops(self):
        out, _ = self._execute("losetup", "--list", "--noheadings", "--raw",
                               "--output", "NAME,OFFSET,SIZELIMIT,BACK-FILE")
        loops = []
        for line in out.splitlines():
            fields = line.split(" ", 3)
            if len(fields) != 4:
                continue
            loops.append({"name": fields[0], "backing": fields[3].strip(),
                          "offset": int(fields[1]), "size": int(fields[2])})
        return loops

    # --- the group's own devices (ministack-audit) ---

    def physical_volumes(self):
        """The names of the group's physical volumes."""
        out, _ = self._execute(*(("pvs",) + NO_ACTIVATION + (
            "--noheadings", "-o", "pv_name,vg_name")))
        return {fields[0] for fields in (line.split()
                                         for line in out.splitlines())
                if len(fields) == 2 and fields[1] == self.vg_name}

    def loop_devices(self):
        """Every loop device over one of the group's physical volumes:
        ``[{"name", "backing", "offset", "size"}]`` (one per LV in use
        without device-mapper, or left behind)."""
        pvs = self.physical_volumes()
        return [loop for loop in self._loops() if loop["backing"] in pvs]

    def detach_loop(self, loop):
        """Detach loop device ``loop``; one already gone is fine."""
        out, _ = self._execute("losetup", "--list", "--noheadings",
                               "--output", "NAME")
        if loop in out.split():
            self._execute("losetup", "-d", loop)
