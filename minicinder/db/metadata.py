"""Queries on a volume's user metadata, admin metadata and image
(glance) metadata.

The tables hold key/value rows soft-deleted as cinder's are; a key is
live at most once per volume (every writer goes through these functions,
inside the caller's transaction with the volume known to exist).
"""

import sqlalchemy as sa

from minicinder.db import models
from ministack.db import utcnow


def _get(session, model, volume_id):
    rows = session.scalars(
        sa.select(model).where(model.volume_id == volume_id,
                               model.deleted.is_(False))
        .order_by(model.id))
    return {row.key: row.value for row in rows}


def _update(session, model, volume_id, metadata, delete):
    """Set ``metadata``'s keys; with ``delete`` also drop every other
    key (a replace). :returns: the metadata afterwards."""
    now = utcnow()
    live = {row.key: row for row in session.scalars(
        sa.select(model).where(model.volume_id == volume_id,
                               model.deleted.is_(False)))}
    if delete:
        for key, row in live.items():
            if key not in metadata:
                row.deleted = True
                row.deleted_at = now
    for key, value in metadata.items():
        row = live.get(key)
        if row is None:
            session.add(model(volume_id=volume_id, key=key, value=value))
        elif row.value != value:
            row.value = value
    session.flush()
    return _get(session, model, volume_id)


def _delete(session, model, volume_id, key):
    """:returns: False when the key was not there."""
    return session.execute(
        sa.update(model)
        .where(model.volume_id == volume_id, model.key == key,
               model.deleted.is_(False))
        .values(deleted=True, deleted_at=utcnow())).rowcount > 0


def metadata_get(session, volume_id):
    return _get(session, models.VolumeMetadata, volume_id)


def metadata_update(session, volume_id, metadata, delete=False):
    return _update(session, models.VolumeMetadata, volume_id, metadata,
                   delete)


def metadata_delete(session, volume_id, key):
    return _delete(session, models.VolumeMetadata, volume_id, key)


def admin_metadata_get(session, volume_id):
    return _get(session, models.VolumeAdminMetadata, volume_id)


def admin_metadata_update(session, volume_id, metadata):
    return _update(session, models.VolumeAdminMetadata, volume_id,
                   metadata, delete=False)


def admin_metadata_delete(session, volume_id, key):
    return _delete(session, models.VolumeAdminMetadata, volume_id, key)



def image_metadata_get(session, volume_id):
    return _get(session, models.VolumeGlanceMetadata, volume_id)


def image_metadata_update(session, volume_id, metadata):
    return _update(session, models.VolumeGlanceMetadata, volume_id,
                   metadata, delete=False)


def image_metadata_replace(session, volume_id, metadata):
    """Exactly ``metadata`` (a re-imaged volume's new image's)."""
    return _update(session, models.VolumeGlanceMetadata, volume_id,
                   metadata, delete=True)


def image_metadata_delete(session, volume_id, key):
    return _delete(session, models.VolumeGlanceMetadata, volume_id, key)
