"""Migration records: one row per move of a server (``migrations``).

A resize, a cold or live migration each write one row when the move is
accepted and update its ``status`` as the move goes on (nova's
``objects.Migration``); the API lists them (``os-migrations``) and shows
a server's running live migrations (``/servers/{id}/migrations``).
Rows cross RPC and the API as plain dicts (:func:`to_dict`). Part of
``minicompute.db.api``, which re-exports every public function here.
"""

from oslo_utils import uuidutils

from minicompute import exception
from minicompute.db import models
from minicompute.db.rows import to_dict
from minicompute.db.session import scope as _scope
from ministack import db

# The states of a move still under way, by kind (nova's
# ``MigrationList.get_in_progress_by_instance`` and its live-migration
# subset for ``/servers/{id}/migrations``).
LIVE_IN_PROGRESS = ("queued", "preparing", "running", "post-migrating")
IN_PROGRESS = LIVE_IN_PROGRESS + (
    "accepted", "pre-migrating", "migrating", "finished", "confirming",
    "reverting")

_FILTERS = ("instance_uuid", "status", "source_compute", "dest_compute",
            "migration_type", "project_id", "user_id")


def migration_create(ctxt, values):
    """Record a new move; ``uuid``, the caller's user and project and
    ``hidden`` are filled in unless given.

    :returns: the new row, as a dict.
    """
    row = {"uuid": uuidutils.generate_uuid(), "user_id": ctxt.user_id,
           "project_id": ctxt.project_id, "hidden": False,
           "cross_cell_move": False}
    row.update(values)
    with _scope() as session:
        migration = models.Migration(**row)
        session.add(migration)
        session.flush()
        return to_dict(migration)


def _row(session, migration_id):
    migration = session.query(models.Migration).filter_by(
        id=migration_id, deleted=0).first()
    if migration is None:
        raise exception.MigrationNotFound(migration_id=migration_id)
    return migration


def migration_get(ctxt, migration_id):
    """:raises MigrationNotFound:"""
    with _scope() as session:
        return to_dict(_row(session, migration_id))


def migration_update(ctxt, migration_id, values):
    """Change a move's columns (its status, destination, progress).

    :returns: the row afterwards, as a dict.
    :raises MigrationNotFound:
    """
    with _scope() as session:
        migration = _row(session, migration_id)
        for name, value in values.items():
            setattr(migration, name, value)
        migration.updated_at = db.utcnow()
        session.flush()
        return to_dict(migration)


def migration_get_all(ctxt, filters=None):
    """Moves, newest first (``created_at`` then ``id``, descending).

    ``filters`` may hold any of ``instance_uuid``, ``status``,
    ``source_compute``, ``dest_compute``, ``migration_type``,
    ``project_id``, ``user_id`` (equality), ``host`` (source or
    destination) and ``hidden`` (default: hidden moves are left out).
    """
    filters = dict(filters or {})
    with _scope() as session:
        query = session.query(models.Migration).filter_by(deleted=0)
        for name in _FILTERS:
            if filters.get(name) is not None:
                query = query.filter(
                    getattr(models.Migration, name) == filters[name])
        if filters.get("host"):
            query = query.filter(
                (models.Migration.source_compute == filters["host"])
                | (models.Migration.dest_compute == filters["host"]))
        if not filters.get("hidden"):
            query = query.filter(models.Migration.hidden.isnot(True))
        query = query.order_by(models.Migration.created_at.desc(),
                               models.Migration.id.desc())
        return [to_dict(m) for m in query.all()]


def migration_get_in_progress_by_instance(ctxt, instance_uuid,
                                          migration_type=None):
    """The instance's moves still under way (live migrations: queued,
    preparing, running, post-migrating only, as nova shows them)."""
    states = (LIVE_IN_PROGRESS if migration_type == "live-migration"
              else IN_PROGRESS)
    return [m for m in migration_get_all(
                ctxt, {"instance_uuid": instance_uuid,
                       "migration_type": migration_type})
            if m["status"] in states]


def migration_get_by_instance_and_status(ctxt, instance_uuid, status):
    """The instance's newest move in ``status``.

    :raises MigrationNotFoundByStatus:
    """
    found = migration_get_all(ctxt, {"instance_uuid": instance_uuid,
                                     "status": status})
    if not found:
        raise exception.MigrationNotFoundByStatus(instance_id=instance_uuid,
                                                  status=status)
    return found[0]
