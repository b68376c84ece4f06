"""The API phase of resize, cold migration, confirm and revert (nova's
``compute.api.API.resize``, ``confirm_resize`` and ``revert_resize``,
with its conductor's ``MigrationTask`` at mini scale).

* ``resize`` / ``migrate``: an ACTIVE or SHUTOFF server with no task on
  an up host (409 otherwise). A resize checks the flavor (it exists and
  is enabled, it is not the server's, its disk is not 0 for an
  image-backed server with a disk, the image's ``min_disk``, size and
  ``min_ram`` fit: 400); a migrate to a named host (2.56, admin) checks
  the host (unknown or the server's own: 400). The destination is
  scheduled (the source excluded, unless a resize may stay:
  ``allow_resize_to_same_host``, or the cloud has one compute host); none
  is nova's NoValidHost, a 400 as nova's controller answers it. Then
  task ``resize_prep``, the new flavor and the vm_state kept with the
  instance (``minicompute.resize_flavors``), a migration record
  ``pre-migrating`` (``resize`` or ``migration``), the action recorded,
  ``prep_resize`` cast to the destination.
* ``confirmResize``: a RESIZED server with a ``finished`` migration (400
  "Instance has not been resized." otherwise), its source host up;
  the migration ``confirming``, ``confirm_resize`` cast to the source.
* ``revertResize``: the same checks on the server's (destination) host;
  task ``resize_reverting``, the migration ``reverting``,
  ``revert_resize`` cast to the destination.

The compute side is ``minicompute.resize``.
"""

import logging

from oslo_utils import excutils

from miniapi.compute import checks
from miniapi.compute import scheduler
from miniapi.compute import servers
from minicompute import exception
from minicompute import instance_actions
from minicompute import resize_flavors
from minicompute import task_states
from minicompute import vm_states
from minicompute.db import api as db_api
from minicompute.db import flavors as flavors_db
from ministack import exception as ms_exception

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3


class CannotResizeToSameFlavor(ms_exception.Invalid):
    msg_fmt = "When resizing, instances must change flavor!"


class CannotResizeDisk(ms_exception.Invalid):
    msg_fmt = "Server disk was unable to be resized because: %(reason)s"


class CannotMigrateToSameHost(ms_exception.Invalid):
    msg_fmt = "Cannot migrate to the host where the server exists."


class NoValidHost(ms_exception.Invalid):
    msg_fmt = "No valid host was found. %(reason)s"


class InstanceNotResized(ms_exception.Invalid):
    msg_fmt = "Instance has not been resized."


class ResizeOperations:
    """Mixed into :class:`miniapi.compute.api.API` (``compute_rpcapi``,
    ``volume_api``, ``down_time``, ``allow_resize_to_same_host``,
    ``boot_image``)."""

    allow_resize_to_same_host = False

    # -- resize and migrate -

    def resize(self, ctxt, instance, flavor_ref=None, host=None):
        """Start a resize (``flavor_ref``) or, without one, a cold
        migration (to ``host`` when given: the caller checked the
        policy).

        :raises InstanceIsLocked: locked, for a non-admin (409).
        :raises InstanceInvalidState: not ACTIVE/SHUTOFF or a task (409).
        :raises ComputeServiceUnavailable: the host is down (409).
        :raises Invalid: a flavor, image or host refusal (400).
        """
        migrate = flavor_ref is None
        method = "migrate" if migrate else "resize"
        _check_unlocked(ctxt, instance)
        checks.check_instance_state(instance, method,
                                    vm_state=vm_states.ALLOW_RESIZE)
        checks.check_host_up(ctxt, instance, self.down_time)
        volume_backed = self._root_volume_id(ctxt, instance) is not None \
            or not instance.image_ref
        image = self._move_image(ctxt, instance, volume_backed)
        if migrate:
            flavor = resize_flavors.current(instance)
        else:
            flavor = self._new_flavor(ctxt, instance, flavor_ref)
            self._check_flavor(instance, flavor, image, volume_backed)
        node = self._destination(ctxt, instance, host, migrate)
        instance = self._start(ctxt, instance, method, flavor)
        migration = db_api.migration_create(ctxt, {
            "instance_uuid": instance.uuid,
            "migration_type": "migration" if migrate else "resize",
            "status": "pre-migrating",
            "source_compute": instance.host, "source_node": instance.node,
            "dest_compute": node.host,
            "dest_node": node.hypervisor_hostname,
            "dest_host": node.host_ip,
            "old_instance_type_id": instance.instance_type_id,
            "new_instance_type_id": flavor.get("id")})
        try:
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.MIGRATE if migrate
                                else instance_actions.RESIZE)
            self.compute_rpcapi.prep_resize(
                ctxt, db_api.to_dict(instance), migration, image, flavor,
                host=node.host)
        except Exception:
            with excutils.save_and_reraise_exception():
                db_api.migration_update(ctxt, migration["id"],
                                        {"status": "error"})
                db_api.instance_update(ctxt, instance.uuid, dict(
                    resize_flavors.forget(instance), task_state=None))
        LOG.info("%s of %s from %s to %s cast", method, instance.uuid,
                 instance.host, node.host)

    def _root_volume_id(self, ctxt, instance):
        return next((b.volume_id for b in db_api.bdm_get_all_by_instance(
            ctxt, instance.uuid) if b.boot_index == 0 and b.volume_id and
            b.destination_type == "volume"), None)

    def _move_image(self, ctxt, instance, volume_backed):
        """The image the moved guest boots its kernel from (a
        volume-backed server's: its root volume's)."""
        mappings = []
        if volume_backed:
            mappings = [{"boot_index": 0, "destination_type": "volume",
                         "source_type": "volume",
                         "uuid": self._root_volume_id(ctxt, instance)}]
        return self.boot_image(ctxt, instance.image_ref, mappings)

    @staticmethod
    def _new_flavor(ctxt, instance, flavor_ref):
        """The flavor asked for, as the instance keeps it; a missing or
        disabled one is "Unable to locate requested flavor." (400)."""
        try:
            flavor = db_api.flavor_get(ctxt, flavor_ref)
        except exception.FlavorNotFound:
            flavor = None
        if flavor is None or flavor.disabled:
            raise ms_exception.Invalid(
                message="Unable to locate requested flavor.")
        return servers.flavor_primitive(
            flavor, flavors_db.extra_specs_get(ctxt, flavor))

    @staticmethod
    def _check_flavor(instance, flavor, image, volume_backed):
        """nova's resize checks of the new flavor against the server and
        its image (400 each)."""
        current = resize_flavors.current(instance)
        if str(flavor["flavorid"]) == str(current.get("flavorid")):
            raise CannotResizeToSameFlavor()
        if volume_backed:
            return
        if not flavor["root_gb"] and (current.get("root_gb") or 0):
            raise CannotResizeDisk(
                reason="Resize to zero disk flavor is not allowed.")
        if (image.get("min_ram") or 0) > flavor["memory_mb"]:
            raise ms_exception.Invalid(
                message="Flavor's memory is too small for requested image.")
        if not flavor["root_gb"]:
            return
        flavor_size = flavor["root_gb"] * GiB
        image_size = int(image.get("virtual_size") or image.get("size")
                         or 0)
        if image_size > flavor_size:
            raise ms_exception.Invalid(
                message="Flavor's disk is too small for requested image. "
                        "Flavor disk is %i bytes, image is %i bytes."
                        % (flavor_size, image_size))
        min_disk = int(image.get("min_disk") or 0) * GiB
        if min_disk > flavor_size:
            raise ms_exception.Invalid(
                message="Flavor's disk is smaller than the minimum size "
                        "specified in image metadata. Flavor disk is %i "
                        "bytes, minimum size is %i bytes."
                        % (flavor_size, min_disk))

    def _destination(self, ctxt, instance, host, migrate):
        """The compute node the server goes to.

        :raises Invalid: an unknown host, the server's own host for a
            migrate, no valid host (400).
        """
        if host:
            try:
                scheduler.validate_host_or_node(ctxt, host, None)
            except exception.ComputeHostNotFound as exc:
                raise ms_exception.Invalid(message=exc.format_message()) \
                    from exc
            if host == instance.host:
                raise CannotMigrateToSameHost()
        admin = ctxt.elevated()
        hosts = {n.host for n in db_api.compute_node_get_all(admin)}
        same_host_ok = not migrate and (self.allow_resize_to_same_host or
                                        hosts == {instance.host})
        ignore = () if same_host_ok else (instance.host,)
        node = scheduler.select_destination(ctxt, self.down_time, host=host,
                                            ignore_hosts=ignore)
        if node is None:
            raise NoValidHost(reason="")
        return node

    def _start(self, ctxt, instance, method, flavor):
        """Task ``resize_prep`` (compare-and-swap: 409 to the loser), the
        new flavor and the vm_state to return to kept."""
        try:
            return db_api.instance_update(
                ctxt, instance.uuid,
                dict(resize_flavors.start(instance, flavor,
                                          instance.vm_state),
                     task_state=task_states.RESIZE_PREP),
                expected_task_state=[None],
                expected_vm_state=vm_states.ALLOW_RESIZE)
        except (exception.UnexpectedTaskStateError,
                exception.UnexpectedVMStateError):
            current = db_api.instance_get(ctxt, instance.uuid)
            checks.check_instance_state(current, method,
                                        vm_state=vm_states.ALLOW_RESIZE)
            raise

    # -- confirm and revert -

    def _finished_migration(self, ctxt, instance, method):
        _check_unlocked(ctxt, instance)
        checks.check_instance_state(instance, method,
                                    vm_state=[vm_states.RESIZED])
        try:
            return db_api.migration_get_by_instance_and_status(
                ctxt.elevated(), instance.uuid, "finished")
        except exception.MigrationNotFound:
            raise InstanceNotResized() from None

    def confirm_resize(self, ctxt, instance):
        """Cast the confirm to the source host.

        :raises InstanceInvalidState: not RESIZED (409).
        :raises InstanceNotResized: no finished migration (400).
        :raises ComputeServiceUnavailable: the source is down (409).
        """
        migration = self._finished_migration(ctxt, instance, "confirmResize")
        checks.check_host_up(ctxt, _OnHost(instance.uuid,
                                           migration["source_compute"]),
                             self.down_time)
        migration = db_api.migration_update(ctxt, migration["id"],
                                            {"status": "confirming"})
        try:
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.CONFIRM_RESIZE)
            self.compute_rpcapi.confirm_resize(
                ctxt, db_api.to_dict(instance), migration,
                host=migration["source_compute"])
        except Exception:
            with excutils.save_and_reraise_exception():
                db_api.migration_update(ctxt, migration["id"],
                                        {"status": "finished"})

    def confirm_on_delete(self, ctxt, instance):
        """A RESIZED server being deleted: its resize confirmed first, so
        the source removes its leftovers (nova's
        ``_confirm_resize_on_deleting``). Nothing when the source is
        down: its leftovers wait for it."""
        if instance.vm_state != vm_states.RESIZED:
            return
        try:
            migration = db_api.migration_get_by_instance_and_status(
                ctxt.elevated(), instance.uuid, "finished")
        except exception.MigrationNotFound:
            return
        if checks.host_status(ctxt, migration["source_compute"],
                              self.down_time) not in ("UP", "MAINTENANCE"):
            return
        migration = db_api.migration_update(ctxt, migration["id"],
                                            {"status": "confirming"})
        self.compute_rpcapi.confirm_resize(
            ctxt, db_api.to_dict(instance), migration,
            host=migration["source_compute"])

    def revert_resize(self, ctxt, instance):
        """Cast the revert to the destination (the server's host).

        :raises InstanceInvalidState: not RESIZED or a task (409).
        :raises InstanceNotResized: no finished migration (400).
        :raises ComputeServiceUnavailable: the host is down (409).
        """
        migration = self._finished_migration(ctxt, instance, "revertResize")
        checks.check_host_up(ctxt, instance, self.down_time)
        volume_backed = self._root_volume_id(ctxt, instance) is not None \
            or not instance.image_ref
        image = self._move_image(ctxt, instance, volume_backed)
        try:
            instance = db_api.instance_update(
                ctxt, instance.uuid,
                {"task_state": task_states.RESIZE_REVERTING},
                expected_task_state=[None],
                expected_vm_state=[vm_states.RESIZED])
        except (exception.UnexpectedTaskStateError,
                exception.UnexpectedVMStateError):
            current = db_api.instance_get(ctxt, instance.uuid)
            checks.check_instance_state(current, "revertResize",
                                        vm_state=[vm_states.RESIZED])
            raise
        migration = db_api.migration_update(ctxt, migration["id"],
                                            {"status": "reverting"})
        try:
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.REVERT_RESIZE)
            self.compute_rpcapi.revert_resize(
                ctxt, db_api.to_dict(instance), migration, image)
        except Exception:
            with excutils.save_and_reraise_exception():
                db_api.migration_update(ctxt, migration["id"],
                                        {"status": "finished"})
                db_api.instance_update(ctxt, instance.uuid,
                                       {"task_state": None})


def _check_unlocked(ctxt, instance):
    """A locked server moves for an admin only (409), as upstream."""
    if instance.locked and not ctxt.is_admin:
        raise exception.InstanceIsLocked(instance_uuid=instance.uuid)


class _OnHost:
    """What ``checks.check_host_up`` reads of a server, for another of
    its hosts (the source of a move)."""

    def __init__(self, uuid, host):
        self.uuid = uuid
        self.host = host
