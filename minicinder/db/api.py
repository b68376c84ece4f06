"""Queries on the cinder database.

Every function takes an open SQLAlchemy session (the caller owns the
transaction through ``ministack.db.session_scope``) and, where a user is
involved, the request context, so project scoping is applied in one place:
a project only ever sees its own volumes and attachments, an admin may
read any by id and lists everything only with ``all_tenants``.

State changes go through :func:`volume_transition` /
:func:`attachment_transition`: one ``UPDATE ... WHERE status IN (...)``
whose row count tells whether this request won. Nothing here is
SQLite-specific; ``with_for_update`` is a no-op on SQLite (whose writers
are serialised anyway) and a row lock on MariaDB/PostgreSQL.
"""

import functools
import json

import sqlalchemy as sa

from minicinder import exception
from minicinder.db import handshake
from minicinder.db import models
from minicinder.db import services
from minicinder.volume import states
from ministack.db import utcnow

# --- volumes ---


def _volumes(ctx):
    query = sa.select(models.Volume).where(models.Volume.deleted.is_(False))
    if not ctx.is_admin:
        query = query.where(models.Volume.project_id == ctx.project_id)
    return query


def volume_get(session, ctx, volume_id, for_update=False):
    """The live volume ``volume_id`` visible to ``ctx``.

    :raises VolumeNotFound: missing, deleted or another project's.
    """
    query = _volumes(ctx).where(models.Volume.id == volume_id)
    if for_update:
        # Lock the volume row only: the type is joined in (lazy="joined",
        # a LEFT OUTER JOIN) and PostgreSQL refuses a plain FOR UPDATE on
        # the nullable side of an outer join. ``of`` renders FOR UPDATE OF
        # volumes there; MariaDB has no OF (SQLAlchemy omits it, locking
        # the scanned rows as before) and SQLite ignores FOR UPDATE.
        query = query.with_for_update(of=models.Volume)
    volume = session.scalars(query).unique().first()
    if volume is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return volume


def volume_get_all(session, ctx, filters, all_tenants=False, **page):
    """Volumes matching ``filters`` (name, status, project_id, bootable,
    availability_zone, metadata: a dict every pair of which the volume's
    metadata has), as ORM objects; ``page``: limit, marker, sort_key,
    sort_dir (:func:`volume_list_select`)."""
    return list(session.scalars(volume_list_select(
        session, ctx, filters, all_tenants, **page)).unique())


def volume_list_select(session, ctx, filters, all_tenants=False, limit=None,
                       marker=None, sort_key="created_at", sort_dir="desc"):
    """The select of :func:`volume_get_all` (``db/reads.py`` runs it
    with only the columns the views print).

    :raises InvalidInput: ``marker`` is not a volume listed.
    """
    query = sa.select(models.Volume).where(models.Volume.deleted.is_(False))
    if not (ctx.is_admin and all_tenants):
        query = query.where(models.Volume.project_id == ctx.project_id)
    if "project_id" in filters:
        query = query.where(models.Volume.project_id == filters["project_id"])
    if "name" in filters:
        query = query.where(models.Volume.display_name == filters["name"])
    if "status" in filters:
        query = query.where(models.Volume.status == filters["status"])
    if "bootable" in filters:
        query = query.where(models.Volume.bootable.is_(filters["bootable"]))
    if "availability_zone" in filters:
        query = query.where(models.Volume.availability_zone
                            == filters["availability_zone"])
    for key, value in (filters.get("metadata") or {}).items():
        query = query.where(models.Volume.id.in_(
            sa.select(models.VolumeMetadata.volume_id).where(
                models.VolumeMetadata.key == key,
                models.VolumeMetadata.value == value,
                models.VolumeMetadata.deleted.is_(False))))
    column = getattr(models.Volume, sort_key)
    order = column.desc() if sort_dir == "desc" else column.asc()
    tiebreak = (models.Volume.id.desc() if sort_dir == "desc"
                else models.Volume.id.asc())
    query = query.order_by(order, tiebreak)
    if marker:
        ref = session.scalars(_volumes(ctx).where(
            models.Volume.id == marker)).unique().first()
        if ref is None:
            raise exception.InvalidInput(
                reason="marker [%s] not found" % marker)
        value = getattr(ref, sort_key)
        after = (sa.or_(column < value,
                        sa.and_(column == value, models.Volume.id < ref.id))
                 if sort_dir == "desc" else
                 sa.or_(column > value,
                        sa.and_(column == value, models.Volume.id > ref.id)))
        query = query.where(after)
    if limit is not None:
        query = query.limit(limit)
    return query


def volume_create(session, values, metadata=None):
    volume = models.Volume(**values)
    session.add(volume)
    for key, value in (metadata or {}).items():
        session.add(models.VolumeMetadata(volume_id=values["id"], key=key,
                                          value=value))
    session.flush()
    return volume


def volume_glance_metadata_create(session, volume_id, metadata):
    for key, value in metadata.items():
        session.add(models.VolumeGlanceMetadata(volume_id=volume_id,
                                                key=key, value=value))
    session.flush()


def _updatable(session, model):
    """What to build an UPDATE of ``model`` on: ``(target, columns)``.

    When the session holds objects, loaded or pending, the mapped class,
    as these updates always were: the ORM flushes the pending ones first
    and brings the loaded ones in step with the new values. When it
    holds none (the attachment handshake's transactions read with
    ``db/handshake.py``'s Core selects) there is nothing to flush or
    bring in step, and the table: the same SQL as a Core UPDATE,
    without the ORM's bulk-update machinery (~0.6 ms of CPU per
    statement, eight statements per handshake; issue 16).
    """
    if session.identity_map or session.new:
        return model, model
    return model.__table__, model.__table__.c


@functools.lru_cache(maxsize=128)
def _cas_statement(table, set_columns, checked, live=True):
    """The compare-and-swap UPDATE of one row of ``table`` (a live one
    only, if ``live``), built once per shape: ``b_id`` the row,
    ``b_in_<column>`` (expanding) the values each ``checked`` column may
    have, ``v_<column>`` the new values. Building the statement anew for
    every transition (its clauses, bind parameters and cache key) cost
    more CPU than running it: a handshake makes six (issue 16)."""
    where = [table.c.id == sa.bindparam("b_id")]
    if live:
        where.append(table.c.deleted.is_(False))
    return (table.update()
            .where(*where,
                   *[table.c[column].in_(sa.bindparam(
                       "b_in_" + column, expanding=True))
                     for column in checked])
            .values({column: sa.bindparam("v_" + column)
                     for column in set_columns}))


def _cas(session, table, row_id, values, expected, live=True):
    """Run :func:`_cas_statement` on the session's connection (its
    transaction, without the ORM's execute path): True when exactly one
    row changed. ``expected``: ``{column: allowed values}``."""
    columns = tuple(sorted(values))
    checked = tuple(sorted(expected))
    params = {"b_id": row_id}
    params.update(("v_" + c, values[c]) for c in columns)
    params.update(("b_in_" + c, list(expected[c])) for c in checked)
    return session.connection().execute(
        _cas_statement(table, columns, checked, live), params).rowcount == 1


def volume_update(session, volume_id, values):
    """Unconditional update of a live volume (name, description, the
    export's provider_location...)."""
    target, volumes = _updatable(session, models.Volume)
    if target is models.Volume.__table__:
        _cas(session, target, volume_id, dict(values, updated_at=utcnow()),
             {}, live=False)
        return
    session.execute(sa.update(target)
                    .where(volumes.id == volume_id)
                    .values(updated_at=utcnow(), **values))


def volume_conditional_update(session, volume_id, values, expected_status,
                              expected_attach=None, extra=()):
    """Compare-and-swap: apply ``values`` only if the status is expected.

    :returns: True when this caller won (exactly one row changed).
    """
    target, volumes = _updatable(session, models.Volume)
    if target is models.Volume.__table__ and not extra:
        expected = {"status": expected_status}
        if expected_attach is not None:
            expected["attach_status"] = expected_attach
        return _cas(session, target, volume_id,
                    dict(values, updated_at=utcnow()), expected)
    stmt = (sa.update(target)
            .where(volumes.id == volume_id,
                   volumes.deleted.is_(False),
                   volumes.status.in_(expected_status), *extra)
            .values(updated_at=utcnow(), **values))
    if expected_attach is not None:
        stmt = stmt.where(volumes.attach_status.in_(expected_attach))
    return session.execute(stmt).rowcount == 1


def volume_transition(session, volume, action, values=None):
    """Apply the state-table ``action`` to ``volume`` as a CAS.

    :param volume: anything with the volume's ``id`` and ``multiattach``
        (a model, or a row of ``db/handshake.volume_state``).

    :returns: True when the transition happened.
    """
    step = states.volume_transition(action, volume.multiattach)
    new = {"status": step.target}
    if step.attach_status:
        new["attach_status"] = step.attach_status
    new.update(values or {})
    return volume_conditional_update(session, volume.id, new, step.expected,
                                     step.expected_attach)


def volume_soft_delete(session, volume_id):
    now = utcnow()
    for model in (models.VolumeMetadata, models.VolumeAdminMetadata,
                  models.VolumeGlanceMetadata):
        session.execute(sa.update(model)
                        .where(model.volume_id == volume_id)
                        .values(deleted=True, deleted_at=now))
    session.execute(sa.update(models.VolumeAttachment)
                    .where(models.VolumeAttachment.volume_id == volume_id,
                           models.VolumeAttachment.deleted.is_(False))
                    .values(deleted=True, deleted_at=now,
                            attach_status=states.ATT_DETACHED,
                            detach_time=now))
    session.execute(sa.update(models.Volume)
                    .where(models.Volume.id == volume_id)
                    .values(deleted=True, deleted_at=now, terminated_at=now,
                            status=states.DELETED, provider_location=None))


def volumes_rehost(session, old_host, new_host):
    """Move live volumes recorded at ``old_host`` to ``new_host``
    (upstream's ``cinder-manage volume update_host``). :returns: how many."""
    return session.execute(
        sa.update(models.Volume)
        .where(models.Volume.host == old_host,
               models.Volume.deleted.is_(False))
        .values(host=new_host)).rowcount


def volumes_for_host(session, host):
    """Live volumes this host's backends own (for start-up recovery):
    ``host@backend#pool``, or plain ``host`` as older rows recorded it."""
    return list(session.scalars(
        sa.select(models.Volume).where(
            models.Volume.deleted.is_(False),
            services.host_matches(models.Volume.host, host))).unique())


def volume_get_all_including_deleted(session):
    """Every volume row, soft-deleted ones too, unscoped, oldest first.

    For ``ministack-audit`` only (an LV or target of a deleted volume is
    cleaned up; one of a volume never heard of is left to a person); the
    REST API never shows deleted volumes.
    """
    return list(session.scalars(
        sa.select(models.Volume).order_by(models.Volume.created_at,
                                          models.Volume.id)).unique())


# --- attachments ---


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
    ``db/handshake.attachment_detail``."""
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
    ``db/handshake.attachment_summaries`` rows (what DELETE
    /attachments/{id} answers with), read once for both."""
    _lock_and_soft_delete(session, volume_id, attachment_id)
    remaining = handshake.attachment_summaries(session, volume_id)
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


def dump_json(value):
    return None if value is None else json.dumps(value)


def load_json(text, default=None):
    return default if not text else json.loads(text)
