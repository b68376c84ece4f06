"""``os-reimage`` (3.68): an image written over an existing volume
(cinder's ``API.reimage`` and ``VolumeManager.reimage``).

Nova asks for it when it rebuilds a volume-backed server (compute 2.93):
the server's root volume keeps its id, its attachment and its size, and
gets the new image's data and image metadata. The checks are upstream's:

* more than one attachment: 409 "Cannot re-image a volume which is
  attached to more than one server.";
* a status other than ``available`` or ``error`` (or ``reserved`` when
  ``reimage_reserved`` is true, which is how Nova holds the volume
  during a rebuild): 400;
* an image that does not fit the volume: 400, nothing changed.

Then the volume is ``downloading`` and the copy runs in the volume
manager's pool (the create-from-image's ``copy_image_to_volume``). At
the end the image metadata is replaced and the volume is back in its
previous status; if that is ``reserved``, Nova is told with a
``volume-reimaged`` event per server holding the volume (its id as the
tag), which the waiting rebuild goes on with. A failed copy leaves the
volume in ``error`` and tells Nova nothing, as upstream: the rebuild
fails when its wait times out.
"""

import logging

from minicinder import exception
from minicinder.compute import nova
from minicinder.db import api as db
from minicinder.db import attachment_reads
from minicinder.db import metadata as metadata_db
from minicinder.volume import image as volume_image
from minicinder.volume import locks
from minicinder.volume import states
from ministack.trace import profiler as trace_profiler

LOG = logging.getLogger(__name__)

#: The statuses a volume may be re-imaged from, and the state-table
#: action that moves it to ``downloading`` from them.
_START = {False: ("reimage", (states.AVAILABLE, states.ERROR)),
          True: ("reimage_reserved", (states.AVAILABLE, states.ERROR,
                                      states.RESERVED))}


class VolumeReimager:
    """Re-images volumes: checks and ``downloading`` on the request
    (:meth:`reimage`), the copy in the manager's pool, Nova told through
    the manager's ``compute`` adapter."""

    def __init__(self, database, manager):
        self.database = database
        self.manager = manager

    def reimage(self, ctx, volume_id, image, reimage_reserved=False):
        """Check, set ``downloading`` and start the copy (202).

        :param image: the image record (``volume/image.py``'s ``get``).
        :raises VolumeNotFound: (404)
        :raises ReimageMultiattached: more than one attachment (409).
        :raises InvalidVolume: not in a status to re-image (400).
        :raises InvalidInput: the image does not fit (400).
        """
        action, allowed = _START[bool(reimage_reserved)]
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            holders = attachment_reads.attachment_instances(session,
                                                            volume_id)
            if len(holders) > 1:
                raise exception.ReimageMultiattached()
            previous = volume.status
            if previous not in allowed:
                raise exception.InvalidVolume(
                    reason="Volume %s status must be %s, but current status "
                           "is %s." % (volume_id, " or ".join(allowed),
                                       previous))
            volume_image.check_fits(image, volume.size)
            if not db.volume_transition(session, volume, action):
                raise exception.InvalidVolume(
                    reason="Volume %s status changed during the re-image "
                           "request." % volume_id)
        LOG.info("Re-imaging volume %s with image %s (from %s)", volume_id,
                 image.get("id"), previous)
        self.manager.executor.submit(
            trace_profiler.carried(self._traced_reimage), volume_id, image,
            previous, ctx)

    def _traced_reimage(self, volume_id, image, previous, ctx):
        with trace_profiler.span(
                "cinder", "LIBRARY", "reimage_volume", actor="cinder",
                details=lambda: {"volume_id": volume_id,
                                 "image_id": image.get("id")}):
            return self.reimage_volume(volume_id, image, previous, ctx)

    def reimage_volume(self, volume_id, image, previous, ctx=None):
        """downloading -> ``previous`` with the image's data and
        metadata, or error; then Nova is told if the volume is a
        rebuild's (``reserved``)."""
        with locks.lock("minicinder-volume-%s" % volume_id):
            ref = self.manager.ref(volume_id)
            try:
                self.manager.driver.copy_image_to_volume(ref, image)
            except Exception as exc:
                LOG.error("Volume %s could not be re-imaged with image %s: "
                          "%s", volume_id, image.get("id"), exc)
                self.manager.transition(volume_id, "reimage_failed")
                return False
            with self.database.write() as session:
                metadata_db.image_metadata_replace(
                    session, volume_id, volume_image.glance_metadata(image))
            if not self.manager.transition(volume_id,
                                           "reimage_done_%s" % previous):
                LOG.warning("Volume %s left 'downloading' during its "
                            "re-image", volume_id)
                return False
        LOG.info("Volume %s re-imaged with image %s", volume_id,
                 image.get("id"))
        if previous == states.RESERVED:
            self._tell_nova(ctx, volume_id)
        return True

    def _tell_nova(self, ctx, volume_id):
        """``volume-reimaged`` for the server holding the volume."""
        servers = [s for s in self.database.read_rows(
            attachment_reads.attachment_instances, volume_id) if s]
        nova.tell(self.manager.compute, ctx, "volume-reimaged", servers,
                  volume_id)
