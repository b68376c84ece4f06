"""Growing the LVM + tgt driver's volumes: detached (moved when it must)
and attached (in place, live).

A mixin of :class:`minicinder.volume.drivers.lvm_driver.LVMTgtDriver` (it uses
the driver's ``vg``, ``tgt`` and device cache); the boundary where
command failures become :class:`minicinder.exception.VolumeBackendError`
(:func:`translate_errors`) lives here too.

**Detached** (``os-extend`` of an available volume): the export and the
loop devices go first (both hold the old extent range), then the LV
grows; without device-mapper, when the extents after it are taken, its
data moves to a new contiguous LV (:meth:`ExtendMixin._relocate`). The
next connection exports the grown device.

**Attached** (3.42, a guest is using the LUN through QEMU's iSCSI
initiator): nothing may go away. Measured on this lab (LVM 2.03.16
without device-mapper, util-linux 2.38.1, Linux 6.18, tgt 1.0.85, QEMU
7.2; issue 29):

1. ``lvextend --alloc contiguous`` grows an LV in place when the
   extents right after it are free (metadata only, activation off) and
   fails ("Insufficient suitable contiguous allocatable extents") when
   they are taken: then nothing changed, and the volume goes back to
   ``in-use`` at its size (:class:`VolumeCannotExtendInPlace`, upstream's
   "No valid backend" for an extend). :meth:`LVM.create_volume` places
   every new LV with its own size of room after it, for that.
2. The loop device over the LV keeps its old ``--sizelimit``:
   ``losetup -c`` cannot lift it, the ``LOOP_SET_STATUS64`` ioctl can,
   live, under tgtd's open file and a running write
   (:mod:`minicinder.volume.drivers.loop_device`).
3. tgt answers READ CAPACITY with the size it read when it opened the
   backing store: ``tgtadm --op update --mode logicalunit --params
   online=0,path=<the same loop>`` reopens it (about 1 ms, one
   request); ``path`` alone is refused while the LUN is online. A guest
   writing through it meanwhile saw no error.
4. QEMU then grows its iSCSI disk on ``block_resize`` (libvirt's
   ``virDomainBlockResize``, nova's part) to exactly the LUN's new size;
   before the LUN reports it, QEMU answers "Cannot grow iSCSI devices".

Each step undoes the previous on failure: a loop that cannot grow
shrinks the LV back (its new extents were never exposed). Only a tgt
that will not reopen the LUN leaves the volume grown and the export at
the old size: upstream's TargetUpdateFailed, the extend stands.
"""

import functools
import logging

from minicinder import exception
from minicinder.volume.drivers import lvm
from minicinder.volume.targets import tgt
from ministack import exception as ms_exception

LOG = logging.getLogger(__name__)


def translate_errors(fn):
    """Command and LVM failures leave the driver as VolumeBackendError."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ms_exception.ProcessExecutionError, lvm.VolumeNotFound,
                lvm.NotContiguous, tgt.UnexpectedOutput,
                tgt.TgtdError, OSError) as exc:
            reason = exc.format_message() if hasattr(
                exc, "format_message") else str(exc)
            raise exception.VolumeBackendError(
                reason="%s: %s" % (fn.__name__, reason))
    return wrapper


class ExtendMixin:
    """``extend_volume`` and ``extend_attached_volume`` of the driver."""

    @translate_errors
    def extend_volume(self, volume, new_size):
        """Target, then loop devices (both hold the old extent range),
        then the LV; the next connection exports the grown device.

        Without device-mapper an LV grows in place only when the extents
        after it are free; otherwise its data moves to a new contiguous
        LV of the new size (see :meth:`_relocate`).
        """
        name = self._name(volume)
        self._remove_target(volume)
        self.vg.release_device(name)
        self._forget_device(name)
        try:
            self.vg.extend_volume(name, new_size)
        except lvm.NoContiguousSpace:
            self._relocate(name, new_size)
        self._device(name)
        return {"provider_location": None}

    def _relocate(self, name, new_size):
        """Copy LV ``name`` into a zeroed LV of ``new_size`` GiB, then swap
        names and wipe the old one (``volume_clear``).

        The names swap only after the copy, so an interruption leaves
        the volume's data under its name (before the swap) or under
        ``<name>.old`` (between the two renames), never lost.
        """
        grown, old = name + ".grow", name + ".old"
        LOG.warning("LV %s cannot grow in place; moving it to a new LV of "
                    "%s GiB", name, new_size)
        self.vg.create_volume(grown, new_size)
        try:
            self.vg.clear_volume(grown)
            self.vg.copy_volume(name, grown)
        except Exception:
            self._wipe_and_remove(grown)
            raise
        self.vg.release_device(grown)
        self.vg.rename_volume(name, old)
        self.vg.rename_volume(grown, name)
        self._wipe_and_remove(old)

    def _wipe_and_remove(self, name):
        if self.conf.volume_clear == "zero":
            self.vg.clear_volume(name)
        self.vg.delete_volume(name)

    def extend_attached_volume(self, volume, new_size):
        """Grow an attached volume in place: LV, loop devices, then the
        LUN reopened at the new size (the module's steps 1-3).

        :raises VolumeCannotExtendInPlace: the extents after the LV are
            taken (nothing changed).
        :raises TargetUpdateFailed: the volume grew, tgt still serves the
            old size.
        :raises VolumeBackendError: anything else (undone).
        """
        name = self._name(volume)
        self._grow_in_place(volume, name, new_size)
        self._forget_device(name)
        try:
            path = self._device(name)
            target = self._recorded_target(volume)
            if target is not None:
                self.tgt.reopen_lun(target["tid"], 1, path)
        except Exception as exc:
            LOG.warning("Volume %s grew to %s GiB but its target did not "
                        "follow: %s", volume.id, new_size, exc)
            raise exception.TargetUpdateFailed(volume_id=volume.id,
                                               reason=str(exc)) from exc

    @translate_errors
    def _grow_in_place(self, volume, name, new_size):
        if self.vg.device_mapper:
            # The active LV's device grows with it.
            self.vg.extend_volume(name, new_size)
            return
        old_range = self.vg.extent_range(name)
        try:
            self.vg.extend_volume(name, new_size)
        except lvm.NoContiguousSpace as exc:
            raise exception.VolumeCannotExtendInPlace(
                volume_id=volume.id, new_size=new_size,
                reason=exc.format_message()) from exc
        try:
            self.vg.grow_loops(name, old_range)
        except Exception:
            LOG.exception("Growing the loop devices of %s failed; "
                          "shrinking the LV back", name)
            self.vg.reduce_volume(name, volume.size)
            raise
