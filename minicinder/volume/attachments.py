"""The attachments API (3.27+/3.44): reserve, connect, complete, delete.

The handshake nova drives, with the state each step writes::

    POST   /attachments            volume available -> reserved,
                                   attachment reserved        (no connector)
    PUT    /attachments/{id}       export + ACL for the initiator;
                                   volume -> attaching, attachment attaching
    POST   .../action os-complete  volume -> in-use, attachment attached
    DELETE /attachments/{id}       revoke the initiator (and the export when
                                   nothing else uses it), soft-delete, then
                                   recompute the volume status

Each state write is a compare-and-swap from ``states``; backend work runs
outside any transaction but under the volume's lock, and is undone when
the database write that should follow it fails.
"""

import logging
import typing
import uuid

from minicinder import exception
from minicinder.db import api as db
from minicinder.db import attachment_reads
from minicinder.db import volume_reads
from minicinder.volume import driver as volume_driver
from minicinder.volume import manager as volume_manager
from minicinder.volume import states
from ministack import db as ms_db

LOG = logging.getLogger(__name__)


def flatten_connection_info(conn_info, attachment_id, connector):
    """What the attachment stores and shows: the driver's ``data`` merged
    with ``driver_volume_type``, plus the attachment id (upstream's
    ``_connection_create``)."""
    flat = dict(conn_info.get("data", {}))
    flat["driver_volume_type"] = conn_info["driver_volume_type"]
    flat["attachment_id"] = attachment_id
    flat["enforce_multipath"] = bool(connector.get("enforce_multipath",
                                                   False))
    return flat


def check_deletion_allowed(ctx, attachments, compute=None):
    """Refuse to tear down an attachment Nova is using, unless Nova asks.

    Upstream's ``attachment_deletion_allowed`` (OSSA-2023-003): a user
    (admins included) who deletes or detaches an attachment behind Nova's
    back leaves the guest's host connection in place, and the LUN may be
    handed to another tenant while the old guest still reads it. So:

    * a service (Nova itself) may always tear down;
    * an attachment without an instance is nobody's guest disk: allowed;
    * otherwise Nova is asked which attachment its server uses for the
      volume; only when it names *this* attachment is the request refused.
      A volume a user attached with legacy ``os-attach`` (no BDM in Nova)
      stays the user's to ``os-detach``, as upstream.

    Asking fails closed: if Nova cannot be reached or answers oddly the
    caller gets 409 :class:`ConflictNovaNotAsked` (upstream lets the error
    through as a 500; either way nothing is torn down).

    Without a Nova (``[nova] endpoint`` empty, or ``compute`` None) the
    older, stricter rule applies: an instance's attachment that is
    ``attaching`` or ``attached`` counts as Nova's.

    :param attachments: VolumeAttachment rows about to be removed.
    :param compute: ``minicinder.compute.nova.API`` or None.
    :raises ConflictNovaUsingAttachment: Nova uses it (409).
    :raises ConflictNovaNotAsked: Nova could not be asked (409).
    """
    if ctx.is_service:
        return
    for attachment in attachments:
        if not attachment.instance_uuid:
            continue
        if compute is None or not compute.configured:
            if attachment.attach_status in states.NOVA_USING:
                raise exception.ConflictNovaUsingAttachment(
                    instance_id=attachment.instance_uuid)
            continue
        try:
            nova_attachment_id = compute.get_server_volume_attachment_id(
                ctx, attachment.instance_uuid, attachment.volume_id)
        except exception.ComputeAPIUnavailable as exc:
            LOG.error("Refusing to remove attachment %s of volume %s: %s",
                      attachment.id, attachment.volume_id,
                      exc.format_message())
            raise exception.ConflictNovaNotAsked(
                instance_id=attachment.instance_uuid,
                attachment_id=attachment.id,
                reason=exc.format_message()) from exc
        if nova_attachment_id == attachment.id:
            LOG.info("Refusing to remove attachment %s: instance %s uses "
                     "it (detach through the Compute API)", attachment.id,
                     attachment.instance_uuid)
            raise exception.ConflictNovaUsingAttachment(
                instance_id=attachment.instance_uuid)


class _VolumeKey(typing.NamedTuple):
    """What ``db.volume_transition`` needs of a volume."""

    id: str
    multiattach: bool


class AttachmentAPI:
    """The attachment handshake on top of the database and the manager."""

    def __init__(self, database, manager, compute=None):
        self.database = database
        self.manager = manager
        self.compute = compute

    def get(self, ctx, attachment_id):
        return self.database.read_rows(attachment_reads.attachment_get,
                                       ctx, attachment_id)

    def get_all(self, ctx, filters, all_tenants=False, limit=None,
                marker=None):
        """``all_tenants`` from a non-admin is ignored, as upstream (its
        own project's attachments are listed)."""
        return self.database.read_rows(attachment_reads.attachment_list,
                                       ctx, filters,
                                       all_tenants and ctx.is_admin,
                                       limit, marker)

    def create(self, ctx, volume_id, instance_uuid=None, connector=None,
               attach_mode=None):
        """Reserve the volume for ``instance_uuid``; connect if a connector
        is given (and undo the reservation if connecting fails).

        :raises VolumeNotFound: (404)
        :raises InvalidVolume: status precondition failed (400).
        """
        with self.database.write() as session:
            volume = volume_reads.volume_state(session, ctx, volume_id,
                                               for_update=True)
            if attach_mode == "rw" and volume_reads.is_readonly(session,
                                                                volume_id):
                raise exception.InvalidVolumeAttachMode(mode=attach_mode,
                                                        volume_id=volume_id)
            if "error" in volume.status:
                raise exception.InvalidVolume(
                    reason="Volume %s status must be available or "
                           "downloading to reserve, but the current status "
                           "is %s." % (volume_id, volume.status))
            if not db.volume_transition(session, volume, "reserve"):
                # LP 1694530: the same instance may re-reserve an attached
                # volume (live migration creates a second attachment).
                same_instance = instance_uuid is not None and \
                    instance_uuid in attachment_reads.attachment_instances(
                        session, volume_id)
                # (attaching too: an unshelve that failed after its
                # update parks the volume again, as upstream's override
                # for the same instance ignores the status.)
                if not (same_instance and volume.status in
                        (states.IN_USE, states.RESERVED,
                         states.ATTACHING)):
                    allowed = states.volume_transition(
                        "reserve", volume.multiattach).expected
                    raise exception.InvalidVolume(
                        reason="Volume %s status must be %s to reserve, but "
                               "the current status is %s."
                               % (volume_id, " or ".join(allowed[:-1]) +
                                  " or " + allowed[-1], volume.status))
            attachment_id = str(uuid.uuid4())
            db.attachment_create(session, {
                "id": attachment_id, "volume_id": volume_id,
                "instance_uuid": instance_uuid,
                "attach_status": states.ATT_RESERVED,
                "attach_mode": attach_mode or "null",
            })
            if connector is None:
                reserved = attachment_reads.attachment_detail(
                    session, attachment_id)
        LOG.info("Reserved volume %s for instance %s (attachment %s)",
                 volume_id, instance_uuid, attachment_id)
        if connector is not None:
            try:
                # As upstream's create, which connects through the volume
                # manager without the API's duplicate-connector check: a
                # live migration's destination creates a second
                # attachment of the same instance on a volume in-use.
                return self.update(ctx, attachment_id, connector,
                                   check_duplicates=False)
            except Exception:
                self._undo_reserve(volume_id, attachment_id)
                raise
        return reserved

    def update(self, ctx, attachment_id, connector, check_duplicates=True):
        """Export the volume to ``connector`` and return the attachment with
        its ``connection_info``.

        :param check_duplicates: refuse a non-multiattach volume another
            attachment connected (upstream's ``attachment_update``); a
            create with a connector does not check.

        Reads: the attachment's volume id (to take its lock),
        then under the lock one select of everything the checks, the mode
        and the export need (:func:`attachment_reads.attachment_for_connect`);
        the write transaction compare-and-swaps both rows and reads back
        the attachment it answers with.

        :raises ResourceConflict: volume in error, duplicate connectors, or
            not in a connectable state (409).
        :raises InvalidConnector: no initiator in the connector (400).
        """
        volume_id = self.database.read_rows(
            attachment_reads.attachment_volume_id, ctx, attachment_id)
        with volume_manager.volume_lock(volume_id):
            found = self.database.read_rows(
                attachment_reads.attachment_for_connect, ctx, attachment_id)
            if found.volume_deleted:
                raise exception.VolumeNotFound(volume_id=volume_id)
            self._check_connectable(found, check_duplicates)
            had_connector = found.connector is not None
            mode = found.attach_mode
            if mode not in ("rw", "ro"):
                # A read-only volume is always connected read-only.
                mode = "ro" if found.readonly else \
                    connector.get("mode") or "rw"
            conn_info = self.manager.connect(
                volume_id, connector,
                ref=volume_driver.VolumeRef(
                    id=volume_id, size=found.size,
                    provider_auth=found.provider_auth,
                    provider_location=found.provider_location))
            conn_info["data"]["access_mode"] = mode
            flat = flatten_connection_info(conn_info, attachment_id,
                                           connector)
            try:
                with self.database.write() as session:
                    won = db.attachment_transition(
                        session, attachment_id, "connect", {
                            "connector": db.dump_json(connector),
                            "attached_host": connector.get("host"),
                            "mountpoint": connector.get("mountpoint", "na"),
                            "attach_time": ms_db.utcnow(),
                            "attach_mode": mode,
                            "connection_info": db.dump_json(flat)})
                    # (The volume cannot have been deleted since the
                    # check: deleting it takes the lock held here.)
                    if not won or not db.volume_transition(
                            session, _VolumeKey(volume_id,
                                                found.multiattach),
                            "connect"):
                        raise exception.ResourceConflict(
                            reason="volume %s or attachment %s changed "
                                   "state during the update"
                                   % (volume_id, attachment_id))
                    connected = attachment_reads.attachment_detail(
                        session, attachment_id)
            except Exception:
                leaving = None if had_connector else attachment_id
                self.manager._safe(self.manager.disconnect, volume_id,
                                   connector, leaving)
                raise
        LOG.info("Attachment %s connected volume %s to %s", attachment_id,
                 volume_id, connector.get("initiator"))
        return connected

    @staticmethod
    def _check_connectable(found, check_duplicates=True):
        """:param found: a :func:`attachment_reads.attachment_for_connect`
        row."""
        if "error" in found.volume_status:
            raise exception.ResourceConflict(
                reason="Volume %s is in %s state and cannot be connected."
                % (found.volume_id, found.volume_status))
        completed_unconnected = found.attach_status == \
            states.ATT_ATTACHED and found.connector is None
        if found.attach_status not in \
                states.ATTACHMENT_TRANSITIONS["connect"].expected or \
                (found.attach_status == states.ATT_ATTACHED and
                 not completed_unconnected):
            raise exception.ResourceConflict(
                reason="Attachment %s is %s; only a reserved or attaching "
                       "attachment can be updated."
                % (found.id, found.attach_status))
        if check_duplicates and not found.multiattach and \
                found.others_connected:
            raise exception.ResourceConflict(
                reason="duplicate connectors detected on volume %s"
                % found.volume_id)
        step = states.volume_transition("connect", found.multiattach)
        if found.volume_status not in step.expected:
            raise exception.ResourceConflict(
                reason="Volume %s status must be %s to connect, but it is "
                       "%s." % (found.volume_id, " or ".join(step.expected),
                                found.volume_status))

    def complete(self, ctx, attachment_id):
        """attaching -> attached; volume -> in-use.

        :raises InvalidVolumeAttachment: the attachment was never connected.
        """
        with self.database.write() as session:
            found = attachment_reads.attachment_for_complete(
                session, ctx, attachment_id)
            if found.volume_deleted:
                raise exception.VolumeNotFound(volume_id=found.volume_id)
            # A reserved attachment is completed only for an instance and
            # without a connector: nova's attach to a shelved-offloaded
            # server (the volume in-use, exported nowhere).
            unconnected = found.attach_status == states.ATT_RESERVED and \
                found.instance_uuid and found.connector is None
            if (found.attach_status == states.ATT_RESERVED and
                    not unconnected) or not db.attachment_transition(
                        session, attachment_id, "complete"):
                raise exception.InvalidVolumeAttachment(
                    reason="attachment %s is %s; only a connected "
                           "(attaching) attachment, or an instance's "
                           "reserved one without a connector, can be "
                           "completed."
                           % (attachment_id, found.attach_status))
            if not db.volume_transition(
                    session, _VolumeKey(found.volume_id, found.multiattach),
                    "complete"):
                raise exception.InvalidVolume(
                    reason="Volume %s is %s and cannot be marked in-use."
                    % (found.volume_id, found.volume_status))
        LOG.info("Attachment %s complete; volume %s in-use", attachment_id,
                 found.volume_id)

    def delete(self, ctx, attachment_id):
        """Disconnect and remove the attachment (only a service may remove
        one Nova is using: :func:`check_deletion_allowed`).

        The initiator is revoked *before* the row goes, so a failure leaves
        the attachment in place for a retry rather than an orphan ACL.

        :returns: the volume's remaining attachments (rows with what
            ``views.attachment_summary`` shows).
        """
        volume_id = self.database.read_rows(
            attachment_reads.attachment_volume_id, ctx, attachment_id)
        with volume_manager.volume_lock(volume_id):
            attachment = self.database.read_rows(
                attachment_reads.attachment_for_delete, ctx, attachment_id)
            check_deletion_allowed(ctx, [attachment], self.compute)
            connector = db.load_json(attachment.connector)
            if connector:
                self.manager.disconnect(volume_id, connector, attachment_id)
            with self.database.write() as session:
                status, remaining = db.volume_detached_remaining(
                    session, volume_id, attachment_id)
        LOG.info("Attachment %s deleted; volume %s is %s", attachment_id,
                 volume_id, status)
        return remaining

    def _undo_reserve(self, volume_id, attachment_id):
        with self.database.write() as session:
            db.volume_detached(session, volume_id, attachment_id)
