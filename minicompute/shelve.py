"""Shelve, shelve offload and unshelve on a compute host.

nova's ``_shelve_instance``, ``_shelve_offload_instance`` and
``unshelve_instance``, served by the host's RPC server next to the
compute manager (its collaborators are the manager's: the driver, the
Cinder adapter, :class:`minicompute.server_volumes.ServerVolumes`)::

    shelve (image-backed)  power off -> snapshot image (the guest's disk,
                           kernel and ramdisk, registered as
                           "<name>-shelved") -> SHELVED -> offload at once
                           when ``shelved_offload_time`` is 0
    shelve offload         power off -> destroy the domain (which
                           disconnects the volumes on this host) -> park
                           each volume -> no host: SHELVED_OFFLOADED
    unshelve               (from SHELVED) power on, or (offloaded, on the
                           host the API scheduled) a device name for each
                           volume attached while offloaded,
                           attachment_update with
                           this host's connector, spawn with the volumes,
                           attachment_complete -> ACTIVE; the snapshot
                           image is deleted

*Parking* a volume is nova's ``_terminate_volume_connections``: a new
attachment with no connector for the same server (Cinder lets the same
instance reserve a volume it already holds, and leaves the volume's
status alone), saved on the BDM, then the old attachment deleted: Cinder
removes this host's export and the volume is ``reserved``, exported
nowhere, until an unshelve updates the parked attachment with its host's
connector. The new id is saved before the old attachment goes, so Cinder,
asking Nova which attachment it uses, never sees the one being deleted.

An unshelve that fails is undone as upstream's: the guest destroyed (its
volumes disconnected), every volume parked again, no host, back to
SHELVED_OFFLOADED with no task, the reason in the instance action.
"""

import json
import os

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from minicompute import exception
from minicompute import power_state
from minicompute import rpcapi
from minicompute import server_volumes
from minicompute import task_states
from minicompute import utils
from minicompute import vm_states
from minicompute.db import api as db_api
from minicompute.virt import device_names
from ministack import db
from ministack import images
from ministack import rpc

LOG = logging.getLogger(__name__)

_ERRORS = (exception.InstanceNotFound, exception.InstanceBuildFailed,
           exception.InvalidVolume, exception.VolumeNotFound,
           exception.VolumeAttachmentNotFound)


def _reason(exc):
    return exc.format_message() if hasattr(exc, "format_message") \
        else str(exc)


@rpc.traced_endpoint("nova-compute")
class ShelveEndpoint:
    """RPC endpoints ``shelve_instance``, ``shelve_offload_instance`` and
    ``unshelve_instance`` (``minicompute.rpcapi.ComputeAPI`` 1.7).

    :param manager: this host's :class:`minicompute.manager.ComputeManager`.
    """

    target = messaging.Target(version=rpcapi.ComputeAPI.VERSION)

    def __init__(self, manager):
        self.manager = manager
        self.conf = manager.conf
        self.host = manager.host
        self.driver = manager.driver
        self.volume_api = manager.volume_api
        self.images_root = os.path.join(self.conf.state_path, "images")

    def _event(self, ctxt, name, instance):
        return utils.EventReporter(ctxt, "compute_%s" % name, self.host,
                                   instance["uuid"])

    @staticmethod
    def _update(ctxt, instance, values):
        return db_api.instance_update(ctxt.elevated(), instance["uuid"],
                                      values)

    # -- shelve -

    @messaging.expected_exceptions(*_ERRORS)
    def shelve_instance(self, ctxt, instance, image):
        """Power off, snapshot into ``image`` (the record the API made:
        id, name, owner, the base image's boot properties), SHELVED; then
        offload at once when ``shelved_offload_time`` is 0 (cast)."""
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "shelve_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            try:
                self._power_off(instance)
                self._update(ctxt, instance, {
                    "task_state": task_states.SHELVING_IMAGE_PENDING_UPLOAD})
                self._update(ctxt, instance, {
                    "task_state": task_states.SHELVING_IMAGE_UPLOADING})
                self.driver.snapshot(ctxt, instance, image,
                                     self.images_root)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    # As upstream's reverts_task_state: no task; the
                    # guest is off, so the server shows SHUTOFF.
                    LOG.error("Shelve of %s failed: %s", instance["uuid"],
                              _reason(exc))
                    images.delete_snapshot(image["id"], self.images_root)
                    self._update(ctxt, instance, {
                        "task_state": None,
                        "vm_state": vm_states.STOPPED,
                        "power_state":
                            self.driver.get_power_state(instance)})
            offload = self.conf.shelved_offload_time == 0
            self._update(ctxt, instance, {
                "vm_state": vm_states.SHELVED,
                "power_state": power_state.SHUTDOWN,
                "task_state": task_states.SHELVING_OFFLOADING if offload
                else None})
            LOG.info("Instance %s shelved (snapshot image %s)",
                     instance["uuid"], image["id"])
            if offload:
                self._offload(ctxt, instance)

    @messaging.expected_exceptions(*_ERRORS)
    def shelve_offload_instance(self, ctxt, instance):
        """Power off if need be, destroy the guest, park its volumes,
        leave the host: SHELVED_OFFLOADED (cast). A volume-backed server
        comes here straight from ``shelve``."""
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "shelve_offload_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            self._power_off(instance)
            self._update(ctxt, instance, {
                "task_state": task_states.SHELVING_OFFLOADING})
            self._offload(ctxt, instance)

    def _power_off(self, instance):
        if self.driver.get_power_state(instance) != power_state.SHUTDOWN:
            self.driver.power_off(instance)

    def _offload(self, ctxt, instance):
        rows = [r for r in server_volumes.volume_rows(ctxt, instance["uuid"])
                if r.volume_id]
        try:
            self.driver.destroy(
                ctxt, instance,
                block_device_info=server_volumes.block_device_info(rows))
            self.park_volumes(ctxt, instance, rows)
        except Exception as exc:
            with excutils.save_and_reraise_exception():
                LOG.error("Offload of %s failed: %s", instance["uuid"],
                          _reason(exc))
                self._update(ctxt, instance, {"task_state": None})
        self._update(ctxt, instance, {
            "vm_state": vm_states.SHELVED_OFFLOADED, "task_state": None,
            "power_state": power_state.SHUTDOWN, "host": None,
            "node": None})
        LOG.info("Instance %s offloaded from %s (%d volume(s) parked)",
                 instance["uuid"], self.host, len(rows))

    def park_volumes(self, ctxt, instance, rows):
        """For each volume BDM: a new attachment with no connector saved
        on it (its connection_info cleared), then the old one deleted."""
        for row in rows:
            new = self.volume_api.attachment_create(
                ctxt, row.volume_id, instance["uuid"])
            db_api.bdm_update(ctxt, row.id, {
                "attachment_id": new["id"], "connection_info": None},
                reload=False)
            if row.attachment_id:
                try:
                    self.volume_api.attachment_delete(ctxt,
                                                      row.attachment_id)
                except exception.VolumeAttachmentNotFound:
                    pass
            LOG.info("Volume %s of %s parked: attachment %s (no "
                     "connector) replaces %s", row.volume_id,
                     instance["uuid"], new["id"], row.attachment_id)

    # -- unshelve -

    @messaging.expected_exceptions(*_ERRORS)
    def unshelve_instance(self, ctxt, instance, image=None):
        """Bring a shelved server back (cast): power it on where it is
        (SHELVED), or spawn it on this host, which the API scheduled, with
        its volumes (SHELVED_OFFLOADED); the snapshot image goes.

        :param image: the image record to boot: the snapshot, or for a
            volume-backed server the image its kernel comes from.
        """
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "unshelve_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            if instance["vm_state"] == vm_states.SHELVED:
                self._power_on(ctxt, instance)
            else:
                self._spawn(ctxt, instance, image)
            for snapshot in images.snapshots_of(instance["uuid"],
                                                self.images_root):
                images.delete_snapshot(snapshot["id"], self.images_root)
            self._update(ctxt, instance, {
                "vm_state": vm_states.ACTIVE, "task_state": None,
                "power_state": self.driver.get_power_state(instance)})
            LOG.info("Instance %s unshelved on %s", instance["uuid"],
                     self.host)

    def _power_on(self, ctxt, instance):
        self._update(ctxt, instance,
                     {"task_state": task_states.POWERING_ON})
        try:
            self.driver.power_on(ctxt, instance)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._update(ctxt, instance, {"task_state": None})

    def _spawn(self, ctxt, instance, image):
        self._update(ctxt, instance, {
            "task_state": task_states.SPAWNING, "host": self.host})
        flavor = json.loads(instance["flavor"] or "{}")
        volumes = []
        try:
            self._name_devices(ctxt, instance)
            volumes = self.manager.server_volumes.prepare(ctxt, instance)
            self.driver.spawn(ctxt, instance, image, flavor,
                              block_device_info=volumes)
            self.manager.server_volumes.complete(ctxt, instance)
        except Exception as exc:
            with excutils.save_and_reraise_exception():
                LOG.error("Unshelve of %s on %s failed: %s",
                          instance["uuid"], self.host, _reason(exc))
                self._roll_back_spawn(ctxt, instance, volumes)
        self._update(ctxt, instance, {"launched_at": db.utcnow()})

    def _name_devices(self, ctxt, instance):
        """A device name for each volume attached while offloaded (the
        API wrote none), as nova's ``_prep_block_device`` assigns them."""
        rows = server_volumes.volume_rows(ctxt, instance["uuid"])
        used = [instance["root_device_name"] or "/dev/vda"]
        used += [r.device_name for r in rows if r.device_name]
        for row in rows:
            if row.device_name:
                continue
            name = device_names.next_device_name(
                used, self.conf.compute.max_disk_devices_to_attach)
            db_api.bdm_update(ctxt, row.id, {"device_name": name},
                              reload=False)
            used.append(name)

    def _roll_back_spawn(self, ctxt, instance, volumes):
        """Destroy the guest, park every volume again, leave the host."""
        try:
            self.driver.destroy(ctxt, instance, block_device_info=volumes)
        except Exception:
            LOG.exception("Destroying the failed unshelve of %s failed",
                          instance["uuid"])
        rows = [r for r in server_volumes.volume_rows(ctxt, instance["uuid"])
                if r.volume_id]
        try:
            self.park_volumes(ctxt, instance, rows)
        except Exception:
            LOG.exception("Parking the volumes of %s again failed",
                          instance["uuid"])
        self._update(ctxt, instance, {
            "vm_state": vm_states.SHELVED_OFFLOADED, "task_state": None,
            "power_state": power_state.SHUTDOWN, "host": None,
            "node": None})
