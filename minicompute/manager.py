"""The compute manager: the RPC endpoints of one compute host.

"Smart managers and dumb data": miniapi validates, records the action and
casts; this manager is the only place that changes an instance's state on
its host. Every endpoint reloads the instance (and BDM) from the database
by id, so the dicts that crossed RPC are only references. Lifecycle
operations hold the instance's lock; an attach or a detach holds it
shared plus its volume's lock, so volumes of one server are wired at once
(``minicompute.utils``).

Endpoints that fail for ordinary reasons (a volume in the wrong state, a
guest that refuses a detach) are marked ``expected_exceptions``: the
caller gets the ``minicompute.exception`` class, the log no traceback.
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from minicompute import exception
from minicompute import external_events
from minicompute import power_state
from minicompute import rebuild
from minicompute import rpcapi
from minicompute import server_volumes
from minicompute import task_states
from minicompute import utils
from minicompute import vm_states
from minicompute.db import api as db_api
from minicompute.faults import points as fault_points
from minicompute.virt import block_device
from minicompute.virt import device_names
from ministack import db
from ministack import exception as ms_exception
from ministack import rpc

LOG = logging.getLogger(__name__)

_VOLUME_ERRORS = (exception.InvalidVolume, exception.VolumeNotFound,
                  exception.VolumeAttachmentNotFound,
                  exception.DeviceDetachFailed, exception.InstanceNotFound,
                  ms_exception.Invalid, ms_exception.Conflict,
                  ms_exception.Forbidden, ms_exception.NotFound)


@rpc.traced_endpoint("nova-compute")
class ComputeManager:
    """RPC endpoints of ``minicompute.rpcapi.ComputeAPI`` for one host."""

    target = messaging.Target(version=rpcapi.ComputeAPI.VERSION)

    def __init__(self, conf, driver, volume_api):
        self.conf = conf
        self.host = conf.host
        self.driver = driver
        self.volume_api = volume_api
        self.external_events = external_events.ExternalEvents(
            self.host, driver, volume_api, self.load_instance)
        self.server_volumes = server_volumes.ServerVolumes(conf, driver,
                                                           volume_api)
        self.rebuilder = rebuild.Rebuilder(conf, driver, volume_api,
                                           self.server_volumes,
                                           self.external_events)

    # -- helpers -

    def load_instance(self, ctxt, instance):
        """Reload the instance the caller named; returns its dict (with
        ``name``, the domain name). Also used by the reconciler; rpcapi
        never sends it."""
        values = db_api.instance_get_dict(ctxt.elevated(), instance["uuid"])
        values["name"] = self.conf.instance_name_template % values["id"]
        return values

    def _event(self, ctxt, name, instance, volume_id=None):
        return utils.EventReporter(
            ctxt, "compute_%s" % name, self.host, instance["uuid"],
            subject="volume %s" % volume_id if volume_id else None)

    def _persist_bdm(self, ctxt, bdm_id):
        return lambda values: db_api.bdm_update(ctxt, bdm_id, values,
                                                reload=False)

    def _set_error(self, ctxt, instance, reason):
        db_api.instance_update(ctxt.elevated(), instance["uuid"], {
            "vm_state": vm_states.ERROR, "task_state": None,
            "fault": reason})

    # -- the host -

    @messaging.expected_exceptions(NotImplementedError)
    def get_host_uptime(self, ctxt):
        """The host's ``uptime`` line (RPC call; NotImplementedError when
        the driver cannot tell, as nova's manager passes it on)."""
        return self.driver.get_host_uptime()

    # -- server external events -

    def external_instance_event(self, ctxt, instances, events):
        """RPC cast (1.5): server external events (``volume-extended``:
        :class:`minicompute.external_events.ExternalEvents`)."""
        self.external_events.handle(ctxt, instances, events)

    # -- volumes -

    @messaging.expected_exceptions(*_VOLUME_ERRORS)
    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  disk_bus=None, device_type=None, tag=None,
                                  multiattach=False):
        """Pick a free device name and create the BDM (RPC call).

        Done here rather than in the API because only the host, under the
        instance lock, can guarantee two parallel attaches never get the
        same /dev/vdX.

        :returns: the new BDM as a dict.
        :raises InvalidVolume: the volume already has a BDM on the instance.
        :raises InvalidDevicePath: ``device`` is malformed.
        :raises TooManyDiskDevices: over ``max_disk_devices_to_attach``.
        """
        instance = self.load_instance(ctxt, instance)
        with utils.device_name_lock(instance["uuid"], volume_id):
            bdms = db_api.bdm_get_all_by_instance(ctxt, instance["uuid"])
            # Re-checked under the lock: the API's check may have raced.
            if any(b.volume_id == volume_id for b in bdms):
                raise exception.InvalidVolume(
                    reason="volume %s already attached" % volume_id)
            if device_names.validate_requested(device):
                LOG.info("Ignoring supplied device name: %s. Libvirt can't "
                         "honour user-supplied dev names", device)
            used = [instance["root_device_name"] or "/dev/vda"]
            used += [b.device_name for b in bdms]
            name = device_names.next_device_name(
                used, self.conf.compute.max_disk_devices_to_attach)
            bdm = db_api.bdm_create(ctxt, {
                "instance_uuid": instance["uuid"], "volume_id": volume_id,
                "source_type": "volume", "destination_type": "volume",
                "device_name": name, "disk_bus": disk_bus,
                "device_type": device_type or "disk", "tag": tag,
                "boot_index": None, "delete_on_termination": False})
            LOG.info("Reserved %s for volume %s on instance %s%s", name,
                     volume_id, instance["uuid"],
                     " (multiattach)" if multiattach else "")
            bdm = db_api.to_dict(bdm)
        fault_points.hold_reply(self.host, ctxt, volume_id, instance["uuid"],
                                bdm)
        return bdm

    @messaging.expected_exceptions(*_VOLUME_ERRORS)
    def attach_volume(self, ctxt, instance, bdm, multiattach=None):
        """Wire the reserved BDM's volume into the instance (RPC cast).

        :param multiattach: the volume's flag as the API read it (1.2);
            None (an older API) makes the attach read the volume.
        """
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "attach_volume", instance,
                         bdm.get("volume_id")), \
                utils.volume_lock(instance["uuid"], bdm.get("volume_id")):
            row = db_api.bdm_get(ctxt, bdm["id"])
            if row.connection_info:
                # Delivered twice (a redelivered cast) or already
                # finished by the start-up reconciler: nothing to do.
                LOG.info("Volume %s is already wired into %s", row.volume_id,
                         instance["uuid"])
                return
            driver_bdm = block_device.DriverVolumeBlockDevice(
                row, self._persist_bdm(ctxt, row.id))
            try:
                driver_bdm.attach(ctxt, instance, self.volume_api,
                                  self.driver, multiattach=multiattach)
            except Exception:
                with excutils.save_and_reraise_exception():
                    LOG.exception("Failed to attach volume %s at %s to %s",
                                  row.volume_id, row.device_name,
                                  instance["uuid"])
                    db_api.bdm_destroy(ctxt, row.id)
            LOG.info("Attached volume %s at %s to %s", row.volume_id,
                     row.device_name, instance["uuid"])

    @messaging.expected_exceptions(*_VOLUME_ERRORS)
    def detach_volume(self, ctxt, instance, volume_id, attachment_id=None):
        """Unplug the volume, delete its attachment, then the BDM (cast).

        On DeviceDetachFailed the BDM is kept and Cinder's volume is back
        in-use, so the user can simply retry.
        """
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "detach_volume", instance, volume_id), \
                utils.volume_lock(instance["uuid"], volume_id):
            self.detach_volume_under_lock(ctxt, instance, volume_id,
                                          attachment_id)

    def detach_volume_under_lock(self, ctxt, instance, volume_id,
                                 attachment_id=None):
        """The detach itself: guest, host, Cinder, then the BDM.

        The caller holds ``utils.volume_lock`` (or the instance's lock
        exclusively) and reports the event
        (``detach_volume``, terminate, the reconciler rolling an
        interrupted detach forward); rpcapi never sends it.
        """
        row = db_api.bdm_get_by_volume_and_instance(ctxt, volume_id,
                                                    instance["uuid"])
        driver_bdm = block_device.DriverVolumeBlockDevice(
            row, self._persist_bdm(ctxt, row.id))
        driver_bdm.detach(ctxt, instance, self.volume_api, self.driver,
                          attachment_id=attachment_id)
        # Last: while it exists, a failed detach can be retried.
        db_api.bdm_destroy(ctxt, row.id)
        LOG.info("Detached volume %s from %s", volume_id, instance["uuid"])
        return row

    # -- instance lifecycle -

    @messaging.expected_exceptions(
        exception.InstanceBuildFailed, exception.VolumeNotCreated,
        *_VOLUME_ERRORS)
    def build_and_run_instance(self, ctxt, instance, image, flavor):
        """Volumes (:mod:`.server_volumes`), disk, domain, boot: ACTIVE,
        or ERROR with all undone (cast)."""
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "build_and_run_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            db_api.instance_update(ctxt.elevated(), instance["uuid"], {
                "task_state": task_states.SPAWNING, "host": self.host,
                "root_device_name": "/dev/vda"})
            volumes = []
            try:
                volumes = self.server_volumes.prepare(ctxt, instance)
                self.driver.spawn(ctxt, instance, image, flavor,
                                  block_device_info=volumes)
                self.server_volumes.complete(ctxt, instance)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    reason = (exc.format_message()
                              if hasattr(exc, "format_message") else str(exc))
                    LOG.error("Build of %s failed: %s", instance["uuid"],
                              reason)
                    self._quiet_destroy(ctxt, instance, volumes)
                    self.server_volumes.roll_back(ctxt, instance)
                    self._set_error(ctxt, instance, reason)
            db_api.instance_update(ctxt.elevated(), instance["uuid"], {
                "vm_state": vm_states.ACTIVE, "task_state": None,
                "power_state": power_state.RUNNING,
                "launched_at": db.utcnow()})
            LOG.info("Instance %s is active", instance["uuid"])

    def _quiet_destroy(self, ctxt, instance, volumes=()):
        try:
            self.driver.destroy(ctxt, instance, block_device_info=volumes)
        except Exception:
            LOG.exception("Cleanup of failed build %s", instance["uuid"])

    @messaging.expected_exceptions(exception.InstanceNotFound,
                                   exception.RebuildVolumeBackedFailed,
                                   *_VOLUME_ERRORS)
    def rebuild_instance(self, ctxt, instance, image, flavor,
                         reimage_boot_volume=False):
        """Respawn from ``image``, volumes kept (:mod:`.rebuild`; cast)."""
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "rebuild_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            self.rebuilder.rebuild(ctxt, instance, image, flavor,
                                   reimage_boot_volume=reimage_boot_volume)

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def stop_instance(self, ctxt, instance):
        """Power the instance off (cast)."""
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "stop_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            self.driver.power_off(instance)
            db_api.instance_update(ctxt.elevated(), instance["uuid"], {
                "vm_state": vm_states.STOPPED, "task_state": None,
                "power_state": self.driver.get_power_state(instance)})

    def resume_guests_state(self, ctxt, host):
        """Start the shut-off domains of ACTIVE instances after a host
        restart (start-up; nova's ``resume_guests_state_on_host_boot``).
        An ACTIVE instance whose domain is gone goes to ERROR."""
        for row in db_api.instance_get_all(ctxt, {"host": host,
                                                  "all_tenants": True}):
            if row.vm_state != vm_states.ACTIVE or row.task_state:
                continue
            instance = self.load_instance(ctxt, {"uuid": row.uuid})
            if self.driver.get_power_state(instance) == power_state.RUNNING:
                continue
            with utils.instance_lock(instance["uuid"]):
                try:
                    LOG.info("Instance %s should be running: starting it",
                             instance["uuid"])
                    self.driver.power_on(ctxt, instance)
                    db_api.instance_update(ctxt, instance["uuid"], {
                        "power_state":
                            self.driver.get_power_state(instance)})
                except exception.InstanceNotFound:
                    self._set_error(ctxt, instance,
                                    "The guest's domain %s is gone"
                                    % instance["name"])
                except Exception as exc:
                    LOG.exception("Could not start instance %s",
                                  instance["uuid"])
                    self._set_error(ctxt, instance,
                                    "Could not start the guest: %s" % exc)

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def start_instance(self, ctxt, instance):
        """Power the instance on (cast)."""
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "start_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            self.driver.power_on(ctxt, instance)
            db_api.instance_update(ctxt.elevated(), instance["uuid"], {
                "vm_state": vm_states.ACTIVE, "task_state": None,
                "power_state": self.driver.get_power_state(instance)})

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def reboot_instance(self, ctxt, instance, reboot_type):
        """Reboot the guest, SOFT or HARD; ACTIVE again (cast). A failed
        reboot leaves the server in ERROR with the reason, as upstream."""
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "reboot_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            try:
                self.driver.reboot(ctxt, instance, reboot_type)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    reason = (exc.format_message()
                              if hasattr(exc, "format_message") else str(exc))
                    LOG.error("Reboot of %s failed: %s", instance["uuid"],
                              reason)
                    self._set_error(ctxt, instance,
                                    "Reboot failed: %s" % reason)
            db_api.instance_update(ctxt.elevated(), instance["uuid"], {
                "vm_state": vm_states.ACTIVE, "task_state": None,
                "power_state": self.driver.get_power_state(instance)})

    @messaging.expected_exceptions(exception.InstanceNotFound,
                                   exception.ConsoleNotAvailable)
    def get_console_output(self, ctxt, instance, tail_length=None):
        """The console log as text, its last ``tail_length`` lines (call);
        bytes that are not ASCII are replaced, as nova does."""
        instance = self.load_instance(ctxt, instance)
        output = self.driver.get_console_output(instance)
        if isinstance(output, str):
            output = output.encode("utf-8")
        if tail_length is not None:
            output = utils.tail_lines(output, int(tail_length))
        return output.decode("ascii", "replace")

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def terminate_instance(self, ctxt, instance):
        """Detach every volume, destroy the guest, soft-delete (cast).

        Volumes are detached one by one as a user detach would (the guest
        still runs), then delete_on_termination ones are deleted. One that
        cannot be detached has its attachment deleted anyway."""
        instance = self.load_instance(ctxt, instance)
        with self._event(ctxt, "terminate_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            try:
                self._terminate(ctxt, instance)
            except Exception as exc:
                # As upstream: a delete that failed leaves the server in
                # ERROR (not stuck in task_state "deleting"), so waiters
                # fail fast and a second delete is accepted.
                with excutils.save_and_reraise_exception():
                    self._set_error(ctxt, instance,
                                    "Delete failed: %s" % exc)

    def _terminate(self, ctxt, instance):
        """Unplug the volumes one by one but the root, which the guest's
        destroy disconnects; then delete_on_termination."""
        rows = [r for r in server_volumes.volume_rows(ctxt, instance["uuid"])
                if r.volume_id]
        roots = [r for r in rows if r.boot_index == 0]
        for row in rows:
            if row not in roots:
                self._terminate_volume(ctxt, instance, row)
        self.driver.destroy(
            ctxt, instance,
            block_device_info=server_volumes.block_device_info(roots))
        self.server_volumes.release(ctxt, roots)
        for row in rows:
            if row.delete_on_termination:
                self.server_volumes.delete_volume(ctxt, row.volume_id)
        db_api.instance_update(ctxt.elevated(), instance["uuid"], {
            "vm_state": vm_states.DELETED, "task_state": None,
            "power_state": power_state.NOSTATE})
        db_api.instance_destroy(ctxt.elevated(), instance["uuid"])
        LOG.info("Instance %s deleted", instance["uuid"])

    def _terminate_volume(self, ctxt, instance, row):
        try:
            self.detach_volume_under_lock(ctxt, instance, row.volume_id)
        except Exception:
            LOG.exception("Clean detach of volume %s failed; releasing its "
                          "attachment anyway", row.volume_id)
            self.server_volumes.release(ctxt, [row])
