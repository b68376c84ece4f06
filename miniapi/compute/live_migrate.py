"""The API phase of a live migration (nova's ``compute.api.API.
live_migrate`` and, since ministack has no conductor, the conductor's
``LiveMigrationTask``).

* checks: the server is ACTIVE or PAUSED with nothing in flight (409),
  a named host has a compute node (``ComputeHostNotFound``, a 400 at
  every microversion);
* task state ``migrating`` (compare-and-swap), the ``live-migration``
  action, the migration record (``accepted``);
* the destination: a forced host (``force``, or any named host before
  2.30) is checked directly: not the source
  (``UnableToMigrateToSelf``), up (``ComputeServiceUnavailable``);
  otherwise the scheduler picks an up host other than the source (the
  named one, if any: ``NoValidHost`` when it does not pass);
* the pre-checks: ``check_can_live_migrate_destination`` CALL to the
  destination, which asks the source;
* the CAST of ``live_migration`` to the source, with the migration.

A failed pre-check ends the migration in ``error`` and clears the task
state (the server keeps its vm_state); the caller (the API module)
answers it with 400 below 2.34 and 202 from 2.34, when upstream's
conductor runs them after the answer.
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from miniapi.compute import checks
from miniapi.compute import scheduler
from minicompute import exception
from minicompute import instance_actions
from minicompute import task_states
from minicompute import utils
from minicompute import vm_states
from minicompute.db import api as db_api

LOG = logging.getLogger(__name__)

#: The server's states a live migration starts from.
ALLOWED = [vm_states.ACTIVE, vm_states.PAUSED]

#: The pre-check failures (upstream's conductor list): 400 below 2.34.
PRECHECK_ERRORS = (exception.NoValidHost,
                   exception.ComputeServiceUnavailable,
                   exception.UnableToMigrateToSelf,
                   exception.InvalidSharedStorage,
                   exception.InvalidLocalStorage,
                   exception.MigrationPreCheckError,
                   exception.HypervisorUnavailable)


class LiveMigrateOperations:
    """Mixed into :class:`miniapi.compute.api.API`."""

    def live_migrate(self, ctxt, instance, block_migration, host=None,
                     forced=False, fail_quietly=False):
        """Start the live migration of ``instance``.

        :param block_migration: True, False or None (``auto``).
        :param host: the requested destination, or None.
        :param forced: check ``host`` directly, without the scheduler.
        :param fail_quietly: a failed pre-check only ends the migration
            in ``error`` (2.34+); otherwise it is raised.
        :returns: the migration record.
        """
        checks.check_instance_state(instance, "live_migrate",
                                    vm_state=ALLOWED, task_state=[None])
        if host:
            scheduler.validate_host_or_node(ctxt, host, None)
        try:
            instance = db_api.instance_update(
                ctxt, instance.uuid, {"task_state": task_states.MIGRATING},
                expected_task_state=[None], expected_vm_state=ALLOWED)
        except (exception.UnexpectedTaskStateError,
                exception.UnexpectedVMStateError):
            current = db_api.instance_get(ctxt, instance.uuid)
            checks.check_instance_state(current, "live_migrate",
                                        vm_state=ALLOWED, task_state=[None])
            raise
        try:
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.LIVE_MIGRATION)
            migration = db_api.migration_create(ctxt, {
                "instance_uuid": instance.uuid,
                "migration_type": "live-migration", "status": "accepted",
                "source_compute": instance.host,
                "source_node": instance.node, "dest_compute": host,
                "old_instance_type_id": instance.instance_type_id,
                "new_instance_type_id": instance.instance_type_id})
        except Exception:
            with excutils.save_and_reraise_exception():
                self._live_migrate_failed(ctxt, instance, None)
        try:
            with utils.EventReporter(ctxt, "conductor_live_migrate_instance",
                                     None, instance.uuid):
                node, data = self._live_migrate_destination(
                    ctxt, instance, host, forced, block_migration)
                migration = db_api.migration_update(ctxt, migration["id"], {
                    "dest_compute": node.host,
                    "dest_node": node.hypervisor_hostname,
                    "dest_host": node.host_ip})
                data["dest_node"] = node.hypervisor_hostname
                self.compute_rpcapi.live_migration(
                    ctxt, db_api.to_dict(instance), node.host, data,
                    migration=migration)
        except PRECHECK_ERRORS as exc:
            LOG.info("Live migration of %s refused: %s", instance.uuid,
                     exc.format_message())
            self._live_migrate_failed(ctxt, instance, migration)
            if not fail_quietly:
                raise
        except Exception:
            with excutils.save_and_reraise_exception():
                self._live_migrate_failed(ctxt, instance, migration)
        return migration

    def _live_migrate_destination(self, ctxt, instance, host, forced,
                                  block_migration):
        """The destination's compute node and the pre-checks' migrate
        data."""
        checks.check_host_up(ctxt, instance, self.down_time)
        if host and forced:
            if host == instance.host:
                raise exception.UnableToMigrateToSelf(
                    instance_id=instance.uuid, host=host)
            if checks.host_status(ctxt, host, self.down_time) not in (
                    "UP", "MAINTENANCE"):
                raise exception.ComputeServiceUnavailable(host=host)
            node = db_api.compute_node_get_all(ctxt.elevated(),
                                               host=host)[0]
        else:
            node = scheduler.select_destination(
                ctxt, self.down_time, host=host,
                hints={"different_host": [instance.uuid]})
            if node is None:
                raise exception.NoValidHost(reason="")
        try:
            data = self.compute_rpcapi.check_can_live_migrate_destination(
                ctxt, db_api.to_dict(instance), node.host, block_migration)
        except messaging.MessagingTimeout:
            raise exception.MigrationPreCheckError(
                reason="Timeout while checking if we can live migrate to "
                       "host: %s" % node.host) from None
        return node, data

    def _live_migrate_failed(self, ctxt, instance, migration):
        """The migration ends in ``error``, the task state is cleared."""
        if migration is not None:
            try:
                db_api.migration_update(ctxt, migration["id"],
                                        {"status": "error"})
            except Exception:
                LOG.exception("Could not end migration %s",
                              migration["id"])
        try:
            db_api.instance_update(ctxt, instance.uuid, {"task_state": None},
                                   expected_task_state=[
                                       task_states.MIGRATING])
        except Exception:
            LOG.exception("Could not clear the task state of %s",
                          instance.uuid)
