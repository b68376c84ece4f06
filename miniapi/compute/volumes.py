"""The API phase of volume attach and detach (nova's compute/api.py).

Attach (nova's ``compute/api.py`` attach_volume and the seed journey)::

    check state -> GET volume -> not already attached -> compute host up
      -> CALL reserve_block_device_name   (compute creates the BDM)
      -> attachment_create, no connector (volume: available -> reserved)
      -> save bdm.attachment_id -> action attach_volume
      -> CAST attach_volume               (compute does the handshake)

Everything before the cast is undone on failure: the BDM is destroyed and
the Cinder attachment deleted, so no reservation lingers (upstream leaves
the attachment behind on that path; the reference lists it as a bug).

Detach::

    check state -> GET volume -> BDM exists (else 404) -> host up
      -> begin_detaching (volume: in-use -> detaching)
      -> action detach_volume -> CAST detach_volume(attachment_id)

If the cast fails the volume is rolled back to in-use.
"""

import logging

import oslo_messaging as messaging
from oslo_utils import excutils

from miniapi.compute import checks
from minicompute import exception
from minicompute import instance_actions
from minicompute import vm_states
from minicompute.db import api as db_api
from ministack import exception as ms_exception
from ministack.microversion import APIVersion

LOG = logging.getLogger(__name__)

# Upstream's MultiattachNotSupportedOldMicroversion threshold.
MULTIATTACH_MIN_VERSION = APIVersion("2.60")

_ATTACH_DETACH_STATES = vm_states.ALLOW_VOLUME_ATTACH_DETACH

# The attachment fields a PUT (2.85+) may repeat but not change.
_IMMUTABLE = ("device", "tag", "serverId", "id")


class VolumeOperations:
    """Attach, detach and update volume attachments of one instance.

    Mixed into :class:`miniapi.compute.api.API`, which provides
    ``self.volume_api`` (minicompute.volume.cinder.API),
    ``self.compute_rpcapi`` (minicompute.rpcapi.ComputeAPI) and
    ``self.down_time``.
    """

    # -- attach ----------------------------------------------------------

    @checks.guard("attach_volume", vm_state=_ATTACH_DETACH_STATES)
    def attach_volume(self, ctxt, instance, volume_id, device=None,
                      tag=None, delete_on_termination=False,
                      version=MULTIATTACH_MIN_VERSION):
        """Reserve a device and the volume, then cast the attach.

        :returns: the BDM as a dict (device_name chosen by the compute
            host).
        :raises InvalidDevicePath: malformed ``device`` (400).
        :raises VolumeNotFound: no such volume visible to the caller (404).
        :raises InvalidVolume: already attached here, or elsewhere and not
            multiattach, or Cinder refused the reservation (400).
        :raises ComputeServiceUnavailable: the instance's host is down or
            did not answer (409).
        """
        checks.check_device(device)
        volume = self.volume_api.get(ctxt, volume_id)
        multiattach = bool(volume.get("multiattach"))
        if multiattach and version < MULTIATTACH_MIN_VERSION:
            raise ms_exception.Invalid(
                message="Multiattach volumes are only supported starting "
                        "with compute API version 2.60.")
        self._check_volume_already_attached(ctxt, instance, volume)
        self.check_shelved_volume_version(instance, "attach_volume", version)
        if instance.vm_state == vm_states.SHELVED_OFFLOADED:
            return self.attach_volume_offloaded(
                ctxt, instance, volume, tag=tag,
                delete_on_termination=delete_on_termination)
        checks.check_host_up(ctxt, instance, self.down_time)
        instance_p = db_api.to_dict(instance)
        try:
            bdm = self.compute_rpcapi.reserve_block_device_name(
                ctxt, instance_p, device, volume_id, tag=tag,
                multiattach=multiattach)
        except messaging.MessagingTimeout:
            # The host may still create the BDM after we gave up on it;
            # one created now would never be attached, so remove it.
            self._destroy_orphan_bdm(ctxt, instance.uuid, volume_id)
            raise exception.ComputeServiceUnavailable(
                host=instance.host) from None
        bdm_id = bdm["id"]
        attachment_id = None
        try:
            attachment_id = self._reserve_volume(ctxt, volume_id,
                                                 instance.uuid)
            values = {"attachment_id": attachment_id}
            if delete_on_termination:
                values["delete_on_termination"] = True
            # The host's answer is the whole row; add what is written.
            bdm = dict(bdm, **db_api.bdm_update(ctxt, bdm_id, values,
                                                reload=False))
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.ATTACH_VOLUME)
            self.compute_rpcapi.attach_volume(ctxt, instance_p, bdm,
                                              multiattach=multiattach)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._undo_reserve(ctxt, bdm_id, attachment_id)
        return bdm

    def _reserve_volume(self, ctxt, volume_id, instance_uuid):
        """attachment_create with no connector; returns the attachment id."""
        try:
            attachment = self.volume_api.attachment_create(
                ctxt, volume_id, instance_uuid)
        except ms_exception.InvalidInput as exc:
            raise exception.InvalidVolume(
                reason=exc.format_message()) from exc
        return attachment["id"]

    def _undo_reserve(self, ctxt, bdm_id, attachment_id):
        """Roll back the API phase: no BDM and no reservation survive."""
        try:
            db_api.bdm_destroy(ctxt, bdm_id)
        except Exception:
            LOG.exception("Could not destroy BDM %s during rollback", bdm_id)
        if attachment_id:
            try:
                self.volume_api.attachment_delete(ctxt, attachment_id)
            except exception.VolumeAttachmentNotFound:
                pass
            except Exception:
                LOG.exception("Could not delete attachment %s during "
                              "rollback; the volume may stay reserved",
                              attachment_id)

    def _destroy_orphan_bdm(self, ctxt, instance_uuid, volume_id):
        try:
            bdm = db_api.bdm_get_by_volume_and_instance(ctxt, volume_id,
                                                        instance_uuid)
        except exception.VolumeBDMNotFound:
            return
        if not bdm.attachment_id:
            db_api.bdm_destroy(ctxt, bdm.id)

    def _check_volume_already_attached(self, ctxt, instance, volume):
        """400 for a second attach (nova's _check_volume_already_attached).

        The same volume twice on one instance is refused even for a
        multiattach volume; a non-multiattach volume with any BDM is
        refused outright. Cinder's reservation is the final arbiter for
        races between two API workers.
        """
        attached_to = db_api.bdm_instances_of_volume(ctxt.elevated(),
                                                     volume["id"])
        if instance.uuid in attached_to:
            raise exception.InvalidVolume(
                reason="volume %s already attached" % volume["id"])
        if attached_to and not volume.get("multiattach"):
            raise exception.InvalidVolume(
                reason="volume %s is already attached to another instance"
                       % volume["id"])

    # -- detach ----------------------------------------------------------

    @checks.guard("detach_volume", vm_state=_ATTACH_DETACH_STATES)
    def detach_volume(self, ctxt, instance, volume_id):
        """Mark the volume detaching and cast the detach to the host.

        :raises VolumeNotFound: no such volume (404).
        :raises VolumeBDMNotFound: not attached to this instance (404).
        :raises InvalidVolume: root volume, or Cinder refuses to begin
            detaching (not in-use, e.g. still attaching) (400).
        :raises ComputeServiceUnavailable: the host is down (409).
        """
        volume = self.volume_api.get(ctxt, volume_id)
        bdm = db_api.bdm_get_by_volume_and_instance(ctxt, volume_id,
                                                    instance.uuid)
        if bdm.boot_index == 0:
            raise exception.InvalidVolume(
                reason="Cannot detach a root device volume")
        if instance.vm_state == vm_states.SHELVED_OFFLOADED:
            return self.detach_volume_offloaded(ctxt, instance, bdm)
        checks.check_host_up(ctxt, instance, self.down_time)
        try:
            self.volume_api.begin_detaching(ctxt, volume_id)
        except ms_exception.InvalidInput as exc:
            raise exception.InvalidVolume(
                reason=exc.format_message()) from exc
        attachment_id = bdm.attachment_id
        if not attachment_id:
            # A legacy-flow BDM: the attachment is known to Cinder only.
            att = volume.get("attachments", {}).get(instance.uuid)
            attachment_id = att["attachment_id"] if att else None
        try:
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.DETACH_VOLUME)
            self.compute_rpcapi.detach_volume(
                ctxt, db_api.to_dict(instance), volume_id=volume_id,
                attachment_id=attachment_id)
        except Exception:
            with excutils.save_and_reraise_exception():
                try:
                    self.volume_api.roll_detaching(ctxt, volume_id)
                except Exception:
                    LOG.exception("Could not roll back detaching of %s",
                                  volume_id)

    # -- update (PUT) ----------------------------------------------------

    def update_volume_attachment(self, ctxt, instance, volume_id, body,
                                 version):
        """PUT os-volume_attachments/{volume_id}.

        Below 2.85 a PUT is swap-volume; from 2.85 a PUT naming the same
        volume updates ``delete_on_termination`` and must repeat every
        other field unchanged.

        :returns: the updated BDM row.
        """
        new_volume_id = body["volumeId"]
        if version < "2.85" or new_volume_id != volume_id:
            return self._swap_volume(ctxt, instance, volume_id,
                                     new_volume_id)
        bdm = db_api.bdm_get_by_volume_and_instance(ctxt, volume_id,
                                                    instance.uuid)
        current = {"device": bdm.device_name, "tag": bdm.tag,
                   "serverId": instance.uuid, "id": volume_id}
        for key in _IMMUTABLE:
            if key in body and body[key] != current[key]:
                raise ms_exception.Invalid(
                    message="The %s property is not mutable" % key)
        if "delete_on_termination" in body:
            bdm = db_api.bdm_update(ctxt, bdm.id, {
                "delete_on_termination": body["delete_on_termination"]})
        return bdm

    def _swap_volume(self, ctxt, instance, old_volume_id, new_volume_id):
        """Swap is Cinder's migration tool: service role only (403), and
        only for a migrating volume (409). ministack never migrates
        volumes, so a permitted caller always gets the 409 upstream gives
        for a volume that is not migrating.

        Upstream's rule (``service_api``: ``role:service``) reads the
        roles of the token: a user with the service role may call it, as
        may a request whose service token carries it (``is_service``).
        """
        if not (ctxt.is_service or "service" in (ctxt.roles or [])):
            raise ms_exception.Forbidden(
                action="os_compute_api:os-volumes-attachments:swap")
        old = self.volume_api.get(ctxt, old_volume_id)
        db_api.bdm_get_by_volume_and_instance(ctxt, old_volume_id,
                                              instance.uuid)
        try:
            self.volume_api.get(ctxt, new_volume_id)
        except exception.VolumeNotFound as exc:
            raise ms_exception.Invalid(message=exc.format_message()) \
                from exc
        raise ms_exception.Conflict(
            reason="volume %s is not migrating; this API should only be "
                   "called by Cinder" % old["id"])
