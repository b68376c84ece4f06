"""The hot reads: one volume as ``GET /volumes/{id}`` renders it, and the
volumes of a ``GET /volumes[/detail]`` page (:func:`volume_list`).

``GET /v3/{project_id}/volumes/{id}`` is the call every client polls
(Nova waits on ``status``, the SDK on every wait loop), so it is read with
one prebuilt SQLAlchemy Core select instead of the ORM. Loading a
``Volume`` through the session cost several times the statement's CPU,
nearly all ORM machinery: building the select and its cache key, the
identity map, the joined type and two ``selectin`` relationship loads,
each a full ORM execution. The select here is built once, at import, with bound
parameters, so a request only executes it.

One statement, not four: the volume is outer-joined to its type, its
live metadata, admin metadata and attachments, and says whether it has
image metadata (read by a second statement only then). Each execution through
SQLAlchemy costs its Python, and on SQLite each statement outside a
transaction is its own read transaction (file locks, WAL index) and
releases the GIL several times, which with eight busy API threads turns
into thread switches. The price is a product of rows (metadata x
admin metadata x attachments; a volume usually has a few, at most two
and at most one), folded back below.

On MariaDB the statements run on ``Database.read_connection()``'s
autocommit connections (no pre-ping, no ROLLBACK on return: two round
trips per GET instead of four) and name only the columns the views print
(``SHOWN_COLUMNS``): PyMySQL parses every column descriptor of every
result in Python.

The result is a :class:`VolumeRecord`: the ORM ``Volume``'s attribute
names for the ``SHOWN_COLUMNS``, plus ``volume_type.name``,
``volume_metadata``, ``volume_admin_metadata``,
``volume_glance_metadata`` and ``volume_attachment``, so ``api/views.py``
renders either one (a column the views do not print is not there: an
AttributeError, never a stale value). It is a detached snapshot, never
written back: every state change still goes through the compare-and-swap
updates in ``db/api.py``.

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

# What ``api/views.volume_detail`` and ``volume_summary`` read of a
# volume: PyMySQL parses each column's descriptor in Python on every
# execution, so the select names these, not all of ``volumes``'.
SHOWN_COLUMNS = (
    "id", "status", "size", "availability_zone", "created_at",
    "updated_at", "display_name", "display_description", "snapshot_id",
    "source_volid", "project_id", "user_id", "bootable",
    "encryption_key_id", "replication_status", "consistencygroup_id",
    "multiattach", "migration_status", "host", "group_id", "provider_id",
    "shared_targets", "service_uuid", "cluster_name", "volume_type_id",
    "use_quota")
# Attachment columns the record carries, and their labels in the join.
_ATTACHMENT_COLUMNS = ("id", "instance_uuid", "attached_host", "mountpoint",
                       "attach_time", "attach_status", "created_at")
_ATTACHMENT_LABELS = tuple("attachment_" + name
                           for name in _ATTACHMENT_COLUMNS)

# The type is outer-joined as the ORM's joined ``volume_type``
# relationship was: a soft-deleted type still names itself.
# Whether the volume has image metadata: the second statement below runs
# only then (most volumes have none; on MariaDB a statement is a round
# trip).
_HAS_GLANCE_METADATA = sa.exists().where(
    _GLANCE_METADATA.c.volume_id == _VOLUMES.c.id,
    _GLANCE_METADATA.c.deleted.is_(False)).label("has_glance_metadata")
_VOLUME_BY_ID = (
    sa.select(*(_VOLUMES.c[name] for name in SHOWN_COLUMNS),
              _HAS_GLANCE_METADATA,
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
# Image metadata, a key per row: a second statement (when there is any)
# rather than one more factor in the join's product of rows.
_GLANCE_BY_VOLUME = (
    sa.select(_GLANCE_METADATA.c.key, _GLANCE_METADATA.c.value)
    .where(_GLANCE_METADATA.c.volume_id == sa.bindparam("volume_id"),
           _GLANCE_METADATA.c.deleted.is_(False))
    .order_by(_GLANCE_METADATA.c.id))


class VolumeRecord(types.SimpleNamespace):
    """A read-only snapshot of one volume, shaped like ``models.Volume``
    for the ``SHOWN_COLUMNS``.

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
        for row in conn.execute(_GLANCE_BY_VOLUME, {"volume_id": volume_id})
    ] if rows[0].has_glance_metadata else []
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
        **{name: first[name] for name in SHOWN_COLUMNS},
        volume_type=(None if type_name is None
                     else types.SimpleNamespace(name=type_name)),
        volume_metadata=[metadata[key] for key in sorted(metadata)],
        volume_admin_metadata=[admin_metadata[key]
                               for key in sorted(admin_metadata)],
        volume_attachment=sorted(attachments.values(),
                                 key=lambda a: (a.created_at, a.id)))


# --- lists (GET /volumes/detail) ---

_IDS = sa.bindparam("ids", expanding=True)
_LIST_CHILDREN = {
    attribute: sa.select(table.c.volume_id, table.c.id, table.c.key,
                         table.c.value)
    .where(table.c.volume_id.in_(_IDS), table.c.deleted.is_(False))
    .order_by(table.c.id)
    for attribute, table in (("volume_metadata", _METADATA),
                             ("volume_admin_metadata", _ADMIN_METADATA),
                             ("volume_glance_metadata", _GLANCE_METADATA))}
_LIST_ATTACHMENTS = (
    sa.select(_ATTACHMENTS.c.volume_id,
              *(_ATTACHMENTS.c[name] for name in _ATTACHMENT_COLUMNS))
    .where(_ATTACHMENTS.c.volume_id.in_(_IDS),
           _ATTACHMENTS.c.deleted.is_(False)))


def volume_list(conn, query):
    """Records (as :func:`volume_get`'s) of the volumes ``query`` selects
    (``db.api.volume_list_select``: its filters, order and page), with
    only the ``SHOWN_COLUMNS``: one select for the page and one per
    child collection, each over the page's ids: about half the CPU of
    loading them through the ORM.

    :param conn: a Core connection; inside the read transaction of the
        session that built ``query``, so every statement sees the same
        snapshot.
    """
    rows = conn.execute(
        query.with_only_columns(
            *(_VOLUMES.c[name] for name in SHOWN_COLUMNS),
            _TYPES.c.name.label("volume_type_name"))
        .select_from(_VOLUMES.outerjoin(
            _TYPES, _TYPES.c.id == _VOLUMES.c.volume_type_id))).all()
    records = []
    by_id = {}
    for row in rows:
        mapping = row._mapping
        type_name = mapping["volume_type_name"]
        record = VolumeRecord(
            **{name: mapping[name] for name in SHOWN_COLUMNS},
            volume_type=(None if type_name is None
                         else types.SimpleNamespace(name=type_name)),
            volume_metadata=[], volume_admin_metadata=[],
            volume_glance_metadata=[], volume_attachment=[])
        records.append(record)
        by_id[record.id] = record
    if not by_id:
        return records
    params = {"ids": list(by_id)}
    for attribute, select in _LIST_CHILDREN.items():
        for row in conn.execute(select, params):
            getattr(by_id[row.volume_id], attribute).append(
                types.SimpleNamespace(key=row.key, value=row.value))
    for row in conn.execute(_LIST_ATTACHMENTS, params):
        by_id[row.volume_id].volume_attachment.append(types.SimpleNamespace(
            **{name: getattr(row, name) for name in _ATTACHMENT_COLUMNS}))
    for record in records:
        record.volume_attachment.sort(key=lambda a: (a.created_at, a.id))
    return records
