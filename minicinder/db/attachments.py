"""Attachment writes: the insert, the compare-and-swap of an
attachment's attach_status, and a detach's soft delete with the volume's
status recomputed from the attachments left. Attachments are read in
``attachment_reads.py``. Part of ``minicinder.db.api``, which re-exports
every public function here.
"""

import sqlalchemy as sa

from minicinder.db import attachment_reads
from minicinder.db import models
from minicinder.db.cas import cas as _cas
from minicinder.db.cas import updatable as _updatable
from minicinder.db.volumes import volume_update
from minicinder.volume import states
from ministack.db import utcnow


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
    return _set_status_from(
        session, volume_id,
        attachment_reads.attach_statuses(session, volume_id))


def _set_status_from(session, volume_id, attach_statuses):
    status, attach_status = states.statuses_from_attachments(
        attach_statuses)
    volume_update(session, volume_id, {"status": status,
                                       "attach_status": attach_status})
    return status
