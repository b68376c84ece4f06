"""Attachments: scoped reads, the compare-and-swap of an attachment's
attach_status, and a detach's soft delete with the volume's status
recomputed from the attachments left.

A project only ever sees the attachments of its own volumes; an admin
lists everything only with ``all_tenants``. Part of
``minicinder.db.api``, which re-exports every public function here.
"""

import sqlalchemy as sa

from minicinder import exception
from minicinder.db import attachment_reads
from minicinder.db import models
from minicinder.db.cas import cas as _cas
from minicinder.db.cas import updatable as _updatable
from minicinder.db.volumes import volume_update
from minicinder.volume import states
from ministack.db import utcnow


def _attachments(ctx):
    query = (sa.select(models.VolumeAttachment)
             .join(models.Volume,
                   models.Volume.id == models.VolumeAttachment.volume_id)
             .where(models.VolumeAttachment.deleted.is_(False)))
    if not ctx.is_admin:
        query = query.where(models.Volume.project_id == ctx.project_id)
    return query


def attachment_get(session, ctx, attachment_id):
    """:raises VolumeAttachmentNotFound: missing, deleted or not ctx's."""
    attachment = session.scalars(_attachments(ctx).where(
        models.VolumeAttachment.id == attachment_id)).unique().first()
    if attachment is None:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    return attachment


def attachment_get_all(session, ctx, filters, all_tenants=False, limit=None,
                       marker=None):
    """Attachments filtered by volume_id, instance_id, attach_status..."""
    query = (sa.select(models.VolumeAttachment)
             .join(models.Volume,
                   models.Volume.id == models.VolumeAttachment.volume_id)
             .where(models.VolumeAttachment.deleted.is_(False)))
    if not (ctx.is_admin and all_tenants):
        query = query.where(models.Volume.project_id == ctx.project_id)
    if "project_id" in filters:
        query = query.where(models.Volume.project_id == filters["project_id"])
    if "volume_id" in filters:
        query = query.where(
            models.VolumeAttachment.volume_id == filters["volume_id"])
    if "instance_id" in filters:
        query = query.where(
            models.VolumeAttachment.instance_uuid == filters["instance_id"])
    if "attach_status" in filters:
        query = query.where(models.VolumeAttachment.attach_status
                            == filters["attach_status"])
    query = query.order_by(models.VolumeAttachment.created_at.desc(),
                           models.VolumeAttachment.id.desc())
    if marker:
        ref = session.scalars(_attachments(ctx).where(
            models.VolumeAttachment.id == marker)).unique().first()
        if ref is None:
            raise exception.InvalidInput(
                reason="marker [%s] not found" % marker)
        query = query.where(sa.or_(
            models.VolumeAttachment.created_at < ref.created_at,
            sa.and_(models.VolumeAttachment.created_at == ref.created_at,
                    models.VolumeAttachment.id < ref.id)))
    if limit is not None:
        query = query.limit(limit)
    return list(session.scalars(query).unique())


def attachment_volume_id(session, attachment_id):
    """The volume a live attachment belongs to, or None, whoever's it is.

    Only for pairing checks (an attachment id sent along with another
    volume's id is refused); never shown to the caller.
    """
    return session.scalars(
        sa.select(models.VolumeAttachment.volume_id)
        .where(models.VolumeAttachment.id == attachment_id,
               models.VolumeAttachment.deleted.is_(False))).first()


def attachments_for_volume(session, volume_id):
    """Every live attachment of a volume, oldest first (no scoping)."""
    return list(session.scalars(
        sa.select(models.VolumeAttachment)
        .where(models.VolumeAttachment.volume_id == volume_id,
               models.VolumeAttachment.deleted.is_(False))
        .order_by(models.VolumeAttachment.created_at)).unique())


def attachment_create(session, values):
    """Insert an attachment (a Core insert: no ORM object to flush; the
    columns' defaults apply as they did). Read it back with
    ``db/attachment_reads.attachment_detail``."""
    session.execute(sa.insert(models.VolumeAttachment.__table__)
                    .values(**values))


def attachment_transition(session, attachment_id, action, values=None):
    """CAS on an attachment's attach_status per the state table."""
    step = states.ATTACHMENT_TRANSITIONS[action]
    new = {"attach_status": step.target, "updated_at": utcnow()}
    new.update(values or {})
    target, attachments = _updatable(session, models.VolumeAttachment)
    if target is models.VolumeAttachment.__table__:
        return _cas(session, target, attachment_id, new,
                    {"attach_status": step.expected})
    stmt = (sa.update(target)
            .where(attachments.id == attachment_id,
                   attachments.deleted.is_(False),
                   attachments.attach_status.in_(step.expected))
            .values(**new))
    return session.execute(stmt).rowcount == 1


def attachment_update(session, attachment_id, values):
    session.execute(sa.update(models.VolumeAttachment)
                    .where(models.VolumeAttachment.id == attachment_id)
                    .values(updated_at=utcnow(), **values))


def volume_detached(session, volume_id, attachment_id):
    """Soft-delete one attachment and recompute the volume's status.

    Runs in the caller's transaction with the volume row locked, so two
    concurrent detaches of a multiattach volume both see the other's
    result. :returns: the volume's new status.
    """
    _lock_and_soft_delete(session, volume_id, attachment_id)
    return volume_recompute_status(session, volume_id)


def _lock_and_soft_delete(session, volume_id, attachment_id):
    _, volumes = _updatable(session, models.Volume)
    session.execute(sa.select(volumes.id)
                    .where(volumes.id == volume_id).with_for_update())
    if attachment_id is not None:
        now = utcnow()
        # The volume is part of the match: an attachment id paired with
        # another volume's id removes nothing (the API refuses the pair
        # first; this keeps a missed check from reaching another volume).
        target, attachments = _updatable(session, models.VolumeAttachment)
        session.execute(
            sa.update(target)
            .where(attachments.id == attachment_id,
                   attachments.volume_id == volume_id,
                   attachments.deleted.is_(False))
            .values(deleted=True, deleted_at=now, detach_time=now,
                    attach_status=states.ATT_DETACHED))


def volume_detached_remaining(session, volume_id, attachment_id):
    """:func:`volume_detached`, returning ``(status, remaining)``: the
    volume's live attachments afterwards as
    ``db/attachment_reads.attachment_summaries`` rows (what DELETE
    /attachments/{id} answers with), read once for both."""
    _lock_and_soft_delete(session, volume_id, attachment_id)
    remaining = attachment_reads.attachment_summaries(session, volume_id)
    return _set_status_from(session, volume_id,
                            [row.attach_status for row in remaining]), \
        remaining


def volume_recompute_status(session, volume_id):
    """Derive status/attach_status from the remaining attachments.

    Upstream leaves the status alone while a migration is running or the
    volume is uploading; neither exists here.
    """
    remaining = session.scalars(
        sa.select(models.VolumeAttachment.attach_status)
        .where(models.VolumeAttachment.volume_id == volume_id,
               models.VolumeAttachment.deleted.is_(False))).all()
    return _set_status_from(session, volume_id, remaining)


def _set_status_from(session, volume_id, attach_statuses):
    status, attach_status = states.statuses_from_attachments(
        attach_statuses)
    volume_update(session, volume_id, {"status": status,
                                       "attach_status": attach_status})
    return status
