"""Queries on ``quotas`` (a project's own limits) and on what a project
uses (counted from its live volumes, so usage never drifts)."""

import sqlalchemy as sa

from minicinder.db import models
from ministack.db import utcnow


def quota_get_all(session, project_id):
    """``{resource: hard_limit}`` set for ``project_id``."""
    rows = session.scalars(sa.select(models.Quota).where(
        models.Quota.project_id == project_id,
        models.Quota.deleted.is_(False)))
    return {row.resource: row.hard_limit for row in rows}


def quota_set(session, project_id, limits):
    """Create or change the project's rows for ``limits``."""
    rows = {row.resource: row for row in session.scalars(
        sa.select(models.Quota).where(models.Quota.project_id == project_id,
                                      models.Quota.deleted.is_(False)))}
    for resource, limit in limits.items():
        row = rows.get(resource)
        if row is None:
            session.add(models.Quota(project_id=project_id,
                                     resource=resource, hard_limit=limit))
        else:
            row.hard_limit = limit
    session.flush()


def quota_destroy_all(session, project_id):
    """Back to the defaults: the project's rows go."""
    session.execute(sa.update(models.Quota)
                    .where(models.Quota.project_id == project_id,
                           models.Quota.deleted.is_(False))
                    .values(deleted=True, deleted_at=utcnow()))


def volume_usage(session, project_id):
    """``(volume count, GiB)`` of the project's live volumes (any
    status: an errored volume still holds its quota until deleted)."""
    count, size = session.execute(
        sa.select(sa.func.count(models.Volume.id),
                  sa.func.coalesce(sa.func.sum(models.Volume.size), 0))
        .where(models.Volume.project_id == project_id,
               models.Volume.deleted.is_(False))).one()
    return int(count), int(size)
