"""Resize and cold migration on the compute hosts.

nova's ``prep_resize``, ``resize_instance``, ``finish_resize``,
``confirm_resize``, ``revert_resize`` and ``finish_revert_resize``,
served by each host's RPC server next to the compute manager (its
collaborators are the manager's). The API picked the destination (the
source itself for a same-host resize), recorded the migration
(``pre-migrating``) and the new flavor, and cast ``prep_resize`` to it::

    destination  prep_resize      records its address on the migration,
                                  casts resize_instance to the source
    source       resize_instance  migrating / resize_migrating; refuses
                                  to shrink a local root disk; powers
                                  off, takes the domain away with its
                                  volumes disconnected here, keeps the
                                  disk aside; parks each volume (a new
                                  attachment with no connector, the old
                                  one deleted: ``reserved``, exported
                                  nowhere); post-migrating, the server's
                                  host is the destination, resize_migrated;
                                  casts finish_resize
    destination  finish_resize    resize_finish, the new flavor applied;
                                  attachment_update with this host's
                                  connector, the guest started with the
                                  disk copy, the volumes and the new
                                  memory and vCPUs; attachment_complete;
                                  finished, VERIFY_RESIZE
    source       confirm_resize   the kept disk removed, no Cinder call;
                                  confirmed, ACTIVE (SHUTOFF if it was)
    destination  revert_resize    resize_reverting: the guest destroyed
                                  (volumes disconnected here), volumes
                                  parked; reverted; casts
                                  finish_revert_resize
    source       finish_revert_resize  the old flavor and host back;
                                  attachment_update with this host's
                                  connector, the guest defined again from
                                  the kept disk, attachment_complete;
                                  ACTIVE (SHUTOFF if it was)

Failures, as upstream: a shrink of the local disk (``ResizeError``,
found before anything is touched) or a failure before the source acted
put the migration in ``error`` and the server back where it was; a
failure later puts the migration in ``error`` and the server in ERROR,
with the guest of the failed step destroyed and every volume parked
again (one attachment each, exported nowhere), so nothing leaks.
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from minicompute import exception
from minicompute import power_state
from minicompute import resize_flavors
from minicompute import rpcapi
from minicompute import server_volumes
from minicompute import shelve
from minicompute import task_states
from minicompute import utils
from minicompute import vm_states
from minicompute.db import api as db_api
from minicompute.virt import block_device
from ministack import rpc

LOG = logging.getLogger(__name__)

_ERRORS = (exception.InstanceNotFound, exception.InstanceBuildFailed,
           exception.ResizeError, exception.InvalidVolume,
           exception.VolumeNotFound, exception.VolumeAttachmentNotFound)


def _reason(exc):
    return exc.format_message() if hasattr(exc, "format_message") \
        else str(exc)


@rpc.traced_endpoint("nova-compute")
class ResizeEndpoint:
    """RPC endpoints of the resize steps (``minicompute.rpcapi.ComputeAPI``
    1.10).

    :param manager: this host's :class:`minicompute.manager.ComputeManager`.
    :param compute_rpcapi: the client the steps cast the next one with.
    """

    target = messaging.Target(version=rpcapi.ComputeAPI.VERSION)

    def __init__(self, manager, compute_rpcapi):
        self.manager = manager
        self.conf = manager.conf
        self.host = manager.host
        self.driver = manager.driver
        self.volume_api = manager.volume_api
        self.rpcapi = compute_rpcapi
        # Parking a volume is shelve offload's move too.
        self._parking = shelve.ShelveEndpoint(manager)

    def _event(self, ctxt, name, instance):
        return utils.EventReporter(ctxt, "compute_%s" % name, self.host,
                                   instance["uuid"])

    def _update(self, ctxt, instance, values):
        db_api.instance_update(ctxt.elevated(), instance["uuid"], values)
        return self.manager.load_instance(ctxt, instance)

    @staticmethod
    def _migration(ctxt, migration, status, **values):
        return db_api.migration_update(ctxt.elevated(), migration["id"],
                                       dict(values, status=status))

    def _rows(self, ctxt, instance):
        return [r for r in server_volumes.volume_rows(ctxt, instance["uuid"])
                if r.volume_id]

    # -- failures -

    def _roll_back(self, ctxt, instance, migration, exc):
        """Nothing changed on a host yet: the migration in error, the
        server as it was (its vm_state, no task, its flavor)."""
        LOG.warning("Resize of %s refused: %s", instance["uuid"],
                    _reason(exc))
        self._migration(ctxt, migration, "error")
        self._update(ctxt, instance, dict(
            resize_flavors.forget(instance), task_state=None))

    def _error_out(self, ctxt, instance, migration, exc, step,
                   undo_guest=True):
        """A failed step after the source acted: the migration in error,
        the server in ERROR with the reason; with ``undo_guest``, this
        host's guest destroyed (volumes disconnected) and every volume
        parked again. The source's own failure keeps its guest's disk
        and volumes as they are, as upstream leaves them for the
        operator (each BDM still names one attachment)."""
        reason = _reason(exc)
        LOG.error("%s of %s failed on %s: %s", step, instance["uuid"],
                  self.host, reason)
        if undo_guest:
            self._undo_guest(ctxt, instance)
        self._migration(ctxt, migration, "error")
        self._update(ctxt, instance, {
            "vm_state": vm_states.ERROR, "task_state": None,
            "power_state": self.driver.get_power_state(instance),
            "fault": "%s failed: %s" % (step, reason)})

    def _undo_guest(self, ctxt, instance):
        rows = self._rows(ctxt, instance)
        try:
            self.driver.destroy(
                ctxt, instance,
                block_device_info=server_volumes.block_device_info(rows))
        except Exception:
            LOG.exception("Destroying the guest of %s failed",
                          instance["uuid"])
        try:
            self._parking.park_volumes(ctxt, instance,
                                       self._rows(ctxt, instance))
        except Exception:
            LOG.exception("Parking the volumes of %s failed",
                          instance["uuid"])

    # -- the destination gets ready -

    @messaging.expected_exceptions(*_ERRORS)
    def prep_resize(self, ctxt, instance, migration, image, flavor):
        """On the destination: record this host's address on the
        migration, then ask the source to send the server (cast)."""
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "prep_resize", instance):
            try:
                migration = self._migration(ctxt, migration, "pre-migrating",
                                            dest_host=self.conf.my_ip)
                self.rpcapi.resize_instance(ctxt, instance, migration, image,
                                            flavor)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    self._roll_back(ctxt, instance, migration, exc)

    # -- the source sends it -

    def _check_disk_down(self, ctxt, instance, flavor):
        """A local root disk is never shrunk (nova's libvirt driver:
        "Unable to resize disk down."); a volume-backed server's is its
        volume, not the flavor's."""
        if any(r.boot_index == 0 for r in self._rows(ctxt, instance)):
            return
        new_gb = flavor.get("root_gb") or 0
        if new_gb and new_gb < (instance.get("root_gb") or 0):
            raise exception.ResizeError(reason="Unable to resize disk down.")

    @messaging.expected_exceptions(*_ERRORS)
    def resize_instance(self, ctxt, instance, migration, image, flavor):
        """On the source: power off, hand the disk over, park the
        volumes, point the server at the destination (cast)."""
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "resize_instance", instance), \
                utils.instance_lock(instance["uuid"]):
            try:
                self._check_disk_down(ctxt, instance, flavor)
                migration = self._migration(ctxt, migration, "migrating")
                instance = self._update(ctxt, instance, {
                    "task_state": task_states.RESIZE_MIGRATING})
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    self._roll_back(ctxt, instance, migration, exc)
            rows = self._rows(ctxt, instance)
            try:
                disk_info = self.driver.migrate_disk_and_power_off(
                    ctxt, instance, flavor,
                    block_device_info=server_volumes.block_device_info(rows))
                self._parking.park_volumes(ctxt, instance, rows)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    self._error_out(ctxt, instance, migration, exc,
                                    "Resize", undo_guest=False)
            migration = self._migration(ctxt, migration, "post-migrating")
            instance = self._update(ctxt, instance, {
                "host": migration["dest_compute"],
                "node": migration["dest_node"],
                "power_state": power_state.SHUTDOWN,
                "task_state": task_states.RESIZE_MIGRATED})
            LOG.info("Instance %s handed over to %s (%d volume(s) parked)",
                     instance["uuid"], migration["dest_compute"], len(rows))
            self.rpcapi.finish_resize(ctxt, instance, migration, image,
                                      disk_info,
                                      host=migration["dest_compute"])

    # -- a host starts the guest with its volumes -

    def _connect_and_spawn(self, ctxt, instance, start):
        """attachment_update with this host's connector for each volume,
        ``start(block_device_info)``, attachment_complete each."""
        for row in server_volumes.volume_rows(ctxt, instance["uuid"]):
            block_device.DriverVolumeBlockDevice(
                row, self._persist(ctxt, row.id)).update_for_spawn(
                    ctxt, instance, self.volume_api, self.driver)
        connected = server_volumes.block_device_info(
            server_volumes.volume_rows(ctxt, instance["uuid"]))
        start(connected)
        self.manager.server_volumes.complete(ctxt, instance)

    @staticmethod
    def _persist(ctxt, bdm_id):
        return lambda values: db_api.bdm_update(ctxt, bdm_id, values,
                                                reload=False)

    @messaging.expected_exceptions(*_ERRORS)
    def finish_resize(self, ctxt, instance, migration, image, disk_info):
        """On the destination: the new flavor, the volumes connected
        here, the guest started; VERIFY_RESIZE (cast)."""
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "finish_resize", instance), \
                utils.instance_lock(instance["uuid"]):
            power_on = resize_flavors.old_vm_state(instance) != \
                vm_states.STOPPED
            try:
                instance = self._update(ctxt, instance, dict(
                    resize_flavors.apply_new(instance),
                    task_state=task_states.RESIZE_FINISH))
                flavor = resize_flavors.current(instance)
                self._connect_and_spawn(
                    ctxt, instance,
                    lambda connected: self.driver.finish_migration(
                        ctxt, instance, disk_info, image, flavor,
                        block_device_info=connected, power_on=power_on))
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    self._error_out(ctxt, instance, migration, exc,
                                    "Resize")
            self._migration(ctxt, migration, "finished")
            self._update(ctxt, instance, {
                "vm_state": vm_states.RESIZED, "task_state": None,
                "power_state": self.driver.get_power_state(instance)})
            LOG.info("Instance %s resized onto %s: VERIFY_RESIZE",
                     instance["uuid"], self.host)

    # -- confirm -

    @messaging.expected_exceptions(*_ERRORS)
    def confirm_resize(self, ctxt, instance, migration):
        """On the source: its leftovers removed; ACTIVE or SHUTOFF
        (cast). No Cinder call: the volumes are the destination's. A
        server deleted meanwhile (a delete confirms first, as upstream's)
        only has its leftovers removed."""
        try:
            self.driver.confirm_migration(ctxt, instance)
        except Exception as exc:
            with excutils.save_and_reraise_exception():
                LOG.error("Confirm of %s failed: %s", instance["uuid"],
                          _reason(exc))
                self._migration(ctxt, migration, "error")
        self._migration(ctxt, migration, "confirmed")
        try:
            instance = self.manager.load_instance(ctxt, instance)
        except exception.InstanceNotFound:
            LOG.info("Resize of deleted instance %s confirmed",
                     instance["uuid"])
            return
        if instance["vm_state"] != vm_states.RESIZED:
            return
        stopped = instance["power_state"] != power_state.RUNNING
        self._update(ctxt, instance, dict(
            resize_flavors.forget(instance), task_state=None,
            vm_state=vm_states.STOPPED if stopped else vm_states.ACTIVE))
        LOG.info("Resize of %s confirmed", instance["uuid"])

    # -- revert -

    @messaging.expected_exceptions(*_ERRORS)
    def revert_resize(self, ctxt, instance, migration, image):
        """On the destination: the guest destroyed, the volumes parked;
        then the source takes the server back (cast)."""
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "revert_resize", instance), \
                utils.instance_lock(instance["uuid"]):
            rows = self._rows(ctxt, instance)
            try:
                self.driver.destroy(
                    ctxt, instance,
                    block_device_info=server_volumes.block_device_info(rows))
                self._parking.park_volumes(ctxt, instance, rows)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    self._error_out(ctxt, instance, migration, exc,
                                    "Revert")
            migration = self._migration(ctxt, migration, "reverted")
            self.rpcapi.finish_revert_resize(
                ctxt, instance, migration, image,
                host=migration["source_compute"])

    @messaging.expected_exceptions(*_ERRORS)
    def finish_revert_resize(self, ctxt, instance, migration, image):
        """On the source: the old flavor and host back, the volumes
        connected here, the guest from its kept disk (cast)."""
        instance = self.manager.load_instance(ctxt, instance)
        with self._event(ctxt, "finish_revert_resize", instance), \
                utils.instance_lock(instance["uuid"]):
            old_vm_state = resize_flavors.old_vm_state(instance)
            instance = self._update(ctxt, instance, dict(
                resize_flavors.restore_old(instance), host=self.host,
                node=migration["source_node"]))
            flavor = resize_flavors.current(instance)
            try:
                self._connect_and_spawn(
                    ctxt, instance,
                    lambda connected: self.driver.finish_revert_migration(
                        ctxt, instance, image, flavor,
                        block_device_info=connected,
                        power_on=old_vm_state != vm_states.STOPPED))
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    self._error_out(ctxt, instance, migration, exc,
                                    "Revert")
            self._update(ctxt, instance, {
                "vm_state": old_vm_state, "task_state": None,
                "power_state": self.driver.get_power_state(instance)})
            LOG.info("Resize of %s reverted: back on %s", instance["uuid"],
                     self.host)
