"""Growing a volume's logical volume: detached (moved when it must) and
attached (in place, live), with the loop devices over it following.

Functions of the LVM adapter (:class:`minicinder.volume.drivers.lvm.LVM`)
they are handed; the driver orders them with the export around them.

**Detached** (``os-extend`` of an available volume): the driver has
removed the export and released the loop devices (both hold the old
extent range); the LV grows, or, without device-mapper when the extents
after it are taken, its data moves to a new contiguous LV
(:func:`relocate`).

**Attached** (3.42, a guest is using the LUN through QEMU's iSCSI
initiator): nothing may go away. What LVM, the loop driver, tgt and QEMU
do here was established on this lab (LVM 2.03.16 without
device-mapper, util-linux 2.38.1, Linux 6.18, tgt 1.0.85, QEMU 7.2):

1. ``lvextend --alloc contiguous`` grows an LV in place when the
   extents right after it are free (metadata only, activation off) and
   fails ("Insufficient suitable contiguous allocatable extents") when
   they are taken: then nothing changed, and the volume goes back to
   ``in-use`` at its size (upstream's "No valid backend" for an
   extend). :meth:`LVM.create_volume` places every new LV with its own
   size of room after it, for that.
2. The loop device over the LV keeps its old ``--sizelimit``:
   ``losetup -c`` cannot lift it, the ``LOOP_SET_STATUS64`` ioctl can,
   live, under tgtd's open file and a running write
   (:mod:`minicinder.volume.drivers.loop_device`).
3. tgt answers READ CAPACITY with the size it read when it opened the
   backing store: ``tgtadm --op update --mode logicalunit --params
   online=0,path=<the same loop>`` reopens it in one request; ``path``
   alone is refused while the LUN is online. A guest writing through it
   meanwhile saw no error. (The driver's step, after these.)
4. QEMU then grows its iSCSI disk on ``block_resize`` (libvirt's
   ``virDomainBlockResize``, nova's part) to exactly the LUN's new size;
   before the LUN reports it, QEMU answers "Cannot grow iSCSI devices".

Each step undoes the previous on failure: a loop that cannot grow
shrinks the LV back (its new extents were never exposed).
"""

import logging

from minicinder.volume.drivers import lvm

LOG = logging.getLogger(__name__)


def grow(vg, name, new_size, volume_clear):
    """Grow detached LV ``name`` to ``new_size`` GiB: in place when the
    extents after it are free, else by :func:`relocate`."""
    try:
        vg.extend_volume(name, new_size)
    except lvm.NoContiguousSpace:
        relocate(vg, name, new_size, volume_clear)


def relocate(vg, name, new_size, volume_clear):
    """Copy LV ``name`` into a zeroed LV of ``new_size`` GiB, then swap
    names and wipe the old one.

    The names swap only after the copy, so an interruption leaves the
    volume's data under its name (before the swap) or under
    ``<name>.old`` (between the two renames), never lost.
    """
    grown, old = name + ".grow", name + ".old"
    LOG.warning("LV %s cannot grow in place; moving it to a new LV of "
                "%s GiB", name, new_size)
    vg.create_volume(grown, new_size)
    try:
        vg.clear_volume(grown)
        vg.copy_volume(name, grown)
    except Exception:
        wipe_and_remove(vg, grown, volume_clear)
        raise
    vg.release_device(grown)
    vg.rename_volume(name, old)
    vg.rename_volume(grown, name)
    wipe_and_remove(vg, old, volume_clear)


def wipe_and_remove(vg, name, volume_clear):
    """Remove LV ``name``, zeroed first when ``volume_clear`` is
    ``zero`` (its extents go back to the group)."""
    if volume_clear == "zero":
        vg.clear_volume(name)
    vg.delete_volume(name)


def grow_live(vg, name, old_size, new_size):
    """Grow attached LV ``name`` from ``old_size`` to ``new_size`` GiB in
    place, its loop devices with it (steps 1 and 2).

    :raises lvm.NoContiguousSpace: the extents after the LV are taken
        (nothing changed).
    """
    if vg.device_mapper:
        # The active LV's device grows with it.
        vg.extend_volume(name, new_size)
        return
    old_range = vg.extent_range(name)
    vg.extend_volume(name, new_size)
    try:
        vg.grow_loops(name, old_range)
    except Exception:
        LOG.exception("Growing the loop devices of %s failed; "
                      "shrinking the LV back", name)
        vg.reduce_volume(name, old_size)
        raise
