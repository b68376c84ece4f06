"""Attach and detach a volume while the server is SHELVED_OFFLOADED
(nova's ``_attach_volume_shelved_offloaded`` and
``_detach_volume_shelved_offloaded``).

The server has no host, so no compute RPC is made: the API writes the
BDM (no device name, no boot index), reserves the volume
(``attachment_create`` with no connector) and completes that attachment
at once, without a connector, so the volume is ``in-use`` and exported
nowhere; the unshelve names the device, connects and completes it on
the host it lands on. Any failure removes the BDM and the attachment.
A detach deletes the attachment, the volume too when
``delete_on_termination`` is set, and the BDM.

Both need microversion 2.20 (409 below, as for a SHELVED server).
"""

import logging

from oslo_utils import excutils

from minicompute import exception
from minicompute import instance_actions
from minicompute import vm_states
from minicompute.db import api as db_api
from ministack import exception as ms_exception
from ministack.microversion import APIVersion

LOG = logging.getLogger(__name__)

#: 2.20: attach and detach while SHELVED or SHELVED_OFFLOADED.
SHELVED_VOLUMES_VERSION = APIVersion("2.20")

_SHELVED = (vm_states.SHELVED, vm_states.SHELVED_OFFLOADED)


class ShelvedVolumeOperations:
    """Mixed into :class:`miniapi.compute.api.API` (``volume_api``)."""

    @staticmethod
    def check_shelved_volume_version(instance, method, version):
        """409 for a shelved server below 2.20."""
        if instance.vm_state in _SHELVED and \
                version < SHELVED_VOLUMES_VERSION:
            raise exception.InstanceInvalidState(
                attr="vm_state", instance_uuid=instance.uuid,
                state=instance.vm_state, method=method)

    def attach_volume_offloaded(self, ctxt, instance, volume, tag=None,
                                delete_on_termination=False):
        """Reserve and complete the volume for the hostless server.

        :returns: the BDM as a dict (``device_name`` None).
        :raises Invalid: a tag, or a multiattach volume (400).
        :raises InvalidVolume: Cinder refused the reservation (400).
        """
        if tag:
            raise ms_exception.Invalid(
                message="Tagged volume attachment is not supported for "
                        "shelved-offloaded instances.")
        if volume.get("multiattach"):
            raise ms_exception.Invalid(
                message="Attaching multiattach volumes is not supported "
                        "for shelved-offloaded instances.")
        bdm = db_api.bdm_create(ctxt, {
            "instance_uuid": instance.uuid, "volume_id": volume["id"],
            "source_type": "volume", "destination_type": "volume",
            "device_name": None, "boot_index": None, "device_type": "disk",
            "delete_on_termination": bool(delete_on_termination)})
        attachment_id = None
        try:
            attachment_id = self._reserve_volume(ctxt, volume["id"],
                                                 instance.uuid)
            values = db_api.bdm_update(ctxt, bdm.id,
                                       {"attachment_id": attachment_id},
                                       reload=False)
            db_api.action_start(ctxt, instance.uuid,
                                instance_actions.ATTACH_VOLUME)
            self.volume_api.attachment_complete(ctxt, attachment_id)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._undo_reserve(ctxt, bdm.id, attachment_id)
        LOG.info("Volume %s attached to shelved-offloaded server %s "
                 "(attachment %s, no connector)", volume["id"],
                 instance.uuid, attachment_id)
        return dict(db_api.to_dict(bdm), **values)

    def detach_volume_offloaded(self, ctxt, instance, bdm):
        """Delete the attachment (and the volume when
        delete_on_termination), then the BDM."""
        db_api.action_start(ctxt, instance.uuid,
                            instance_actions.DETACH_VOLUME)
        if bdm.attachment_id:
            try:
                self.volume_api.attachment_delete(ctxt, bdm.attachment_id)
            except exception.VolumeAttachmentNotFound:
                pass
        else:
            self.volume_api.detach(ctxt, bdm.volume_id,
                                   instance_uuid=instance.uuid)
        self._delete_on_termination(ctxt, bdm)
        db_api.bdm_destroy(ctxt, bdm.id)
        LOG.info("Volume %s detached from shelved-offloaded server %s",
                 bdm.volume_id, instance.uuid)
