"""Queries on ``transfers`` (volume transfer offers)."""

import sqlalchemy as sa

from minicinder import exception
from minicinder.db import models
from ministack.db import utcnow


def _live(project_id=None):
    """Open offers, of ``project_id``'s volumes (None: every project's)."""
    query = (sa.select(models.Transfer)
             .join(models.Volume,
                   models.Volume.id == models.Transfer.volume_id)
             .where(models.Transfer.deleted.is_(False)))
    if project_id is not None:
        query = query.where(models.Volume.project_id == project_id)
    return query


def transfer_get(session, ctx, transfer_id, any_project=False):
    """An offer of the caller's project (any project's for an admin).

    :param any_project: find it whoever's it is (accepting needs the
        id and the key, not the volume's project).
    :raises TransferNotFound:"""
    scope = None if any_project or ctx.is_admin else ctx.project_id
    transfer = session.scalars(_live(scope).where(
        models.Transfer.id == transfer_id)).first()
    if transfer is None:
        raise exception.TransferNotFound(transfer_id=transfer_id)
    return transfer


def transfer_get_all(session, ctx, all_tenants=False):
    """The caller's project's offers, every project's for an admin who
    asks ``all_tenants``."""
    scope = None if ctx.is_admin and all_tenants else ctx.project_id
    return list(session.scalars(_live(scope).order_by(
        models.Transfer.created_at, models.Transfer.id)))


def transfer_create(session, values):
    transfer = models.Transfer(**values)
    session.add(transfer)
    session.flush()
    return transfer


def transfer_destroy(session, transfer_id, values=None):
    session.execute(sa.update(models.Transfer)
                    .where(models.Transfer.id == transfer_id)
                    .values(deleted=True, deleted_at=utcnow(),
                            **(values or {})))
