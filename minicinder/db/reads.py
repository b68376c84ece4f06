"""The hot read: one volume as ``GET /volumes/{id}`` renders it.

``GET /v3/{project_id}/volumes/{id}`` is the call every client polls
(Nova waits on ``status``, the SDK on every wait loop), so it is read with
one prebuilt SQLAlchemy Core select instead of the ORM. Loading a
``Volume`` through the session cost ~2 ms of CPU per request, nearly all
ORM machinery: building the select and its cache key, the identity map,
the joined type and two ``selectin`` relationship loads, each a full ORM
execution. The select here is built once, at import, with bound
parameters, so a request only executes it.

One statement, not four: the volume is outer-joined to its type, its
live metadata, admin metadata and attachments. Each execution through
SQLAlchemy costs ~50 us of Python, and on SQLite each statement outside a
transaction is its own read transaction (file locks, WAL index) and
releases the GIL several times, which with eight busy API threads turns
into thread switches. The price is a product of rows (metadata x
admin metadata x attachments; a volume usually has a few, at most two
and at most one), folded back below.

The result is a :class:`VolumeRecord`: the same attribute names as the
ORM ``Volume`` (columns plus ``volume_type.name``, ``volume_metadata`` and
``volume_attachment``), so ``api/views.py`` renders either one. It is a
detached snapshot, never written back: every state change still goes
through the compare-and-swap updates in ``db/api.py``.

Project scoping is the same as ``db.api.volume_get``: a non-admin sees
only its own project's live volumes, an admin any live volume by id.
"""

import types

import sqlalchemy as sa

from minicinder import exception
from minicinder.db import models

_VOLUMES = models.Volume.__table__
_TYPES = models.VolumeType.__table__
_METADATA = models.VolumeMetadata.__table__
_ADMIN_METADATA = models.VolumeAdminMetadata.__table__
_GLANCE_METADATA = models.VolumeGlanceMetadata.__table__
_ATTACHMENTS = models.VolumeAttachment.__table__

_VOLUME_COLUMNS = tuple(c.key for c in _VOLUMES.c)
# Attachment columns the record carries, and their labels in the join.
_ATTACHMENT_COLUMNS = ("id", "instance_uuid", "attached_host", "mountpoint",
                       "attach_time", "attach_status", "created_at")
_ATTACHMENT_LABELS = tuple("attachment_" + name
                           for name in _ATTACHMENT_COLUMNS)

# The type is outer-joined as the ORM's joined ``volume_type``
# relationship was: a soft-deleted type still names itself.
_VOLUME_BY_ID = (
    sa.select(*_VOLUMES.c,
              _TYPES.c.name.label("volume_type_name"),
              _METADATA.c.id.label("metadata_id"),
              _METADATA.c.key.label("metadata_key"),
              _METADATA.c.value.label("metadata_value"),
              _ADMIN_METADATA.c.id.label("admin_metadata_id"),
              _ADMIN_METADATA.c.key.label("admin_metadata_key"),
              _ADMIN_METADATA.c.value.label("admin_metadata_value"),
              *(_ATTACHMENTS.c[name].label(label) for name, label
                in zip(_ATTACHMENT_COLUMNS, _ATTACHMENT_LABELS,
                       strict=True)))
    .select_from(
        _VOLUMES
        .outerjoin(_TYPES, _TYPES.c.id == _VOLUMES.c.volume_type_id)
        .outerjoin(_METADATA, sa.and_(
            _METADATA.c.volume_id == _VOLUMES.c.id,
            _METADATA.c.deleted.is_(False)))
        .outerjoin(_ADMIN_METADATA, sa.and_(
            _ADMIN_METADATA.c.volume_id == _VOLUMES.c.id,
            _ADMIN_METADATA.c.deleted.is_(False)))
        .outerjoin(_ATTACHMENTS, sa.and_(
            _ATTACHMENTS.c.volume_id == _VOLUMES.c.id,
            _ATTACHMENTS.c.deleted.is_(False))))
    .where(_VOLUMES.c.id == sa.bindparam("volume_id"),
           _VOLUMES.c.deleted.is_(False)))
_VOLUME_BY_ID_IN_PROJECT = _VOLUME_BY_ID.where(
    _VOLUMES.c.project_id == sa.bindparam("project_id"))
# Image metadata, a key per row: a second statement rather than one more
# factor in the join's product of rows.
_GLANCE_BY_VOLUME = (
    sa.select(_GLANCE_METADATA.c.key, _GLANCE_METADATA.c.value)
    .where(_GLANCE_METADATA.c.volume_id == sa.bindparam("volume_id"),
           _GLANCE_METADATA.c.deleted.is_(False))
    .order_by(_GLANCE_METADATA.c.id))


class VolumeRecord(types.SimpleNamespace):
    """A read-only snapshot of one volume, shaped like ``models.Volume``.

    ``volume_type`` is None or an object with ``name``;
    ``volume_metadata`` and ``volume_admin_metadata`` (insertion order)
    and ``volume_attachment`` (live ones, oldest first) are lists of
    objects with the attribute names of ``VolumeMetadata`` (key, value) /
    ``VolumeAttachment`` (the columns in ``_ATTACHMENT_COLUMNS``).
    """


def volume_get(conn, ctx, volume_id):
    """The live volume ``volume_id`` visible to ``ctx``, as a record.

    :param conn: a Core connection (``Database.read_connection()``).
    :raises VolumeNotFound: missing, deleted or another project's.
    """
    if ctx.is_admin:
        rows = conn.execute(_VOLUME_BY_ID, {"volume_id": volume_id}).all()
    else:
        rows = conn.execute(_VOLUME_BY_ID_IN_PROJECT,
                            {"volume_id": volume_id,
                             "project_id": ctx.project_id}).all()
    if not rows:
        raise exception.VolumeNotFound(volume_id=volume_id)
    record = _fold(rows)
    record.volume_glance_metadata = [
        types.SimpleNamespace(key=row.key, value=row.value)
        for row in conn.execute(_GLANCE_BY_VOLUME, {"volume_id": volume_id})]
    return record


def _fold(rows):
    """One record from the joined rows (one per metadata x admin
    metadata x attachment)."""
    first = rows[0]._mapping
    metadata = {}
    admin_metadata = {}
    attachments = {}
    for row in rows:
        if row.metadata_id is not None and row.metadata_id not in metadata:
            metadata[row.metadata_id] = types.SimpleNamespace(
                key=row.metadata_key, value=row.metadata_value)
        if row.admin_metadata_id is not None and \
                row.admin_metadata_id not in admin_metadata:
            admin_metadata[row.admin_metadata_id] = types.SimpleNamespace(
                key=row.admin_metadata_key, value=row.admin_metadata_value)
        if row.attachment_id is not None and \
                row.attachment_id not in attachments:
            mapping = row._mapping
            attachments[row.attachment_id] = types.SimpleNamespace(
                **{name: mapping[label] for name, label
                   in zip(_ATTACHMENT_COLUMNS, _ATTACHMENT_LABELS,
                          strict=True)})
    type_name = first["volume_type_name"]
    return VolumeRecord(
        **{name: first[name] for name in _VOLUME_COLUMNS},
        volume_type=(None if type_name is None
                     else types.SimpleNamespace(name=type_name)),
        volume_metadata=[metadata[key] for key in sorted(metadata)],
        volume_admin_metadata=[admin_metadata[key]
                               for key in sorted(admin_metadata)],
        volume_attachment=sorted(attachments.values(),
                                 key=lambda a: (a.created_at, a.id)))
