"""Volumes: scoped reads, the list select, and the updates (plain and
compare-and-swap) of a volume row.

A project only ever sees its own volumes; an admin may read any by id
and lists everything only with ``all_tenants``. ``with_for_update`` is a
no-op on SQLite (whose writers are serialised anyway) and a row lock on
MariaDB/PostgreSQL. Part of ``minicinder.db.api``, which re-exports
every public function here.
"""

import operator

import sqlalchemy as sa

from minicinder import exception
from minicinder.db import models
from minicinder.db import services
from minicinder.db.cas import cas as _cas
from minicinder.db.cas import updatable as _updatable
from minicinder.volume import states
from ministack.db import utcnow


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


# 3.60's time comparisons (``created_at=gte:2026-01-01T00:00:00``).
_TIME_OPS = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt,
             "lte": operator.le, "eq": operator.eq, "neq": operator.ne}


def volume_list_select(session, ctx, filters, all_tenants=False, limit=None,
                       marker=None, sort_key="created_at", sort_dir="desc"):
    """The select of a ``/volumes`` page (``db/volume_reads.py`` runs it
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
    if "consumes_quota" in filters:
        query = query.where(models.Volume.use_quota.is_(
            filters["consumes_quota"]))
    for key in ("created_at", "updated_at"):
        for op, when in (filters.get(key) or {}).items():
            query = query.where(_TIME_OPS[op](getattr(models.Volume, key),
                                              when))
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
        (a model, or a row of ``db/volume_reads.volume_state``).

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
