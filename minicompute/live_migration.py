"""Live migration of a server with its volumes, between compute hosts
(nova's ``ComputeManager`` live-migration methods; RPC 1.9).

The API (playing the conductor) has set the task state ``migrating``,
recorded the action and the migration (``accepted``), run the
pre-checks (``check_can_live_migrate_destination`` CALL to the
destination, which CALLs ``check_can_live_migrate_source``) and casts
``live_migration`` to the source. Then:

1. source: migration ``preparing``; the BDMs as they are now
   (``source_rows``, the old attachments) kept; CALL
   ``pre_live_migration`` to the destination;
2. destination: per volume a NEW attachment created with its connector
   (a second attachment of the same instance: exported to both hosts),
   its id and connection_info on the BDM, connected here, the guest's
   files made, each completed before the guest moves; a failure undoes
   all of it here and is raised to the source;
3. source: migration ``running``; the driver moves the guest;
4. success: the source disconnects its connections and deletes the OLD
   attachments, then CALLs ``post_live_migration_at_destination`` (the
   instance is the destination's); migration ``completed``;
5. failure: the destination disconnects with its own connection_info
   (``remove_volume_connection``), the NEW attachments are deleted and
   the old ids and connection_info restored, the destination's files
   removed (``rollback_live_migration_at_destination``); the guest
   runs on the source, migration ``failed`` (``cancelled`` after an
   abort).
"""

import json

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from minicompute import exception
from minicompute import rpcapi
from minicompute import server_volumes
from minicompute import task_states
from minicompute import utils
from minicompute.db import api as db_api
from ministack import rpc

LOG = logging.getLogger(__name__)

#: What a pre-check may raise; the API answers it (400 below 2.34).
PRECHECK_ERRORS = (exception.MigrationPreCheckError,
                   exception.UnableToMigrateToSelf,
                   exception.InvalidSharedStorage,
                   exception.InvalidLocalStorage,
                   exception.InstanceNotFound,
                   exception.InternalError)


def _reason(exc):
    return exc.format_message() if hasattr(exc, "format_message") \
        else str(exc) or type(exc).__name__


def _snapshot(rows):
    """The volume BDMs as plain dicts, as they are before the move."""
    return [{"id": r.id, "volume_id": r.volume_id,
             "attachment_id": r.attachment_id,
             "connection_info": r.connection_info,
             "device_name": r.device_name, "disk_bus": r.disk_bus,
             "device_type": r.device_type}
            for r in rows if r.volume_id]


def _block_device_info(rows):
    return [{"connection_info": json.loads(r["connection_info"]),
             "mount_device": r["device_name"], "disk_bus": r["disk_bus"],
             "device_type": r["device_type"], "volume_id": r["volume_id"]}
            for r in rows if r["connection_info"]]


@rpc.traced_endpoint("nova-compute")
class LiveMigrationEndpoint:
    """RPC endpoints of a live migration, on the source and on the
    destination.

    :param rpcapi_client: a ``minicompute.rpcapi.ComputeAPI`` (the hosts
        call each other).
    """

    target = messaging.Target(version=rpcapi.ComputeAPI.VERSION)

    def __init__(self, conf, driver, volume_api, load_instance,
                 rpcapi_client):
        self.host = conf.host
        self.driver = driver
        self.volume_api = volume_api
        self.load_instance = load_instance
        self.compute_rpcapi = rpcapi_client
        #: uuids of the instances whose migration an abort cancelled
        self._aborted = set()

    # -- pre-checks (CALLs) -

    @messaging.expected_exceptions(*PRECHECK_ERRORS)
    def check_can_live_migrate_destination(self, ctxt, instance,
                                           block_migration=None):
        """On the destination: may the instance come here? Asks the
        source too; returns the migrate data both sides use.

        :param block_migration: True, False or None ("auto": a block
            migration when the guest has local disks).
        """
        instance = self.load_instance(ctxt, instance)
        if instance["host"] == self.host:
            raise exception.UnableToMigrateToSelf(
                instance_id=instance["uuid"], host=self.host)
        if self.driver.instance_exists(instance):
            raise exception.MigrationPreCheckError(
                reason="the guest %s already exists on host %s"
                % (instance["name"], self.host))
        data = self.driver.check_can_live_migrate_destination(ctxt,
                                                              instance)
        data["dest_host"] = self.host
        data.update(self.compute_rpcapi.check_can_live_migrate_source(
            ctxt, instance, data))
        local = bool(data["local_disks"])
        if block_migration is None:
            block_migration = local
        if block_migration and not local:
            raise exception.InvalidLocalStorage(
                path=data["source_dir"],
                reason="Block migration can not be used with shared "
                       "storage.")
        if not block_migration and local:
            raise exception.InvalidSharedStorage(
                path=data["source_dir"],
                reason="Shared storage live-migration requires either "
                       "shared storage or boot-from-volume with no local "
                       "disks.")
        data["block_migration"] = bool(block_migration)
        return data

    @messaging.expected_exceptions(*PRECHECK_ERRORS)
    def check_can_live_migrate_source(self, ctxt, instance,
                                      dest_check_data):
        """On the source: what the destination needs of the guest."""
        instance = self.load_instance(ctxt, instance)
        if instance["host"] != self.host:
            raise exception.MigrationPreCheckError(
                reason="instance %s is not on host %s"
                % (instance["uuid"], self.host))
        return self.driver.check_can_live_migrate_source(ctxt, instance)

    # -- the destination -

    @messaging.expected_exceptions(exception.DestinationDiskExists,
                                   exception.InstanceNotFound,
                                   exception.VolumeNotFound,
                                   exception.VolumeAttachmentNotFound)
    def pre_live_migration(self, ctxt, instance, migrate_data):
        """New attachments with this host's connector, volumes connected
        here, the guest's files made; all undone on failure (CALL).

        :returns: ``migrate_data`` with ``volume_disks``.
        """
        instance = self.load_instance(ctxt, instance)
        admin = ctxt.elevated()
        with utils.EventReporter(ctxt, "compute_pre_live_migration",
                                 self.host, instance["uuid"]):
            connector = self.driver.get_volume_connector(instance)
            changed, volumes, driver_done = [], [], False
            try:
                for row in server_volumes.volume_rows(admin,
                                                      instance["uuid"]):
                    if not row.attachment_id:
                        continue
                    volumes.append(self._new_attachment(
                        admin, instance, row, connector, changed))
                data = self.driver.pre_live_migration(
                    ctxt, instance, migrate_data, volumes)
                driver_done = True
                for _row, _old_id, _old_info, new_id in changed:
                    self.volume_api.attachment_complete(admin, new_id)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    LOG.error("pre_live_migration of %s failed here: %s",
                              instance["uuid"], _reason(exc))
                    if driver_done:
                        self._quietly(
                            self.driver.rollback_live_migration_at_destination,
                            ctxt, instance, volumes)
                    self._restore(admin, changed)
        LOG.info("Host %s is ready for %s: %d volume(s) connected",
                 self.host, instance["uuid"], len(volumes))
        return dict(migrate_data, **data)

    def _new_attachment(self, admin, instance, row, connector, changed):
        attachment = self.volume_api.attachment_create(
            admin, row.volume_id, instance["uuid"], connector=connector,
            mountpoint=row.device_name)
        changed.append((row.id, row.attachment_id, row.connection_info,
                        attachment["id"]))
        db_api.bdm_update(admin, row.id, {"attachment_id": attachment["id"]},
                          reload=False)
        info = dict(self.volume_api.attachment_get(
            admin, attachment["id"])["connection_info"])
        info.setdefault("serial", row.volume_id)
        old = json.loads(row.connection_info) if row.connection_info else {}
        if old.get("multiattach"):
            info["multiattach"] = True
        db_api.bdm_update(admin, row.id,
                          {"connection_info": json.dumps(info)},
                          reload=False)
        return {"connection_info": info, "mount_device": row.device_name,
                "disk_bus": row.disk_bus, "device_type": row.device_type,
                "volume_id": row.volume_id}

    def _restore(self, admin, changed):
        """The new attachments deleted, the old ids and connection_info
        back on the BDMs."""
        for bdm_id, old_id, old_info, new_id in changed:
            self._delete_attachment(admin, new_id)
            db_api.bdm_update(admin, bdm_id, {"attachment_id": old_id,
                                              "connection_info": old_info},
                              reload=False)

    def _delete_attachment(self, admin, attachment_id):
        try:
            self.volume_api.attachment_delete(admin, attachment_id)
        except exception.VolumeAttachmentNotFound:
            pass
        except Exception:
            LOG.exception("Could not delete attachment %s", attachment_id)

    @staticmethod
    def _quietly(func, *args):
        try:
            func(*args)
        except Exception:
            LOG.exception("Undo step %s failed", func.__name__)

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def post_live_migration_at_destination(self, ctxt, instance, node=None):
        """The guest runs here: the instance is this host's, on its node
        ``node`` (CALL)."""
        instance = self.load_instance(ctxt, instance)
        with utils.EventReporter(ctxt,
                                 "compute_post_live_migration_at_destination",
                                 self.host, instance["uuid"]):
            db_api.instance_update(ctxt.elevated(), instance["uuid"], {
                "host": self.host, "node": node or self.host,
                "task_state": None,
                "power_state": self.driver.get_power_state(instance)},
                expected_task_state=[task_states.MIGRATING])
        LOG.info("Instance %s now runs on host %s", instance["uuid"],
                 self.host)

    def remove_volume_connection(self, ctxt, instance, volume_id):
        """Disconnect one volume here with the connection_info the BDM
        holds (this host's, during a migration); the attachment is the
        source's to delete (CALL)."""
        instance = self.load_instance(ctxt, instance)
        row = db_api.bdm_get_by_volume_and_instance(ctxt.elevated(),
                                                    volume_id,
                                                    instance["uuid"])
        if row.connection_info:
            self.driver.remove_volume_connection(
                ctxt, instance, json.loads(row.connection_info))

    def rollback_live_migration_at_destination(self, ctxt, instance):
        """The guest's files made here removed (CAST; the volumes were
        disconnected by ``remove_volume_connection``)."""
        instance = self.load_instance(ctxt, instance)
        self._quietly(self.driver.rollback_live_migration_at_destination,
                      ctxt, instance, ())

    # -- the source -

    @messaging.expected_exceptions(exception.LiveMigrationFailed,
                                   exception.DestinationDiskExists,
                                   exception.MigrationPreCheckError)
    def live_migration(self, ctxt, instance, dest, migrate_data,
                       migration=None):
        """Run the migration from this host (CAST)."""
        instance = self.load_instance(ctxt, instance)
        uuid = instance["uuid"]
        migration_id = (migration or {}).get("id")
        with utils.EventReporter(ctxt, "compute_live_migration", self.host,
                                 uuid), utils.instance_lock(uuid):
            admin = ctxt.elevated()
            source_rows = _snapshot(server_volumes.volume_rows(admin, uuid))
            if self._cancelled(uuid, keep=True):
                self._rollback(ctxt, instance, dest, source_rows,
                               migration_id, reached_dest=False)
                return
            self._status(ctxt, migration_id, "preparing")
            try:
                migrate_data = self.compute_rpcapi.pre_live_migration(
                    ctxt, instance, dest, migrate_data)
            except Exception as exc:
                LOG.error("Live migration of %s: the destination %s "
                          "refused: %s", uuid, dest, _reason(exc))
                self._rollback(ctxt, instance, dest, source_rows,
                               migration_id, reached_dest=False)
                raise
            self._status(ctxt, migration_id, "running")
            try:
                if self._cancelled(uuid, keep=True):
                    raise exception.LiveMigrationFailed(
                        instance_uuid=uuid, reason="aborted")
                self.driver.live_migration(ctxt, instance, migrate_data)
            except Exception as exc:
                LOG.error("Live migration of %s to %s failed: %s", uuid,
                          dest, _reason(exc))
                self._rollback(ctxt, instance, dest, source_rows,
                               migration_id, reached_dest=True)
                raise
            self._post(ctxt, instance, dest, source_rows, migration_id,
                       migrate_data.get("dest_node"))

    def _post(self, ctxt, instance, dest, source_rows, migration_id, node):
        """The guest runs on ``dest``: this host lets go of it."""
        admin = ctxt.elevated()
        self._aborted.discard(instance["uuid"])     # too late to cancel
        self._quietly(self.driver.post_live_migration_at_source, ctxt,
                      instance, _block_device_info(source_rows))
        for row in source_rows:
            if row["attachment_id"]:
                self._delete_attachment(admin, row["attachment_id"])
        self.compute_rpcapi.post_live_migration_at_destination(
            ctxt, instance, dest, node)
        self._status(ctxt, migration_id, "completed")
        LOG.info("Live migration of %s to %s completed", instance["uuid"],
                 dest)

    def _rollback(self, ctxt, instance, dest, source_rows, migration_id,
                  reached_dest):
        """The guest stays here; the destination's side undone."""
        admin = ctxt.elevated()
        current = {r.id: r for r in server_volumes.volume_rows(
            admin, instance["uuid"])}
        if reached_dest:
            for row in source_rows:
                self._quietly(self.compute_rpcapi.remove_volume_connection,
                              ctxt, instance, row["volume_id"], dest)
        for row in source_rows:
            now = current.get(row["id"])
            if now is not None and now.attachment_id != row["attachment_id"]:
                self._delete_attachment(admin, now.attachment_id)
            db_api.bdm_update(admin, row["id"], {
                "attachment_id": row["attachment_id"],
                "connection_info": row["connection_info"]}, reload=False)
        if reached_dest:
            self._quietly(
                self.compute_rpcapi.rollback_live_migration_at_destination,
                ctxt, instance, dest)
        db_api.instance_update(admin, instance["uuid"], {
            "task_state": None},
            expected_task_state=[task_states.MIGRATING])
        cancelled = self._cancelled(instance["uuid"])
        self._status(ctxt, migration_id,
                     "cancelled" if cancelled else "failed")

    def _cancelled(self, uuid, keep=False):
        """Whether an abort asked to cancel this instance's migration
        (forgotten unless ``keep``)."""
        if uuid not in self._aborted:
            return False
        if not keep:
            self._aborted.discard(uuid)
        return True

    def live_migration_abort(self, ctxt, instance, migration_id):
        """Cancel the instance's migration (CAST): a queued one never
        starts, a running job is aborted and rolled back; ``cancelled``."""
        instance = self.load_instance(ctxt, instance)
        with utils.EventReporter(ctxt, "compute_live_migration_abort",
                                 self.host, instance["uuid"]):
            self._aborted.add(instance["uuid"])
            status = db_api.migration_get(ctxt.elevated(),
                                          migration_id)["status"]
            if status == "running":
                self.driver.live_migration_abort(instance)
            LOG.info("Aborting the live migration of %s (%s)",
                     instance["uuid"], status)

    def live_migration_force_complete(self, ctxt, instance):
        """Pause the guest so its migration converges (CAST)."""
        instance = self.load_instance(ctxt, instance)
        with utils.EventReporter(ctxt,
                                 "compute_live_migration_force_complete",
                                 self.host, instance["uuid"]):
            self.driver.live_migration_force_complete(instance)

    @staticmethod
    def _status(ctxt, migration_id, status):
        if migration_id is None:
            return
        try:
            db_api.migration_update(ctxt.elevated(), migration_id,
                                    {"status": status})
        except Exception:
            LOG.exception("Could not set migration %s to %s", migration_id,
                          status)
