"""A server's user metadata (``instance_metadata``): read, set, delete.

Rows are soft-deleted as every nova row (``deleted`` = the row's id);
a changed value is written in place. Each function runs in one
transaction and answers the server's metadata as it is after it, a
plain ``{key: value}`` dict. The caller has resolved the server (its
project) and checked the quota. Part of ``minicompute.db.api``, which
re-exports every public function here.
"""

from minicompute import exception
from minicompute.db import models
from minicompute.db.session import scope as _scope
from ministack import db


def _live_rows(session, instance_uuid):
    return session.query(models.InstanceMetadata).filter_by(
        instance_uuid=instance_uuid, deleted=0).order_by(
        models.InstanceMetadata.id).all()


def _soft_delete(row, now):
    row.deleted = row.id
    row.deleted_at = now


def instance_metadata_get(ctxt, instance_uuid):
    """The server's metadata, ``{key: value}``."""
    with _scope() as session:
        return {row.key: row.value
                for row in _live_rows(session, instance_uuid)}


def instance_metadata_update(ctxt, instance_uuid, metadata, delete=False):
    """Set the items of ``metadata``; with ``delete`` every other key goes
    (nova's ``instance_metadata_update``: PUT replaces, POST merges).

    :returns: the server's metadata afterwards.
    """
    now = db.utcnow()
    with _scope() as session:
        rows = {row.key: row for row in _live_rows(session, instance_uuid)}
        for key, row in rows.items():
            if key in metadata:
                if row.value != metadata[key]:
                    row.value = metadata[key]
                    row.updated_at = now
            elif delete:
                _soft_delete(row, now)
        for key, value in metadata.items():
            if key not in rows:
                session.add(models.InstanceMetadata(
                    instance_uuid=instance_uuid, key=key, value=value,
                    deleted=0, created_at=now))
        session.flush()
        return {row.key: row.value
                for row in _live_rows(session, instance_uuid)}


def instance_metadata_delete(ctxt, instance_uuid, key):
    """Delete one item.

    :raises MetadataItemNotFound: the server has no such key (404).
    """
    with _scope() as session:
        # Compared here, not in SQL: MariaDB's collation would match
        # "Key" for "key", and both may be set.
        row = next((row for row in _live_rows(session, instance_uuid)
                    if row.key == key), None)
        if row is None:
            raise exception.MetadataItemNotFound()
        _soft_delete(row, db.utcnow())


def instance_metadata_destroy_all(session, instance_uuid, now):
    """Soft-delete every item, in the caller's session (the server's
    delete, ``instance_destroy``)."""
    for row in _live_rows(session, instance_uuid):
        _soft_delete(row, now)
