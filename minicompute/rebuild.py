"""Rebuilding a server on its host (nova's ``rebuild_instance`` for the
same host, through libvirt's ``_rebuild_default_impl``).

The guest is respawned from the image the API recorded; its volumes stay
the server's, each on a new Cinder attachment::

    power off
    each data volume:  attachment_create (no connector: the volume stays
                       the server's), unplug from the domain and
                       disconnect, attachment_delete (the old one), the
                       BDM takes the new attachment
    destroy the domain and its local disk (disconnects the root volume)
    the root volume:   the same swap of attachments
    reimage (volume-backed at 2.93): Cinder's os-reimage writes the image
                       over the root volume, and the host waits for the
                       ``volume-reimaged`` event
    rebuild_block_device_mapping: attachment_update with this host's
                       connector, connection_info saved
    rebuild_spawning:  spawn from the image with the volumes connected,
                       then attachment_complete each (in-use)
    ACTIVE, or SHUTOFF again if the server was

The new attachment is created before the old one is deleted, so the
volume is never ``available`` (free for another server) in between:
Cinder lets the same server hold a second attachment. Each swap undoes
itself if it fails (the new attachment deleted), so a BDM always names
exactly one attachment. Any failure leaves the server in ERROR with its
volumes still its own (each on one attachment, its connections undone),
as upstream: the user rebuilds again or deletes the server.
"""

import math

from oslo_log import log as logging
from oslo_utils import excutils

from minicompute import exception
from minicompute import external_events
from minicompute import power_state
from minicompute import server_volumes
from minicompute import task_states
from minicompute import vm_states
from minicompute.db import api as db_api
from minicompute.virt import block_device
from ministack import db

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3


class Rebuilder:
    """Rebuilds servers on this host with its virt ``driver``, its Cinder
    client ``volume_api``, the manager's ``server_volumes`` and
    ``events`` (:class:`~minicompute.external_events.ExternalEvents`,
    which delivers ``volume-reimaged``)."""

    def __init__(self, conf, driver, volume_api, volumes, events):
        self.conf = conf
        self.driver = driver
        self.volume_api = volume_api
        self.volumes = volumes
        self.events = events

    def rebuild(self, ctxt, instance, image, flavor,
                reimage_boot_volume=False):
        """Respawn ``instance`` from ``image``; ACTIVE (or SHUTOFF) at
        the end, ERROR with the reason if any step fails.

        :param reimage_boot_volume: re-image a volume-backed server's
            root volume (compute API 2.93); otherwise it is re-attached
            unchanged.
        """
        was_stopped = instance["vm_state"] == vm_states.STOPPED
        try:
            self._rebuild(ctxt, instance, image, flavor, reimage_boot_volume)
            if was_stopped:
                self.driver.power_off(instance)
        except Exception as exc:
            with excutils.save_and_reraise_exception():
                reason = (exc.format_message()
                          if hasattr(exc, "format_message") else str(exc))
                LOG.error("Rebuild of %s failed: %s", instance["uuid"],
                          reason)
                db_api.instance_update(ctxt.elevated(), instance["uuid"], {
                    "vm_state": vm_states.ERROR, "task_state": None,
                    "fault": "Rebuild failed: %s" % reason})
        db_api.instance_update(ctxt.elevated(), instance["uuid"], {
            "vm_state": vm_states.STOPPED if was_stopped
            else vm_states.ACTIVE, "task_state": None,
            "power_state": self.driver.get_power_state(instance),
            "launched_at": db.utcnow()})
        LOG.info("Instance %s rebuilt", instance["uuid"])

    def _rebuild(self, ctxt, instance, image, flavor, reimage_boot_volume):
        rows = [r for r in server_volumes.volume_rows(ctxt, instance["uuid"])
                if r.volume_id]
        roots = [r for r in rows if r.boot_index == 0]
        if self.driver.get_power_state(instance) == power_state.RUNNING:
            self.driver.power_off(instance)
        for row in rows:
            if row not in roots:
                self._swap_attachment(ctxt, instance, row, unplug=True)
        # The root volume cannot leave the domain's definition; the
        # domain goes, and its destroy disconnects the root.
        self.driver.destroy(
            ctxt, instance,
            block_device_info=server_volumes.block_device_info(roots))
        for row in roots:
            self._swap_attachment(ctxt, instance, row, unplug=False)
        if reimage_boot_volume:
            for row in roots:
                self._reimage(ctxt, instance, row.volume_id, image)
        self._set_task(ctxt, instance,
                       task_states.REBUILD_BLOCK_DEVICE_MAPPING)
        for row in server_volumes.volume_rows(ctxt, instance["uuid"]):
            block_device.DriverVolumeBlockDevice(
                row, self._persist(ctxt, row.id)).update_for_spawn(
                    ctxt, instance, self.volume_api, self.driver)
        self._set_task(ctxt, instance, task_states.REBUILD_SPAWNING)
        connected = server_volumes.block_device_info(
            server_volumes.volume_rows(ctxt, instance["uuid"]))
        try:
            self.driver.spawn(ctxt, instance, image, flavor,
                              block_device_info=connected)
            self.volumes.complete(ctxt, instance)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._undo_spawn(ctxt, instance, connected)

    def _set_task(self, ctxt, instance, task_state):
        db_api.instance_update(ctxt.elevated(), instance["uuid"],
                               {"task_state": task_state})

    def _persist(self, ctxt, bdm_id):
        return lambda values: db_api.bdm_update(ctxt, bdm_id, values,
                                                reload=False)

    def _swap_attachment(self, ctxt, instance, row, unplug):
        """nova's ``detach_block_devices``: a new connector-less
        attachment for the server, the volume unplugged (``unplug``) and
        disconnected, the old attachment deleted, the BDM on the new one
        with no connection_info until the respawn connects it."""
        new = self.volume_api.attachment_create(
            ctxt, row.volume_id, instance["uuid"])["id"]
        try:
            if unplug:
                self._unplug(ctxt, instance, row)
            if row.attachment_id:
                self.volume_api.attachment_delete(ctxt, row.attachment_id)
        except Exception:
            with excutils.save_and_reraise_exception():
                self.volumes.delete_attachment(ctxt, new)
        db_api.bdm_update(ctxt, row.id, {"attachment_id": new,
                                         "connection_info": None},
                          reload=False)
        LOG.info("Volume %s of %s: attachment %s replaced by %s",
                 row.volume_id, instance["uuid"], row.attachment_id, new)

    def _unplug(self, ctxt, instance, row):
        """Out of the (stopped) domain's definition, and disconnected."""
        if not row.connection_info:
            return
        driver_bdm = block_device.DriverVolumeBlockDevice(
            row, self._persist(ctxt, row.id))
        try:
            self.driver.detach_volume(ctxt, driver_bdm.connection_info,
                                      instance, row.device_name)
        except (exception.DiskNotFound, exception.InstanceNotFound):
            LOG.warning("Volume %s was not in the domain of %s",
                        row.volume_id, instance["uuid"])

    def _reimage(self, ctxt, instance, volume_id, image):
        """Cinder writes ``image`` over the (reserved) root volume; wait
        for its ``volume-reimaged`` event, at most
        ``reimage_timeout_per_gb`` seconds per GiB of the image.

        :raises RebuildVolumeBackedFailed: Cinder refused, reported a
            failure, or did not answer in time.
        """
        gib = max(1, math.ceil(_image_size(image) / GiB))
        timeout = self.conf.reimage_timeout_per_gb * gib
        waiter = self.events.prepare(instance["uuid"],
                                     external_events.VOLUME_REIMAGED,
                                     volume_id)
        try:
            self.volume_api.reimage_volume(ctxt, volume_id, image["id"],
                                           reimage_reserved=True)
            LOG.info("Waiting up to %ss for volume %s to be re-imaged with "
                     "%s", timeout, volume_id, image["id"])
            status = waiter.wait(timeout)
        except Exception as exc:
            raise exception.RebuildVolumeBackedFailed(
                instance_uuid=instance["uuid"],
                reason=exc.format_message()
                if hasattr(exc, "format_message") else str(exc)) from exc
        finally:
            self.events.forget(waiter)
        if status != "completed":
            raise exception.RebuildVolumeBackedFailed(
                instance_uuid=instance["uuid"],
                reason="Reimaging volume failed." if status
                else "Timeout waiting for volume-reimaged of volume %s "
                     "after %s seconds" % (volume_id, timeout))

    def _undo_spawn(self, ctxt, instance, connected):
        """Disconnect what the failed spawn connected, and the domain."""
        try:
            self.driver.destroy(ctxt, instance, block_device_info=connected)
        except Exception:
            LOG.exception("Cleanup of failed rebuild of %s failed",
                          instance["uuid"])


def _image_size(image):
    """The image's size in bytes (its virtual size when known, as the
    volume must hold that)."""
    for key in ("virtual_size", "size"):
        try:
            size = int(image.get(key) or 0)
        except (TypeError, ValueError):
            continue
        if size > 0:
            return size
    return 0
