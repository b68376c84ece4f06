"""Legacy volume actions (``POST /volumes/{id}/action``).

The pre-3.27 attach flow nova still falls back to when a BDM has no
attachment id::

    os-reserve -> os-initialize_connection -> os-attach        (attach)
    os-begin_detaching -> os-terminate_connection -> os-detach (detach)

plus the admin-only os-force_detach and os-reset_status. Preconditions and
codes follow cinder's ``volume/api.py``; each state change is one
compare-and-swap from the ``states`` table.
"""

import logging
import uuid

from minicinder import exception
from minicinder.db import api as db
from minicinder.db import attachment_reads
from minicinder.db import volume_reads
from minicinder.volume import api as volume_api
from minicinder.volume import attachments as attachment_api
from minicinder.volume import manager as volume_manager
from minicinder.volume import metadata as volume_metadata
from minicinder.volume import states
from ministack import db as ms_db

LOG = logging.getLogger(__name__)


def check_pairing(session, volume_id, attachments, attachment_id):
    """Refuse an attachment id that belongs to another volume.

    Upstream's ``attachment_deletion_allowed`` check: a detach names the
    volume in the URL and the attachment in the body, and the two must go
    together, or a caller could remove another volume's attachment (of
    any project) through a volume of its own.

    :param attachments: the volume's live attachments.
    :raises InvalidInput: "Mismatched volume and attachment" (400).
    """
    if any(a.id == attachment_id for a in attachments):
        return
    owner = attachment_reads.attachment_owner(session, attachment_id)
    if owner is not None and owner != volume_id:
        LOG.info("Refused: attachment %s is not volume %s's",
                 attachment_id, volume_id)
        raise exception.InvalidInput(
            reason="Mismatched volume and attachment")


class VolumeActions:
    """The legacy attach/detach verbs on top of the database and manager."""

    def __init__(self, database, manager, compute=None):
        self.database = database
        self.manager = manager
        # Nova, asked before a user tears down an instance's attachment.
        self.compute = compute

    def reserve(self, ctx, volume_id):
        """available (or in-use if multiattach) -> attaching."""
        with self.database.write() as session:
            volume = volume_reads.volume_state(session, ctx, volume_id)
            if not db.volume_transition(session, volume, "os-reserve"):
                expected = " or ".join(states.volume_transition(
                    "os-reserve", volume.multiattach).expected)
                raise exception.InvalidVolume(
                    reason="Volume status must be %s to reserve, but the "
                           "status is %s." % (expected, volume.status))

    def unreserve(self, ctx, volume_id):
        """attaching -> in-use if attachments exist, else available;
        silently nothing in any other status (upstream)."""
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id)
            if volume.status != states.ATTACHING:
                return
            target = (states.IN_USE if volume.volume_attachment
                      else states.AVAILABLE)
            db.volume_conditional_update(session, volume_id,
                                         {"status": target},
                                         (states.ATTACHING,))

    def initialize_connection(self, ctx, volume_id, connector):
        """Export the volume to ``connector`` (no state change).

        :returns: ``{"driver_volume_type": ..., "data": {...}}``.
        """
        with self.database.read() as session:
            volume = volume_reads.volume_state(session, ctx, volume_id)
            readonly = volume_reads.is_readonly(session, volume_id)
        if volume.status == states.MAINTENANCE:
            raise exception.InvalidVolume(
                reason="Volume %s is in maintenance." % volume_id)
        if volume.status in (states.CREATING, states.DELETING) or \
                "error" in volume.status:
            raise exception.InvalidVolume(
                reason="Volume %s is %s." % (volume_id, volume.status))
        with volume_manager.volume_lock(volume_id):
            conn_info = self.manager.connect(volume_id, connector)
        conn_info["data"].setdefault("access_mode",
                                     "ro" if readonly else "rw")
        # As the attachment API's connection_info: whether the host asked
        # os-brick to insist on multipath.
        conn_info["data"]["enforce_multipath"] = bool(
            connector.get("enforce_multipath", False))
        return conn_info

    def terminate_connection(self, ctx, volume_id, connector):
        """Revoke ``connector``'s initiator, then unreserve (upstream).

        :raises ConflictNovaUsingAttachment: a user revoking the initiator
            of an instance's live attachment, or sending a connector
            without an initiator while an instance uses the volume
            (OSSA-2023-003).
        """
        with self.database.read() as session:
            volume_reads.volume_state(session, ctx, volume_id)
            live = attachment_reads.attachments_for_detach(session,
                                                           volume_id)
        # A connector without an initiator names no host: it concerns
        # every attachment, as upstream checks them all.
        initiator = (connector or {}).get("initiator")
        attachment_api.check_deletion_allowed(ctx, [
            a for a in live
            if initiator is None or (db.load_json(a.connector) or {}).get(
                "initiator", initiator) == initiator], self.compute)
        with volume_manager.volume_lock(volume_id):
            self.manager.disconnect(volume_id, connector)
        self.unreserve(ctx, volume_id)

    def attach(self, ctx, volume_id, mountpoint, instance_uuid=None,
               host_name=None, mode="rw"):
        """Record a finished legacy attach: volume in-use, attachment
        attached. Re-attaching the same instance just returns."""
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id)
            if volume.status == states.MAINTENANCE:
                raise exception.InvalidVolume(
                    reason="Volume %s is in maintenance." % volume_id)
            if mode != "ro" and volume_metadata.is_readonly(volume):
                raise exception.InvalidVolumeAttachMode(mode=mode,
                                                        volume_id=volume_id)
            for attachment in volume.volume_attachment:
                if instance_uuid and attachment.instance_uuid == \
                        instance_uuid and attachment.attach_status == \
                        states.ATT_ATTACHED:
                    return
            if volume.status == states.IN_USE and not volume.multiattach:
                raise exception.InvalidVolume(
                    reason="Volume %s is already attached and is not "
                           "multiattach." % volume_id)
            if not db.volume_transition(session, volume, "os-attach"):
                raise exception.InvalidVolume(
                    reason="Volume %s status must be available, reserved or "
                           "attaching to attach, but it is %s."
                           % (volume_id, volume.status))
            db.attachment_create(session, {
                "id": str(uuid.uuid4()), "volume_id": volume_id,
                "instance_uuid": instance_uuid, "attached_host": host_name,
                "mountpoint": mountpoint, "attach_mode": mode,
                "attach_status": states.ATT_ATTACHED,
                "attach_time": ms_db.utcnow()})

    def detach(self, ctx, volume_id, attachment_id=None):
        """Remove one attachment (the only one when no id is given) and
        the export once nothing uses it; recompute the status.

        :raises InvalidInput: ``attachment_id`` is another volume's
            (upstream's "Mismatched volume and attachment", 400). An id
            that matches no live attachment detaches nothing, as upstream.
        """
        with self.database.read() as session:
            volume_reads.volume_state(session, ctx, volume_id)
            live = attachment_reads.attachments_for_detach(session,
                                                           volume_id)
            if attachment_id is None:
                if len(live) > 1:
                    raise exception.InvalidVolume(
                        reason="Volume %s is attached to more than one "
                               "instance; an attachment_id is required."
                               % volume_id)
                attachment_id = live[0].id if live else None
            else:
                check_pairing(session, volume_id, live, attachment_id)
            found = [a for a in live if a.id == attachment_id]
            attachment_api.check_deletion_allowed(ctx, found,
                                                  self.compute)
            connector = db.load_json(found[0].connector) if found else None
        self._disconnect_and_detach(volume_id, attachment_id, connector)

    def begin_detaching(self, ctx, volume_id):
        """in-use (attach_status attached) -> detaching, else 400."""
        with self.database.write() as session:
            volume = volume_reads.volume_state(session, ctx, volume_id)
            if not db.volume_transition(session, volume,
                                        "os-begin_detaching"):
                raise exception.InvalidVolume(
                    reason="Unable to detach volume. Volume status must be "
                           "'in-use' and attach_status must be 'attached' "
                           "to detach.")

    def roll_detaching(self, ctx, volume_id):
        """detaching -> in-use; a no-op in any other status."""
        with self.database.write() as session:
            volume = volume_reads.volume_state(session, ctx, volume_id)
            db.volume_transition(session, volume, "os-roll_detaching")

    # --- admin actions ---

    def force_detach(self, ctx, volume_id, attachment_id=None,
                     connector=None):
        """Admin: drop an attachment whatever its state, revoking access
        (not one Nova is using, unless the admin is Nova: OSSA-2023-003).

        :raises InvalidInput: ``attachment_id`` is another volume's (400).
        :raises VolumeAttachmentNotFound: no live attachment has it (404).
        """
        volume_api.require_admin(ctx, "volume_extension:volume_admin_actions"
                                      ":force_detach")
        with self.database.read() as session:
            volume_reads.volume_state(session, ctx, volume_id)
            found = attachment_reads.attachments_for_detach(session,
                                                            volume_id)
            if attachment_id is not None:
                check_pairing(session, volume_id, found, attachment_id)
                found = [a for a in found if a.id == attachment_id]
                if not found:
                    raise exception.VolumeAttachmentNotFound(
                        attachment_id=attachment_id)
            attachment_api.check_deletion_allowed(ctx, found,
                                                  self.compute)
            if attachment_id is not None:
                connector = connector or db.load_json(found[0].connector)
        self._disconnect_and_detach(volume_id, attachment_id, connector)

    def reset_status(self, ctx, volume_id, status=None, attach_status=None,
                     migration_status=None):
        """Admin: overwrite the status fields. Setting attach_status
        ``detached`` removes every attachment (and its access) first."""
        volume_api.require_admin(ctx, "volume_extension:volume_admin_actions"
                                      ":reset_status")
        if status is not None and status not in states.VOLUME_STATUSES:
            raise exception.InvalidInput(
                reason="Invalid status %s" % status)
        if attach_status is not None and attach_status not in (
                states.ATT_ATTACHED, states.ATT_DETACHED):
            raise exception.InvalidInput(
                reason="Invalid attach_status %s" % attach_status)
        with self.database.read() as session:
            volume_reads.volume_state(session, ctx, volume_id)
            attachments = [(a.id, db.load_json(a.connector)) for a in
                           attachment_reads.attachments_for_detach(
                               session, volume_id)]
        if status == states.IN_USE and (
                not attachments or attach_status == states.ATT_DETACHED):
            raise exception.InvalidVolume(
                reason="Cannot reset status to in-use for volume %s "
                       "without attachments." % volume_id)
        if attach_status == states.ATT_DETACHED:
            for attachment_id, connector in attachments:
                self._disconnect_and_detach(volume_id, attachment_id,
                                            connector)
        values = {k: v for k, v in (("status", status),
                                    ("attach_status", attach_status),
                                    ("migration_status", migration_status))
                  if v is not None}
        with self.database.write() as session:
            db.volume_update(session, volume_id, values)
        LOG.warning("Admin reset volume %s to %s", volume_id, values)

    # --- helpers ---

    def _disconnect_and_detach(self, volume_id, attachment_id, connector):
        with volume_manager.volume_lock(volume_id):
            self.manager.disconnect(volume_id, connector, attachment_id)
            with self.database.write() as session:
                db.volume_detached(session, volume_id, attachment_id)
