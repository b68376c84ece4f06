"""The API phase of shelve, shelve offload and unshelve (nova's
``compute.api.API.shelve``, ``shelve_offload`` and ``unshelve``).

* ``shelve``: an ACTIVE, SHUTOFF, PAUSED or SUSPENDED server with no task.
  An image-backed one gets a snapshot image record (``<name>-shelved``,
  private to its project, with ``instance_uuid`` and ``image_type``
  ``snapshot``, the base image's boot properties inherited) and the host
  is cast ``shelve_instance``; a volume-backed one gets no image and is
  cast ``shelve_offload_instance`` straight away, as upstream.
* ``shelveOffload``: a SHELVED server (admin only, checked by the
  controller).
* ``unshelve``: a SHELVED server is powered on where it is; an offloaded
  one is scheduled (a requested host, 2.91, or any) and cast
  ``unshelve_instance`` with the image to boot: its snapshot, or for a
  volume-backed server the image its root volume was made from. No valid
  host: the server stays SHELVED_OFFLOADED with no task, as upstream's
  conductor leaves it. An image-backed server whose snapshot is gone
  goes to ERROR, as upstream's ``UnshelveException``.

The snapshot goes through the image service's own steps, as nova's
through Glance: the API creates the ``queued`` record
(``ministack.image_store.create``, what ``POST /v2/images`` does), the
host uploads the guest's disk into it (``active``), and an unshelve or
the server's delete deletes it.
"""

import json
import logging
import uuid as uuidlib

from oslo_utils import excutils

from miniapi.compute import checks
from miniapi.compute import scheduler
from minicompute import exception
from minicompute import instance_actions
from minicompute import task_states
from minicompute import vm_states
from minicompute.db import api as db_api
from ministack import db
from ministack import exception as ms_exception
from ministack import image_store
from ministack import images as image_registry

LOG = logging.getLogger(__name__)

#: unshelve's ``availability_zone`` was not given (None unpins at 2.91).
UNSET = object()

#: The base image's properties a snapshot inherits (what a guest of this
#: registry boots with).
_INHERITED = ("cmdline", "disk_format", "min_disk", "min_ram",
              "virtual_size")


class UnshelveInstanceInvalidState(ms_exception.Conflict):
    msg_fmt = ("Specifying an availability zone or a host when unshelving "
               "server %(instance_uuid)s with status %(state)s is not "
               "supported. The server status must be SHELVED_OFFLOADED.")


class ShelveOperations:
    """Mixed into :class:`miniapi.compute.api.API` (``compute_rpcapi``,
    ``volume_api``, ``down_time``, ``image_dir``)."""

    def _images_root(self):
        return self.image_dir or image_registry.DEFAULT_ROOT

    def _root_volume(self, ctxt, instance):
        return next((b for b in db_api.bdm_get_all_by_instance(
            ctxt, instance.uuid) if b.boot_index == 0 and b.volume_id and
            b.destination_type == "volume"), None)

    def _set_task(self, ctxt, instance, operation, allowed, task_state,
                  values=None):
        """Compare-and-swap the task state (409 when another operation
        won the race)."""
        try:
            return db_api.instance_update(
                ctxt, instance.uuid,
                dict(values or {}, task_state=task_state),
                expected_task_state=[None], expected_vm_state=allowed)
        except (exception.UnexpectedTaskStateError,
                exception.UnexpectedVMStateError):
            current = db_api.instance_get(ctxt, instance.uuid)
            checks.check_instance_state(current, operation,
                                        vm_state=allowed)
            raise

    def _cast(self, ctxt, instance, action, cast, undo):
        """Record ``action`` and cast; ``undo`` (values) if it fails."""
        try:
            db_api.action_start(ctxt, instance.uuid, action)
            cast(db_api.to_dict(instance))
        except Exception:
            with excutils.save_and_reraise_exception():
                db_api.instance_update(ctxt, instance.uuid, undo)

    # -- shelve -

    def shelve(self, ctxt, instance):
        """Cast the shelve (image-backed: with its snapshot record) or,
        volume-backed, the offload."""
        checks.check_instance_state(instance, "shelve",
                                    vm_state=vm_states.ALLOW_SHELVE)
        checks.check_host_up(ctxt, instance, self.down_time)
        volume_backed = not instance.image_ref or \
            self._root_volume(ctxt, instance) is not None
        image = None if volume_backed else image_store.create(
            self._snapshot_record(ctxt, instance), self._images_root())
        if volume_backed:
            def cast(inst):
                self.compute_rpcapi.shelve_offload_instance(ctxt, inst)
        else:
            def cast(inst):
                self.compute_rpcapi.shelve_instance(ctxt, inst, image)
        try:
            instance = self._set_task(ctxt, instance, "shelve",
                                      vm_states.ALLOW_SHELVE,
                                      task_states.SHELVING)
            self._cast(ctxt, instance, instance_actions.SHELVE, cast,
                       {"task_state": None})
        except Exception:
            with excutils.save_and_reraise_exception():
                if image is not None:
                    self._delete_image(image["id"])

    def _delete_image(self, image_id):
        try:
            image_store.delete(image_id, self._images_root())
        except image_registry.ImageNotFound:
            pass
        except OSError:
            LOG.exception("Could not delete snapshot image %s", image_id)

    def _snapshot_record(self, ctxt, instance):
        """The snapshot image's record, as nova's ``create_image`` makes
        it: ``<name>-shelved``, owned by the server's project."""
        try:
            base = image_registry.get_image(instance.image_ref,
                                            self._images_root())
        except image_registry.ImageNotFound:
            base = {}
        record = {key: base[key] for key in _INHERITED if key in base}
        record.update({
            "id": str(uuidlib.uuid4()),
            "name": "%s-shelved" % instance.display_name,
            "image_type": image_registry.SNAPSHOT,
            "instance_uuid": instance.uuid, "owner": instance.project_id,
            "user_id": instance.user_id, "visibility": "private",
            "base_image_ref": instance.image_ref,
            "created_at": db.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")})
        return record

    def shelve_offload(self, ctxt, instance):
        """Cast the offload of a SHELVED server."""
        allowed = [vm_states.SHELVED]
        checks.check_instance_state(instance, "shelve_offload",
                                    vm_state=allowed)
        checks.check_host_up(ctxt, instance, self.down_time)
        instance = self._set_task(ctxt, instance, "shelve_offload", allowed,
                                  task_states.SHELVING_OFFLOADING)
        self._cast(ctxt, instance, instance_actions.SHELVE_OFFLOAD,
                   lambda inst: self.compute_rpcapi.shelve_offload_instance(
                       ctxt, inst), {"task_state": None})

    # -- unshelve -

    def unshelve(self, ctxt, instance, availability_zone=UNSET, host=None):
        """Power on a SHELVED server, or schedule and spawn an offloaded
        one (on ``host`` when given: the caller checked the policy).

        :raises UnshelveInstanceInvalidState: a zone or host for a server
            that is not offloaded (409).
        :raises Invalid: unknown zone or host (400).
        """
        allowed = vm_states.ALLOW_UNSHELVE
        checks.check_instance_state(instance, "unshelve", vm_state=allowed)
        offloaded = instance.vm_state == vm_states.SHELVED_OFFLOADED
        if (availability_zone is not UNSET or host) and not offloaded:
            raise UnshelveInstanceInvalidState(
                instance_uuid=instance.uuid, state=instance.vm_state)
        if availability_zone not in (UNSET, None, "nova"):
            raise ms_exception.Invalid(
                message="The requested availability zone is not available")
        if host:
            try:
                scheduler.validate_host_or_node(ctxt, host, None)
            except exception.ComputeHostNotFound as exc:
                raise ms_exception.Invalid(message=exc.format_message()) \
                    from exc
        if not offloaded:
            checks.check_host_up(ctxt, instance, self.down_time)
            instance = self._set_task(ctxt, instance, "unshelve", allowed,
                                      task_states.UNSHELVING)
            self._cast(ctxt, instance, instance_actions.UNSHELVE,
                       lambda inst: self.compute_rpcapi.unshelve_instance(
                           ctxt, inst), {"task_state": None})
            return
        image = self._unshelve_image(ctxt, instance)
        if image is None:
            return
        node = scheduler.select_destination(ctxt, self.down_time, host=host)
        if node is None:
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.UNSHELVE)
            LOG.warning("No valid host found for unshelve of %s (host %s "
                        "asked for)", instance.uuid, host)
            return
        instance = self._set_task(
            ctxt, instance, "unshelve", allowed, task_states.UNSHELVING,
            {"host": node.host, "node": node.hypervisor_hostname})
        self._cast(ctxt, instance, instance_actions.UNSHELVE,
                   lambda inst: self.compute_rpcapi.unshelve_instance(
                       ctxt, inst, image=image),
                   {"task_state": None, "host": None, "node": None})

    def _unshelve_image(self, ctxt, instance):
        """The image an offloaded server boots: its snapshot, or the
        image of its root volume. None (and the server in ERROR, as
        upstream's conductor leaves it) when the snapshot is gone."""
        root = self._root_volume(ctxt, instance)
        if root is not None or not instance.image_ref:
            mapping = {"boot_index": 0, "destination_type": "volume",
                       "source_type": "volume",
                       "uuid": root.volume_id if root else None}
            return self.boot_image(ctxt, instance.image_ref, [mapping])
        snapshots = [s for s in image_registry.snapshots_of(
            instance.uuid, self._images_root())
            if s.get("status", image_store.ACTIVE) == image_store.ACTIVE]
        if snapshots:
            return max(snapshots, key=lambda s: s.get("created_at") or "")
        db_api.action_start(ctxt, instance.uuid, instance_actions.UNSHELVE)
        message = ("Unshelve attempted but the image of shelved instance "
                   "%s cannot be found." % instance.uuid)
        LOG.error(message)
        db_api.instance_update(ctxt, instance.uuid, {
            "vm_state": vm_states.ERROR, "task_state": None,
            "fault": json.dumps({
                "code": 500, "message": message,
                "created": db.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")})})
        return None

    # -- delete -

    def delete_shelved_image(self, ctxt, instance):
        """A shelved server's snapshot goes with it, as upstream."""
        if instance.vm_state not in vm_states.ALLOW_UNSHELVE:
            return
        for snapshot in image_registry.snapshots_of(instance.uuid,
                                                    self._images_root()):
            self._delete_image(snapshot["id"])
