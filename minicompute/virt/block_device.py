"""Attach and detach flows of one volume BDM (DriverVolumeBlockDevice).

The flow is Cinder's three-step handshake around the hypervisor::

    attach:  (API: attachment_create -> reserved)
             connector -> attachment_update (attaching, connection_info)
             -> driver attach -> save connection_info -> attachment_complete
             (in-use)
    detach:  (API: begin_detaching -> detaching)
             driver detach (guest unplug + host disconnect)
             -> attachment_delete (available, or in-use if others remain)

A BDM without ``attachment_id`` takes the legacy flow instead
(initialize_connection / os-attach, then terminate_connection /
os-detach), as nova still does.

Every step that changed something outside this host has its undo right
next to it, so a failure anywhere leaves the volume attachable again and
the guest as it was; :meth:`DriverVolumeBlockDevice.attach` owns the whole
Cinder rollback of a failed attach. The manager only destroys the BDM.

Ordering constraint (nova's NOTE(mriedem)): ``connection_info`` is saved on
the BDM *before* ``attachment_complete``, because once the volume is in-use
a detach may start, and detach needs connection_info.

Nothing here touches the database directly (no DB imports under virt/):
the manager hands in ``persist(values)``, which updates the BDM row.
"""

import json

from oslo_log import log as logging
from oslo_utils import excutils

from minicompute import exception
from minicompute.faults import catalog as faults
from minicompute.faults import points as fault_points

LOG = logging.getLogger(__name__)


class DriverVolumeBlockDevice:
    """One volume BDM plus the code that wires it into an instance.

    :param bdm: the BDM row (or its dict): ``id``, ``volume_id``,
        ``attachment_id``, ``device_name``, ``disk_bus``, ``device_type``,
        ``connection_info`` (JSON text or None).
    :param persist: ``persist(values)`` saves fields on the BDM row.
    """

    def __init__(self, bdm, persist):
        get = bdm.get if isinstance(bdm, dict) else \
            (lambda key: getattr(bdm, key, None))
        self.id = get("id")
        self.volume_id = get("volume_id")
        self.attachment_id = get("attachment_id")
        self.mount_device = get("device_name")
        self.disk_bus = get("disk_bus")
        self.device_type = get("device_type")
        info = get("connection_info")
        self.connection_info = json.loads(info) if isinstance(info, str) \
            else info
        self._persist = persist
        #: set once this flow has deleted the Cinder attachment, so the
        #: outermost undo of attach() does not delete it twice
        self.attachment_released = False

    def save(self):
        self._persist({"connection_info": json.dumps(self.connection_info)
                       if self.connection_info is not None else None})

    # -- attach -

    def attach(self, ctxt, instance, volume_api, virt_driver,
               multiattach=None):
        """Wire the volume into the instance; the volume ends in-use.

        On any failure the whole Cinder side is rolled back here: the
        attachment the API created is deleted (or, legacy flow, the
        reservation undone), so the volume is attachable again. The
        caller only destroys the BDM.

        :param multiattach: the volume's flag as the API read it just
            before it reserved the volume (nova reads the volume again
            here; the flag is all the attachment flow uses of it). None:
            read the volume, as the legacy flow always does.
        """
        ctxt = ctxt.elevated()
        try:
            if multiattach is not None and self.attachment_id:
                volume = {"id": self.volume_id,
                          "multiattach": bool(multiattach)}
            else:
                volume = volume_api.get(ctxt, self.volume_id)
            connector = virt_driver.get_volume_connector(instance)
            if not self.attachment_id:
                self._legacy_volume_attach(ctxt, volume, connector,
                                           instance, volume_api, virt_driver)
            else:
                self._volume_attach(ctxt, volume, connector, instance,
                                    volume_api, virt_driver)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._release_reservation(ctxt, volume_api)

    def update_for_spawn(self, ctxt, instance, volume_api, virt_driver):
        """The build's part of the handshake for a volume the guest will
        be defined with (nova's attach with ``do_driver_attach=False``):
        attachment_update with this host's connector, connection_info
        (with the volume id as serial) saved on the BDM. The driver
        connects it in ``spawn``; the caller completes the attachment
        once the guest runs, and deletes it if the build fails.

        :returns: the connection_info.
        """
        ctxt = ctxt.elevated()
        volume = volume_api.get(ctxt, self.volume_id)
        connector = virt_driver.get_volume_connector(instance)
        attachment = volume_api.attachment_update(
            ctxt, self.attachment_id, connector, self.mount_device)
        self.connection_info = self._prepare_connection_info(
            attachment["connection_info"], volume)
        self.save()
        return self.connection_info

    def _prepare_connection_info(self, connection_info, volume):
        connection_info = dict(connection_info)
        # The serial becomes the guest's /dev/disk/by-id/virtio-<serial>,
        # the only stable name of the disk inside the guest.
        connection_info.setdefault("serial", self.volume_id)
        if volume.get("multiattach"):
            connection_info["multiattach"] = True
        return connection_info

    def _driver_attach(self, ctxt, connection_info, instance, virt_driver):
        virt_driver.attach_volume(
            ctxt, connection_info, instance, self.mount_device,
            disk_bus=self.disk_bus, device_type=self.device_type)
        fault_points.point(faults.DRIVER_ATTACH, instance.get("host"), ctxt,
                           self.volume_id, instance["uuid"])

    def _volume_attach(self, ctxt, volume, connector, instance, volume_api,
                       virt_driver):
        attachment = volume_api.attachment_update(
            ctxt, self.attachment_id, connector, self.mount_device)
        connection_info = self._prepare_connection_info(
            attachment["connection_info"], volume)
        try:
            self._driver_attach(ctxt, connection_info, instance, virt_driver)
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.exception("Driver failed to attach volume %s at %s",
                              self.volume_id, self.mount_device)
                self._unplug_if_in_guest(ctxt, connection_info, instance,
                                         virt_driver)
                self._release_attachment(ctxt, volume_api)

        # Saved before complete: detach needs it once the volume is in-use.
        self.connection_info = connection_info
        self.save()
        try:
            fault_points.point(faults.ATTACHMENT_COMPLETE,
                               instance.get("host"), ctxt, self.volume_id,
                               instance["uuid"])
            volume_api.attachment_complete(ctxt, self.attachment_id)
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.exception("Failed to complete attachment %s of volume "
                              "%s; detaching", self.attachment_id,
                              self.volume_id)
                self._undo_driver_attach(ctxt, instance, virt_driver)
                self._release_attachment(ctxt, volume_api)

    def _legacy_volume_attach(self, ctxt, volume, connector, instance,
                              volume_api, virt_driver):
        connection_info = volume_api.initialize_connection(
            ctxt, self.volume_id, connector)
        connection_info = self._prepare_connection_info(connection_info,
                                                        volume)
        try:
            self._driver_attach(ctxt, connection_info, instance, virt_driver)
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.exception("Driver failed to attach volume %s at %s",
                              self.volume_id, self.mount_device)
                self._quietly(volume_api.terminate_connection, ctxt,
                              self.volume_id, connector)
        self.connection_info = connection_info
        self.save()
        mode = connection_info.get("data", {}).get("access_mode", "rw")
        try:
            volume_api.attach(ctxt, self.volume_id, instance["uuid"],
                              self.mount_device, mode=mode)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._undo_driver_attach(ctxt, instance, virt_driver)
                self._quietly(volume_api.terminate_connection, ctxt,
                              self.volume_id, connector)

    def _unplug_if_in_guest(self, ctxt, connection_info, instance,
                            virt_driver):
        """Take this volume's disk out of the guest if the failed driver
        attach left it there (a hot-plug can land after libvirt reported
        an error), before Cinder forgets the attachment. Only a disk at
        our device whose serial is this volume: a DevicePathInUse failure
        must not unplug the disk that was already there."""
        try:
            disks = virt_driver.list_volume_disks(instance) or {}
        except Exception:
            LOG.exception("Could not list the disks of %s", instance["uuid"])
            return
        dev = (self.mount_device or "").rpartition("/")[2]
        disk = disks.get("disks", {}).get(dev)
        if disk and disk.get("serial") == self.volume_id:
            self.connection_info = connection_info
            self._undo_driver_attach(ctxt, instance, virt_driver)

    def _undo_driver_attach(self, ctxt, instance, virt_driver):
        self._quietly(virt_driver.detach_volume, ctxt, self.connection_info,
                      instance, self.mount_device)

    def _release_reservation(self, ctxt, volume_api):
        """Free the volume the API reserved, unless the flow already did."""
        if self.attachment_released:
            return
        if self.attachment_id:
            self._release_attachment(ctxt, volume_api)
        else:
            self._quietly(volume_api.unreserve_volume, ctxt, self.volume_id)

    def _release_attachment(self, ctxt, volume_api):
        """Delete our Cinder attachment; the volume becomes available."""
        try:
            volume_api.attachment_delete(ctxt, self.attachment_id)
        except exception.VolumeAttachmentNotFound:
            pass
        except Exception:
            LOG.exception("Could not delete attachment %s",
                          self.attachment_id)
            return
        self.attachment_released = True

    @staticmethod
    def _quietly(func, *args, **kwargs):
        """Run an undo step; log its failure so the original error wins."""
        try:
            func(*args, **kwargs)
        except Exception:
            LOG.exception("Undo step %s failed", func.__name__)

    # -- detach -

    def detach(self, ctxt, instance, volume_api, virt_driver,
               attachment_id=None):
        """Unplug the volume and release it in Cinder.

        :raises DeviceDetachFailed: the guest kept the device; Cinder's
            volume was rolled back to in-use and the BDM must be kept.
        """
        ctxt = ctxt.elevated()
        attachment_id = self.attachment_id or attachment_id
        connector = virt_driver.get_volume_connector(instance)
        self.driver_detach(ctxt, instance, volume_api, virt_driver)
        if not attachment_id:
            # Legacy flow: withdraw the export, then record the detach.
            volume_api.terminate_connection(ctxt, self.volume_id, connector)
            volume_api.detach(ctxt, self.volume_id,
                              instance_uuid=instance["uuid"])
            return
        try:
            volume_api.attachment_delete(ctxt, attachment_id)
        except exception.VolumeAttachmentNotFound:
            LOG.info("Ignoring a volume attachment deletion failure as the "
                     "attachment %s was already gone", attachment_id)

    def driver_detach(self, ctxt, instance, volume_api, virt_driver):
        """Unplug from the guest; roll Cinder back to in-use on failure."""
        if not self.connection_info:
            # Never wired (attach died before connection_info was saved).
            LOG.info("Volume %s has no connection_info on instance %s; "
                     "nothing to unplug", self.volume_id, instance["uuid"])
            return
        try:
            with fault_points.refused_detach(ctxt, virt_driver, instance,
                                             self.volume_id,
                                             self.connection_info,
                                             self.mount_device):
                virt_driver.detach_volume(ctxt, self.connection_info,
                                          instance, self.mount_device)
        except exception.DiskNotFound:
            LOG.warning("Disk %s of volume %s is already gone from %s",
                        self.mount_device, self.volume_id, instance["uuid"])
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.exception("Failed to detach volume %s from %s; rolling "
                              "the volume back to in-use", self.volume_id,
                              self.mount_device)
                self._quietly(volume_api.roll_detaching, ctxt,
                              self.volume_id)
