"""Every read of a volume row outside a write: the one read path.

A volume is read two ways in minicinder, by what the caller does next:

* to **show** or **check** it, here: prebuilt SQLAlchemy Core selects
  (built once, at import, with bound parameters) naming only the columns
  the caller uses. :func:`volume_get` is ``GET /volumes/{id}``, the call
  every client polls; :func:`volume_list` a ``/volumes/detail`` page;
  :func:`volume_state`, :func:`is_readonly` and :func:`volume_ref` are
  what the attachment handshake's steps and the backend check.
* to **change** it, ``db.api.volume_get`` loads the ORM ``Volume`` inside
  the write transaction that changes it (``db/volumes.py``).

Why Core here: loading a ``Volume`` through the ORM costs several times
the statement itself (building the select and its cache key, the
identity map, the joined type and the ``selectin`` collections), and the
show and the handshake run on every attach and every client's poll.

:func:`volume_get` is one statement, not four: the volume outer-joined
to its type, live metadata, admin metadata and attachments, and whether
it has image metadata (read by a second statement only then). The price
is a product of rows (metadata x admin metadata x attachments; a volume
usually has a few, at most two and at most one), folded back below.
On SQLite each statement outside a transaction is its own read
transaction; on MariaDB the reads run on ``Database.read_connection()``'s
autocommit connections and name only the columns the views print
(``SHOWN_COLUMNS``: PyMySQL parses every column descriptor in Python).

The show's result is a :class:`VolumeRecord`: the ORM ``Volume``'s
attribute names for the ``SHOWN_COLUMNS``, plus ``volume_type.name``,
``volume_metadata``, ``volume_admin_metadata``,
``volume_glance_metadata`` and ``volume_attachment``, so ``api/views.py``
renders either one (a column the views do not print is not there: an
AttributeError, never a stale value). Nothing here writes: every state
change is a compare-and-swap in ``db/api.py``, which re-checks what a
read here saw.

Project scoping is the same as ``db.api.volume_get``: a non-admin sees
only its own project's live volumes, an admin any live volume by id.
``conn`` is anything with ``execute(statement, params)``: a Core
connection from ``Database.read_rows``, or the session of the caller's
write transaction.
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
_VOLUME_ID = sa.bindparam("volume_id")

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
    .where(_VOLUMES.c.id == _VOLUME_ID,
           _VOLUMES.c.deleted.is_(False)))
_VOLUME_BY_ID_IN_PROJECT = _VOLUME_BY_ID.where(
    _VOLUMES.c.project_id == sa.bindparam("project_id"))
# Image metadata, a key per row: a second statement (when there is any)
# rather than one more factor in the join's product of rows.
_GLANCE_BY_VOLUME = (
    sa.select(_GLANCE_METADATA.c.key, _GLANCE_METADATA.c.value)
    .where(_GLANCE_METADATA.c.volume_id == _VOLUME_ID,
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


# --- the state and export columns (the handshake's checks) ---

# What a state-machine step needs of a volume: volume_transition reads
# id and multiattach, the error messages the status.
_VOLUME_STATE = (
    sa.select(_VOLUMES.c.id, _VOLUMES.c.status, _VOLUMES.c.multiattach)
    .where(_VOLUMES.c.id == _VOLUME_ID, _VOLUMES.c.deleted.is_(False)))
_VOLUME_STATE_IN_PROJECT = _VOLUME_STATE.where(
    _VOLUMES.c.project_id == sa.bindparam("project_id"))
# Only the volumes row is locked (no join: MariaDB would lock the
# joined rows too).
_VOLUME_STATE_FOR_UPDATE = _VOLUME_STATE.with_for_update()
_VOLUME_STATE_IN_PROJECT_FOR_UPDATE = _VOLUME_STATE_IN_PROJECT \
    .with_for_update()


def volume_state(conn, ctx, volume_id, for_update=False):
    """``(id, status, multiattach)`` of the live volume ``volume_id``
    visible to ``ctx`` (enough for ``db.api.volume_transition``).

    :param for_update: lock the volume row (as ``db.api.volume_get``'s).
    :raises VolumeNotFound: missing, deleted or another project's.
    """
    if for_update:
        select, in_project = (_VOLUME_STATE_FOR_UPDATE,
                              _VOLUME_STATE_IN_PROJECT_FOR_UPDATE)
    else:
        select, in_project = _VOLUME_STATE, _VOLUME_STATE_IN_PROJECT
    if ctx.is_admin:
        row = conn.execute(select, {"volume_id": volume_id}).first()
    else:
        row = conn.execute(in_project, {"volume_id": volume_id,
                                        "project_id": ctx.project_id}).first()
    if row is None:
        raise exception.VolumeNotFound(volume_id=volume_id)
    return row


# Whether the volume is flagged read-only (a column expression:
# ``db/attachment_reads.py`` reads it beside an attachment's checks).
READONLY = sa.exists().where(
    _ADMIN_METADATA.c.volume_id == _VOLUMES.c.id,
    _ADMIN_METADATA.c.deleted.is_(False),
    _ADMIN_METADATA.c.key == "readonly",
    _ADMIN_METADATA.c.value == "True")
_IS_READONLY = sa.select(READONLY).where(_VOLUMES.c.id == _VOLUME_ID)


def is_readonly(conn, volume_id):
    """``volume.metadata.is_readonly`` without loading the volume: the
    ``readonly`` admin metadata is ``"True"`` (``set_readonly`` writes
    only ``"True"`` or ``"False"``, one live row per key)."""
    return bool(conn.execute(_IS_READONLY, {"volume_id": volume_id})
                .scalar())


_VOLUME_REF = sa.select(_VOLUMES.c.id, _VOLUMES.c.size,
                        _VOLUMES.c.provider_auth,
                        _VOLUMES.c.provider_location) \
    .where(_VOLUMES.c.id == _VOLUME_ID)


def volume_ref(conn, volume_id):
    """The columns of a ``VolumeRef`` (deleted volumes too, as
    ``session.get`` found them), or None."""
    return conn.execute(_VOLUME_REF, {"volume_id": volume_id}).first()


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
