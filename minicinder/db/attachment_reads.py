"""Every read of an attachment row outside a write: the handshake's
checks, each loading only the columns it checks, and the show and the
lists.

Nova drives every attach and detach through POST, PUT, os-complete and
DELETE ``/attachments`` (plus ``os-begin_detaching``). Each step's read
is one prebuilt Core select (built once, at import, with bound
parameters) naming the columns it checks, for the reason
``db/volume_reads.py`` gives; the rows have the attribute names of the
models (``row.status``, ``row.attach_status``...). The volume's own
columns the steps check (state, read-only, export) are read there.

``GET /attachments/{id}`` and the lists read here too, so an
attachment row has one read path.

Nothing here writes: every state change is a compare-and-swap in
``db/api.py`` (``volume_transition``, ``attachment_transition``), so a
check made on a row read here is re-checked by the update that acts on
it. Project scoping: a non-admin sees only the attachments of its own
project's volumes (``_scoped``).

``conn`` is anything with ``execute(statement, params)``: a Core
connection from ``Database.read_rows`` for reads outside a transaction,
or the ORM session of the caller's write transaction.
"""

import sqlalchemy as sa

from minicinder import exception
from minicinder.db import models
from minicinder.db import volume_reads
from minicinder.volume import states

_VOLUMES = models.Volume.__table__
_ATTACHMENTS = models.VolumeAttachment.__table__

_ATTACHMENT_ID = sa.bindparam("attachment_id")
_VOLUME_ID = sa.bindparam("volume_id")
_PROJECT_ID = sa.bindparam("project_id")


def _in_project(select):
    return select.where(_VOLUMES.c.project_id == _PROJECT_ID)


def _scoped(ctx, select, in_project, params):
    """Run ``select`` (any project: admins) or ``in_project`` (``ctx``'s
    project only)."""
    if ctx.is_admin:
        return select, params
    return in_project, dict(params, project_id=ctx.project_id)


# --- attachments ---

_LIVE_ATTACHMENT = (_ATTACHMENTS.c.id == _ATTACHMENT_ID,
                    _ATTACHMENTS.c.deleted.is_(False))
_ATTACHMENT_JOIN = _ATTACHMENTS.join(
    _VOLUMES, _VOLUMES.c.id == _ATTACHMENTS.c.volume_id)


def _attachment_select(*columns):
    select = sa.select(*columns).select_from(_ATTACHMENT_JOIN) \
        .where(*_LIVE_ATTACHMENT)
    return select, _in_project(select)


def _visible(conn, ctx, selects, attachment_id):
    """The row of ``selects`` for the live attachment visible to ``ctx``.

    :raises VolumeAttachmentNotFound: missing, deleted or not ctx's.
    """
    row = conn.execute(*_scoped(ctx, *selects,
                                {"attachment_id": attachment_id})).first()
    if row is None:
        raise exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
    return row


_VOLUME_OF = _attachment_select(_ATTACHMENTS.c.volume_id)


def attachment_volume_id(conn, ctx, attachment_id):
    """The volume of the attachment (what the handshake locks).

    :raises VolumeAttachmentNotFound: missing, deleted or not ctx's.
    """
    return _visible(conn, ctx, _VOLUME_OF, attachment_id).volume_id


# What check_deletion_allowed reads, and the connector to revoke.
_FOR_DELETE = _attachment_select(
    _ATTACHMENTS.c.id, _ATTACHMENTS.c.volume_id,
    _ATTACHMENTS.c.instance_uuid, _ATTACHMENTS.c.attach_status,
    _ATTACHMENTS.c.connector)


def attachment_for_delete(conn, ctx, attachment_id):
    """``(id, volume_id, instance_uuid, attach_status, connector)``.

    :raises VolumeAttachmentNotFound: missing, deleted or not ctx's.
    """
    return _visible(conn, ctx, _FOR_DELETE, attachment_id)


# os-complete: the attachment's state and its volume's.
_FOR_COMPLETE = _attachment_select(
    _ATTACHMENTS.c.attach_status, _ATTACHMENTS.c.volume_id,
    _ATTACHMENTS.c.instance_uuid, _ATTACHMENTS.c.connector,
    _VOLUMES.c.status.label("volume_status"), _VOLUMES.c.multiattach,
    _VOLUMES.c.deleted.label("volume_deleted"))


def attachment_for_complete(conn, ctx, attachment_id):
    """``(attach_status, volume_id, instance_uuid, connector,
    volume_status, multiattach, volume_deleted)``.

    :raises VolumeAttachmentNotFound: missing, deleted or not ctx's.
    """
    return _visible(conn, ctx, _FOR_COMPLETE, attachment_id)


_OTHER = _ATTACHMENTS.alias("other")
# Another live attachment of the volume already connected (the PUT of a
# volume that is not multiattach refuses a second connector).
_OTHERS_CONNECTED = sa.exists().where(
    _OTHER.c.volume_id == _VOLUMES.c.id,
    _OTHER.c.deleted.is_(False),
    _OTHER.c.id != _ATTACHMENT_ID,
    _OTHER.c.connection_info.is_not(None),
    _OTHER.c.connection_info != "")
# PUT /attachments/{id}: its checks, the read-only flag, and the
# VolumeRef the export is made from, in one statement.
_FOR_CONNECT = _attachment_select(
    _ATTACHMENTS.c.id, _ATTACHMENTS.c.attach_status,
    _ATTACHMENTS.c.attach_mode, _ATTACHMENTS.c.connector,
    _ATTACHMENTS.c.volume_id, _VOLUMES.c.status.label("volume_status"),
    _VOLUMES.c.multiattach, _VOLUMES.c.deleted.label("volume_deleted"),
    _VOLUMES.c.size, _VOLUMES.c.provider_auth,
    _VOLUMES.c.provider_location,
    volume_reads.READONLY.label("readonly"),
    _OTHERS_CONNECTED.label("others_connected"))


def attachment_for_connect(conn, ctx, attachment_id):
    """What ``AttachmentAPI.update`` checks before connecting: the
    attachment's ``id``, ``attach_status``, ``attach_mode``,
    ``connector``, ``volume_id``; its volume's ``volume_status``,
    ``multiattach``, ``volume_deleted``, ``readonly`` and
    ``others_connected`` (another live attachment has connection_info);
    and ``size``, ``provider_auth``, ``provider_location`` (the
    ``VolumeRef``).

    :raises VolumeAttachmentNotFound: missing, deleted or not ctx's.
    """
    return _visible(conn, ctx, _FOR_CONNECT, attachment_id)


# What api/views.attachment_detail prints (the list's summary prints
# the first four).
_SHOWN = (_ATTACHMENTS.c.id, _ATTACHMENTS.c.attach_status,
          _ATTACHMENTS.c.instance_uuid, _ATTACHMENTS.c.volume_id,
          _ATTACHMENTS.c.attach_time, _ATTACHMENTS.c.detach_time,
          _ATTACHMENTS.c.attach_mode, _ATTACHMENTS.c.connection_info)
_DETAIL = sa.select(*_SHOWN).where(*_LIVE_ATTACHMENT)
_SHOW = _attachment_select(*_SHOWN)


def attachment_detail(conn, attachment_id):
    """The row ``views.attachment_detail`` renders, of a live attachment
    the caller has just written (no scoping: the caller checked it)."""
    return conn.execute(_DETAIL, {"attachment_id": attachment_id}).one()


def attachment_get(conn, ctx, attachment_id):
    """``GET /attachments/{id}``: the row ``views.attachment_detail``
    renders.

    :raises VolumeAttachmentNotFound: missing, deleted or not ctx's.
    """
    return _visible(conn, ctx, _SHOW, attachment_id)


_MARKER = _attachment_select(_ATTACHMENTS.c.id, _ATTACHMENTS.c.created_at)
# The list's filters (the API's query names, ``status`` already renamed)
# and the column each one matches.
_LIST_FILTERS = {"project_id": _VOLUMES.c.project_id,
                 "volume_id": _ATTACHMENTS.c.volume_id,
                 "instance_id": _ATTACHMENTS.c.instance_uuid,
                 "attach_status": _ATTACHMENTS.c.attach_status}


def attachment_list(conn, ctx, filters, all_tenants=False, limit=None,
                    marker=None):
    """``GET /attachments[/detail]``: the live attachments ``ctx`` sees,
    newest first, filtered by the keys of ``_LIST_FILTERS``, one page
    after ``marker``. Only an admin asking for ``all_tenants`` sees other
    projects'. The rows have the columns ``views.attachment_detail``
    renders.

    :raises InvalidInput: ``marker`` is no attachment ``ctx`` sees (400).
    """
    select = sa.select(*_SHOWN).select_from(_ATTACHMENT_JOIN) \
        .where(_ATTACHMENTS.c.deleted.is_(False))
    if not (ctx.is_admin and all_tenants):
        select = select.where(_VOLUMES.c.project_id == ctx.project_id)
    for key, column in _LIST_FILTERS.items():
        if key in filters:
            select = select.where(column == filters[key])
    if marker:
        ref = conn.execute(*_scoped(ctx, *_MARKER,
                                    {"attachment_id": marker})).first()
        if ref is None:
            raise exception.InvalidInput(
                reason="marker [%s] not found" % marker)
        select = select.where(sa.or_(
            _ATTACHMENTS.c.created_at < ref.created_at,
            sa.and_(_ATTACHMENTS.c.created_at == ref.created_at,
                    _ATTACHMENTS.c.id < ref.id)))
    select = select.order_by(_ATTACHMENTS.c.created_at.desc(),
                             _ATTACHMENTS.c.id.desc())
    if limit is not None:
        select = select.limit(limit)
    return conn.execute(select).all()


_OWNER = sa.select(_ATTACHMENTS.c.volume_id).where(*_LIVE_ATTACHMENT)


def attachment_owner(conn, attachment_id):
    """The volume a live attachment belongs to, or None, whoever's it is.

    Only for pairing checks (an attachment id sent along with another
    volume's id is refused); never shown to the caller.
    """
    return conn.execute(_OWNER, {"attachment_id": attachment_id}) \
        .scalar_one_or_none()


# What the audit compares with nova's ledger: every live attachment.
_EVERY_LIVE = sa.select(
    _ATTACHMENTS.c.id, _ATTACHMENTS.c.volume_id,
    _ATTACHMENTS.c.instance_uuid, _ATTACHMENTS.c.attach_status,
    _ATTACHMENTS.c.connector, _ATTACHMENTS.c.created_at,
    _ATTACHMENTS.c.updated_at) \
    .where(_ATTACHMENTS.c.deleted.is_(False)) \
    .order_by(_ATTACHMENTS.c.created_at)


def every_live_attachment(conn):
    """Every live attachment of every project, oldest first, with its
    connector and times (``ministack_audit``)."""
    return conn.execute(_EVERY_LIVE).all()


_VOLUME_ATTACHMENTS = (_ATTACHMENTS.c.volume_id == _VOLUME_ID,
                       _ATTACHMENTS.c.deleted.is_(False))
# What api/views.attachment_summary prints, oldest first (as
# the volume show renders them).
_SUMMARIES = sa.select(
    _ATTACHMENTS.c.id, _ATTACHMENTS.c.attach_status,
    _ATTACHMENTS.c.instance_uuid, _ATTACHMENTS.c.volume_id) \
    .where(*_VOLUME_ATTACHMENTS).order_by(_ATTACHMENTS.c.created_at)


def attachment_summaries(conn, volume_id):
    """The volume's live attachments as ``views.attachment_summary``
    renders them, oldest first."""
    return conn.execute(_SUMMARIES, {"volume_id": volume_id}).all()


# What a detach checks of each attachment it may remove (the
# OSSA-2023-003 rule: whose instance, in which state) and the connector
# it revokes, oldest first.
_FOR_DETACH = sa.select(
    _ATTACHMENTS.c.id, _ATTACHMENTS.c.volume_id,
    _ATTACHMENTS.c.instance_uuid, _ATTACHMENTS.c.attach_status,
    _ATTACHMENTS.c.connector) \
    .where(*_VOLUME_ATTACHMENTS).order_by(_ATTACHMENTS.c.created_at)


def attachments_for_detach(conn, volume_id):
    """The volume's live attachments as a detach checks and revokes them
    (``id, volume_id, instance_uuid, attach_status, connector``), oldest
    first."""
    return conn.execute(_FOR_DETACH, {"volume_id": volume_id}).all()


_CONNECTORS = sa.select(_ATTACHMENTS.c.id, _ATTACHMENTS.c.connector) \
    .where(*_VOLUME_ATTACHMENTS)


def attachment_connectors(conn, volume_id):
    """``(id, connector)`` of the volume's live attachments."""
    return conn.execute(_CONNECTORS, {"volume_id": volume_id}).all()


_ATTACH_STATUSES = sa.select(_ATTACHMENTS.c.attach_status) \
    .where(*_VOLUME_ATTACHMENTS)


def attach_statuses(conn, volume_id):
    """attach_status of each live attachment of the volume (what its
    status is recomputed from)."""
    return conn.execute(_ATTACH_STATUSES, {"volume_id": volume_id}) \
        .scalars().all()


_INSTANCES = sa.select(_ATTACHMENTS.c.instance_uuid) \
    .where(*_VOLUME_ATTACHMENTS)


def attachment_instances(conn, volume_id):
    """instance_uuid of each live attachment of the volume."""
    return conn.execute(_INSTANCES, {"volume_id": volume_id}).scalars() \
        .all()


_ATTACHED_INSTANCES = sa.select(_ATTACHMENTS.c.instance_uuid).distinct() \
    .where(*_VOLUME_ATTACHMENTS,
           _ATTACHMENTS.c.attach_status == states.ATT_ATTACHED,
           _ATTACHMENTS.c.instance_uuid.is_not(None)) \
    .order_by(_ATTACHMENTS.c.instance_uuid)


def attached_instances(conn, volume_id):
    """The servers the volume is attached to (what an extend tells Nova
    about), sorted."""
    return conn.execute(_ATTACHED_INSTANCES, {"volume_id": volume_id}) \
        .scalars().all()
