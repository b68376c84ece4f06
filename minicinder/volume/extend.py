"""The extend jobs of the volume manager.

An available volume grows and is available again; an in-use one (3.42)
grows in place, as upstream's ``VolumeManager.extend_volume``:

* the backend has no room to grow it where it is: back to ``in-use`` at
  its size, nothing changed (upstream's scheduler answers "No valid
  backend" before the driver is asked, and sets the previous status);
* the backend fails: ``error_extending`` (upstream's manager), its
  device left at the old size;
* the export could not follow (tgt): logged, the extend stands, as
  upstream's ``TargetUpdateFailed``;
* then the new size and ``in-use`` are recorded, and Nova is told with a
  ``volume-extended`` event per server the volume is attached to, so it
  resizes the disk in the guest (``compute/nova.py``). What Nova does
  with the event is Nova's: a failure there is its instance action's
  fault, the volume stays grown.
"""

import logging

from minicinder import exception
from minicinder.compute import nova
from minicinder.db import attachment_reads
from minicinder.volume import locks
from ministack.trace import profiler as trace_profiler

LOG = logging.getLogger(__name__)


class VolumeExtender:
    """Grows the manager's volumes: the job runs in the manager's pool,
    its driver grows the device, its ``compute`` adapter tells Nova."""

    def __init__(self, manager):
        self.manager = manager

    def extend_volume_async(self, volume_id, new_size, attached=False,
                            ctx=None):
        """The extend in the manager's pool, inside the request's trace
        (when it has one): cinder-volume's hops follow the os-extend's."""
        return self.manager.executor.submit(
            trace_profiler.carried(self._traced_extend), volume_id,
            new_size, attached=attached, ctx=ctx)

    def _traced_extend(self, volume_id, new_size, attached=False,
                       ctx=None):
        with trace_profiler.span(
                "cinder", "LIBRARY", "extend_volume", actor="cinder",
                details=lambda: {"volume_id": volume_id,
                                 "new_size": new_size,
                                 "attached": attached}):
            return self.extend_volume(volume_id, new_size,
                                      attached=attached, ctx=ctx)

    def extend_volume(self, volume_id, new_size, attached=False, ctx=None):
        """extending -> available (or in-use) at ``new_size`` GiB, or
        error_extending (the device keeps its old size).

        :param attached: the volume was in-use (3.42): grow it in place
            and tell Nova.
        :param ctx: the request's context (its request id goes to Nova).
        """
        with locks.lock("minicinder-volume-%s" % volume_id):
            ref = self.manager.ref(volume_id)
            if attached:
                done = self._extend_attached(ref, new_size)
            else:
                done = self._extend_available(ref, new_size)
        if done and attached:
            self._tell_nova(ctx, volume_id)

    def _extend_available(self, ref, new_size):
        try:
            update = self.manager.driver.extend_volume(ref, new_size) or {}
        except Exception as exc:
            LOG.error("Volume %s could not be extended to %s GiB: %s",
                      ref.id, new_size, exc)
            self.manager.transition(ref.id, "extend_failed")
            return False
        update["size"] = new_size
        if not self.manager.transition(ref.id, "extend_done", update):
            LOG.warning("Volume %s left 'extending' during the extend",
                        ref.id)
        LOG.info("Volume %s extended to %s GiB", ref.id, new_size)
        return True

    def _extend_attached(self, ref, new_size):
        try:
            self.manager.driver.extend_attached_volume(ref, new_size)
        except exception.VolumeCannotExtendInPlace as exc:
            LOG.warning("Volume %s stays %s GiB: %s", ref.id, ref.size,
                        exc.format_message())
            self.manager.transition(ref.id, "extend_attached_done")
            return False
        except exception.TargetUpdateFailed:
            LOG.warning("Volume %s extended but failed to update target.",
                        ref.id)
        except Exception as exc:
            LOG.error("Volume %s could not be extended to %s GiB while "
                      "attached: %s", ref.id, new_size, exc)
            self.manager.transition(ref.id, "extend_failed")
            return False
        if not self.manager.transition(ref.id, "extend_attached_done",
                                {"size": new_size}):
            LOG.warning("Volume %s left 'extending' during the extend",
                        ref.id)
            return False
        LOG.info("Attached volume %s extended to %s GiB", ref.id, new_size)
        return True

    def _tell_nova(self, ctx, volume_id):
        """``volume-extended`` for each server using the volume."""
        nova.tell(self.manager.compute, ctx, "volume-extended",
                  self.manager.database.read_rows(
                      attachment_reads.attached_instances, volume_id),
                  volume_id)
