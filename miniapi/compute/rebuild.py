"""The API phase of a server rebuild (nova's ``compute.api.API.rebuild``).

The server keeps its id, flavor, host and volumes, and its guest is
respawned from an image: the one asked for (an image-backed server
records it as its image), or, for a volume-backed server, the image its
root volume was made from, written over that volume again by Cinder
(``os-reimage``) when the request is at 2.93 or later.

The checks are upstream's, in its order: the server is not locked
(409), ACTIVE, SHUTOFF or ERROR with no task in flight (409), its host
is up (409); the image exists (400 "Cannot find image for rebuild"); a
volume-backed server below 2.93 keeps its image (a different one is a
400); every volume of the server is ``in-use`` (400). Then the task
state ``rebuilding`` is set with a compare-and-swap (a concurrent
operation gets 409), the action ``rebuild`` recorded and the rebuild
cast to the host (:mod:`minicompute.rebuild`); if the cast fails the
server is as it was.
"""

import json

from oslo_log import log as logging
from oslo_utils import excutils

from miniapi.compute import checks
from miniapi.compute import images
from minicompute import exception
from minicompute import instance_actions
from minicompute import task_states
from minicompute import vm_states
from minicompute.db import api as db_api
from ministack import exception as ms_exception

LOG = logging.getLogger(__name__)


def root_volume(bdms):
    """The volume BDM the server boots from, or None (image-backed)."""
    for bdm in bdms:
        if bdm.boot_index == 0 and bdm.destination_type == "volume" and \
                bdm.volume_id:
            return bdm
    return None


class RebuildOperations:
    """Server rebuild; mixed into :class:`miniapi.compute.api.API`
    (``self.volume_api``, ``self.compute_rpcapi``, ``self.down_time``,
    ``self.image_dir``)."""

    def rebuild(self, ctxt, instance, image_ref, reimage_boot_volume=False,
                values=None, metadata=None, trusted_certs=None):
        """Check, set ``rebuilding``, record ``rebuild`` and cast.

        :param image_ref: the image id the server is rebuilt with.
        :param reimage_boot_volume: 2.93+: a volume-backed server's root
            volume is re-imaged (any image); below, it is re-attached
            as it is (only its own image is accepted).
        :param values: what the request changes of the instance row
            (``display_name``, ``display_description``, ``hostname``,
            ``access_ip_v4``, ``access_ip_v6``).
        :param metadata: the request's ``metadata``: it replaces the
            server's (None: kept).
        :param trusted_certs: the request's
            ``trusted_image_certificates`` (2.63).
        :returns: the updated instance row.
        :raises InstanceIsLocked, InstanceInvalidState,
            ComputeServiceUnavailable: (409).
        :raises Invalid, InvalidVolume: (400).
        """
        if instance.locked and not ctxt.is_admin:
            raise exception.InstanceIsLocked(instance_uuid=instance.uuid)
        _task, allowed, _final = task_states.TRANSITIONS["rebuild"]
        checks.check_instance_state(instance, "rebuild", vm_state=allowed,
                                    task_state=[None])
        checks.check_host_up(ctxt, instance, self.down_time)
        try:
            image = images.find_image(ctxt, image_ref, self.image_dir)
        except exception.ImageNotFound:
            raise ms_exception.Invalid(
                message="Cannot find image for rebuild") from None
        images.check_active(image)
        bdms = [b for b in db_api.bdm_get_all_by_instance(ctxt,
                                                          instance.uuid)
                if b.volume_id and b.destination_type == "volume"]
        root = root_volume(bdms)
        if root is not None:
            self._check_volume_backed(ctxt, root, image, reimage_boot_volume,
                                      trusted_certs)
        self._check_volumes_in_use(ctxt, bdms)
        return self._begin_rebuild(ctxt, instance, image, root is not None,
                                   reimage_boot_volume, values or {},
                                   metadata)

    def _check_volume_backed(self, ctxt, root, image, reimage_boot_volume,
                             trusted_certs):
        if trusted_certs:
            raise ms_exception.Invalid(
                message="Image certificate validation is not supported "
                        "for volume-backed instances.")
        volume = self.volume_api.get(ctxt, root.volume_id)
        orig_image = (volume.get("volume_image_metadata") or {}).get(
            "image_id")
        if image["id"] != orig_image and not reimage_boot_volume:
            raise ms_exception.Invalid(
                message="Image %s is unacceptable: Unable to rebuild with a "
                        "different image for a volume-backed server."
                        % image["id"])

    def _check_volumes_in_use(self, ctxt, bdms):
        """nova's ``_check_volume_status``: 400 InvalidVolume otherwise."""
        for bdm in bdms:
            volume = self.volume_api.get(ctxt, bdm.volume_id)
            self.volume_api.check_attached(ctxt, volume)

    def _begin_rebuild(self, ctxt, instance, image, volume_backed,
                       reimage_boot_volume, values, metadata):
        before = {key: getattr(instance, key) for key in
                  ("display_name", "display_description", "hostname",
                   "image_ref", "access_ip_v4", "access_ip_v6")}
        metadata_before = db_api.instance_metadata_get(ctxt, instance.uuid)
        update = dict(values, task_state=task_states.REBUILDING)
        if not volume_backed:
            # A volume-backed server keeps image "" (upstream).
            update["image_ref"] = image["id"]
        try:
            updated = db_api.instance_update(
                ctxt, instance.uuid, update, expected_task_state=[None],
                expected_vm_state=vm_states.ALLOW_REBUILD)
        except (exception.UnexpectedTaskStateError,
                exception.UnexpectedVMStateError):
            current = db_api.instance_get(ctxt, instance.uuid)
            checks.check_instance_state(current, "rebuild",
                                        vm_state=vm_states.ALLOW_REBUILD,
                                        task_state=[None])
            raise
        try:
            if metadata is not None:
                db_api.instance_metadata_update(ctxt, instance.uuid,
                                                metadata, delete=True)
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.REBUILD)
            self.compute_rpcapi.rebuild_instance(
                ctxt, db_api.to_dict(updated), image=image,
                flavor=json.loads(instance.flavor or "{}"),
                reimage_boot_volume=bool(reimage_boot_volume and
                                         volume_backed))
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.error("Rebuild of %s could not be sent to its host",
                          instance.uuid)
                db_api.instance_update(
                    ctxt, instance.uuid, dict(before, task_state=None),
                    expected_task_state=[task_states.REBUILDING])
                db_api.instance_metadata_update(ctxt, instance.uuid,
                                                metadata_before, delete=True)
        return updated
