"""Data access for the nova database, shared by miniapi and minicompute.

Every function takes the :class:`~ministack.context.RequestContext` first,
opens its own short transaction and returns *detached* ORM rows (the
sessionmaker uses ``expire_on_commit=False``), so callers read attributes
freely after the session is gone but must call an ``*_update`` function to
change anything. Nothing here caches: two daemons write the same rows.

Concurrency rules live here rather than in the callers:

* ``instance_update`` is a compare-and-swap on ``task_state`` and/or
  ``vm_state`` (nova's ``instance.save(expected_task_state=[None])``): the
  UPDATE carries the expected values in its WHERE clause, so exactly one of
  two racing writers wins and the other gets ``UnexpectedTaskStateError``.
* Soft delete sets ``deleted`` to the row id (nova's ``SoftDeleteMixin``);
  every query here only sees rows with ``deleted == 0``.
* Non-admin contexts only see instances of their own project.

Call :func:`configure` once per process with the engine before anything
else. Instances and BDMs live here; actions/events (``actions.py``),
services (``services.py``) and flavors (``flavors.py``, whose extra-spec
and access functions callers import from there) are re-exported so
callers only ever import ``minicompute.db.api``.
"""

import datetime
import json
import re
import uuid as uuidlib

import sqlalchemy as sa

from minicompute import exception
from ministack import db
from minicompute.db import models
from minicompute.db import session
from minicompute.db.actions import (  # noqa: F401 (re-exported)
    action_event_finish, action_event_start, action_events_get,
    action_events_running, action_finish, action_get_all,
    action_get_by_request_id, action_start)
from minicompute.db.flavors import (  # noqa: F401 (re-exported)
    flavor_create, flavor_destroy, flavor_get, flavor_get_all,
    flavor_update)
from minicompute.db.services import (  # noqa: F401 (re-exported)
    service_get_all, service_get_by_host_and_binary, service_heartbeat,
    service_is_up, service_liveness, service_update)
from minicompute.db.session import scope as _scope

# Sentinel for "no compare-and-swap on this column" (None is a real value).
UNSET = object()


def configure(engine):
    """Point this module at ``engine`` (call once at service start-up)."""
    session.configure(engine)


def to_dict(row):
    """A JSON-friendly dict of a row's columns (datetimes as ISO strings).

    This is the primitive that crosses RPC (``instance`` and ``bdm``
    arguments of ``minicompute.rpcapi``); instances also carry ``name``.
    """
    out = _json_friendly((column.name, getattr(row, column.name))
                         for column in row.__table__.columns)
    if isinstance(row, models.Instance):
        out["name"] = row.name
    return out


def _json_friendly(items):
    """``{name: value}`` of ``items`` with datetimes as ISO strings."""
    return {name: value.isoformat()
            if isinstance(value, datetime.datetime) else value
            for name, value in items}


# --- instances -------------------------------------------------------------

def _instance_query(ctxt, session):
    query = session.query(models.Instance).filter_by(deleted=0)
    if not ctxt.is_admin:
        query = query.filter_by(project_id=ctxt.project_id)
    return query


def instance_create(ctxt, values):
    """Create an instance row; ``uuid`` is generated when not given."""
    values = dict(values)
    values.setdefault("uuid", str(uuidlib.uuid4()))
    values.setdefault("project_id", ctxt.project_id)
    values.setdefault("user_id", ctxt.user_id)
    with _scope() as session:
        instance = models.Instance(**values)
        session.add(instance)
    return instance


_INSTANCES = models.Instance.__table__
_INSTANCE_BY_UUID = sa.select(_INSTANCES).where(
    _INSTANCES.c.uuid == sa.bindparam("b_uuid"), _INSTANCES.c.deleted == 0)
_INSTANCE_BY_UUID_IN_PROJECT = _INSTANCE_BY_UUID.where(
    _INSTANCES.c.project_id == sa.bindparam("b_project_id"))


def _instance_row(ctxt, uuid):
    """The live instance's Core row, by one prebuilt select (the project's
    only, unless admin).

    :raises InstanceNotFound:
    """
    params = {"b_uuid": uuid}
    statement = _INSTANCE_BY_UUID
    if not ctxt.is_admin:
        statement = _INSTANCE_BY_UUID_IN_PROJECT
        params["b_project_id"] = ctxt.project_id
    with session.begin() as conn:
        row = conn.execute(statement, params).one_or_none()
    if row is None:
        raise exception.InstanceNotFound(instance_id=uuid)
    return row


def _unbound(model, row):
    """A ``model`` object holding a Core row's columns, in no session:
    what the ORM's query handed out detached, without its load (the
    query, identity map and session cost more than the statement; every
    API request reads its server, issue 16). Read it; change the row
    with an ``*_update`` function, never by adding it to a session."""
    return model(**row._mapping)


def instance_get(ctxt, uuid):
    """The live instance ``uuid``.

    :raises InstanceNotFound: no such live instance, or it belongs to
        another project and the context is not admin.
    """
    return _unbound(models.Instance, _instance_row(ctxt, uuid))


def instance_get_dict(ctxt, uuid):
    """``to_dict(instance_get(ctxt, uuid))``, with no model object: the
    compute host reloads the instance at the start of every RPC it
    serves (issue 16).

    :raises InstanceNotFound: as :func:`instance_get`.
    """
    row = _instance_row(ctxt, uuid)
    out = _json_friendly(row._mapping.items())
    out["name"] = models.instance_name(row.id)
    return out


def instance_get_including_deleted(ctxt, uuid):
    """The instance ``uuid``, live or soft-deleted (project-scoped): instance
    actions stay readable after the server is deleted (nova 2.21+).

    :raises InstanceNotFound:
    """
    with _scope() as session:
        query = session.query(models.Instance).filter_by(uuid=uuid)
        if not ctxt.is_admin:
            query = query.filter_by(project_id=ctxt.project_id)
        instance = query.one_or_none()
    if instance is None:
        raise exception.InstanceNotFound(instance_id=uuid)
    return instance


def instance_get_all(ctxt, filters=None):
    """Live instances matching ``filters``, oldest first.

    Filters (all optional): ``name`` (a regular expression searched in
    the display name, as nova's ``name`` filter), ``host``, ``project_id``
    and ``all_tenants`` (admin only: every project). A non-admin context is
    always limited to its own project.
    """
    filters = dict(filters or {})
    with _scope() as session:
        query = session.query(models.Instance).filter_by(deleted=0)
        if not ctxt.is_admin:
            query = query.filter_by(project_id=ctxt.project_id)
        elif filters.get("project_id"):
            query = query.filter_by(project_id=filters["project_id"])
        elif not filters.get("all_tenants"):
            query = query.filter_by(project_id=ctxt.project_id)
        if filters.get("host"):
            query = query.filter_by(host=filters["host"])
        rows = query.order_by(models.Instance.id).all()
    if filters.get("name"):
        try:
            pattern = re.compile(str(filters["name"]))
        except re.error:
            pattern = re.compile(re.escape(str(filters["name"])))
        rows = [r for r in rows if pattern.search(r.display_name or "")]
    return rows


def instance_get_all_including_deleted(ctxt):
    """Every instance row, soft-deleted ones too, in id order (admin only:
    ``ministack-audit`` matches libvirt domains to the instances they were
    named after, including deleted ones whose domain was left behind).

    :raises Forbidden: not an admin context.
    """
    if not ctxt.is_admin:
        raise exception.Forbidden()
    with _scope() as session:
        return session.query(models.Instance).order_by(
            models.Instance.id).all()


def _as_list(expected):
    return list(expected) if isinstance(expected, (list, tuple, set)) \
        else [expected]


def _state_clause(column, expected):
    expected = _as_list(expected)
    clauses = [column.in_([e for e in expected if e is not None])]
    if None in expected:
        clauses.append(column.is_(None))
    return sa.or_(*clauses)


def instance_update(ctxt, uuid, values, expected_task_state=UNSET,
                    expected_vm_state=UNSET):
    """Update instance ``uuid`` and return the updated row.

    ``expected_task_state`` / ``expected_vm_state`` (a value or a list; it
    may contain None) make this a compare-and-swap: the row is changed only
    if it is still in one of those states.

    :raises InstanceNotFound: no such live instance (project-scoped).
    :raises UnexpectedTaskStateError: the task_state was not as expected.
    :raises UnexpectedVMStateError: the vm_state was not as expected.
    """
    values = dict(values)
    values["updated_at"] = db.utcnow()
    with _scope() as session:
        query = _instance_query(ctxt, session).filter_by(uuid=uuid)
        guarded = query
        if expected_task_state is not UNSET:
            guarded = guarded.filter(_state_clause(
                models.Instance.task_state, expected_task_state))
        if expected_vm_state is not UNSET:
            guarded = guarded.filter(_state_clause(
                models.Instance.vm_state, expected_vm_state))
        count = guarded.update(values, synchronize_session=False)
        if count == 0:
            actual = query.one_or_none()
            if actual is None:
                raise exception.InstanceNotFound(instance_id=uuid)
            if (expected_task_state is not UNSET and actual.task_state
                    not in _as_list(expected_task_state)):
                raise exception.UnexpectedTaskStateError(
                    instance_uuid=uuid, actual=actual.task_state,
                    expected=_as_list(expected_task_state))
            raise exception.UnexpectedVMStateError(
                instance_uuid=uuid, actual=actual.vm_state,
                expected=_as_list(expected_vm_state))
        session.expire_all()
        return query.one()


def instance_destroy(ctxt, uuid):
    """Soft-delete instance ``uuid`` and its remaining BDMs.

    :raises InstanceNotFound: no such live instance.
    """
    with _scope() as session:
        instance = _instance_query(ctxt, session).filter_by(
            uuid=uuid).one_or_none()
        if instance is None:
            raise exception.InstanceNotFound(instance_id=uuid)
        now = db.utcnow()
        instance.deleted = instance.id
        instance.deleted_at = now
        instance.terminated_at = now
        for bdm in session.query(models.BlockDeviceMapping).filter_by(
                instance_uuid=uuid, deleted=0):
            bdm.deleted = bdm.id
            bdm.deleted_at = now
    return instance


# --- block device mappings --------------------------------------------------

_BDMS = models.BlockDeviceMapping.__table__


def _bdm_query(session):
    return session.query(models.BlockDeviceMapping).filter_by(deleted=0)


def bdm_create(ctxt, values):
    """Create a BDM row; ``uuid`` is generated when not given.

    ``connection_info`` may be given as a dict; it is stored as JSON.
    One Core INSERT of every column (the model's defaults filled in
    here), no ORM flush: the compute host creates one per attach
    (issue 16).

    :returns: the new BDM, in no session (as :func:`bdm_get`'s).
    """
    values = dict(values)
    values.setdefault("uuid", str(uuidlib.uuid4()))
    if isinstance(values.get("connection_info"), dict):
        values["connection_info"] = json.dumps(values["connection_info"])
    row = db.with_defaults(_BDMS, values)
    with session.begin() as conn:
        row["id"] = conn.execute(_BDMS.insert(), row).inserted_primary_key[0]
    return models.BlockDeviceMapping(**row)


def bdm_get(ctxt, bdm_id):
    """The live BDM with primary key ``bdm_id``.

    :raises BDMNotFound:
    """
    with _scope() as session:
        bdm = _bdm_query(session).filter_by(id=bdm_id).one_or_none()
    if bdm is None:
        raise exception.BDMNotFound(id=bdm_id)
    return bdm


_BDM_BY_ID = sa.select(_BDMS).where(_BDMS.c.id == sa.bindparam("b_id"),
                                     _BDMS.c.deleted == 0)
_BDM_BY_VOLUME_AND_INSTANCE = (
    sa.select(_BDMS)
    .where(_BDMS.c.volume_id == sa.bindparam("b_volume_id"),
           _BDMS.c.instance_uuid == sa.bindparam("b_instance_uuid"),
           _BDMS.c.deleted == 0)
    .order_by(_BDMS.c.id.desc()).limit(1))


def bdm_read(ctxt, bdm_id):
    """:func:`bdm_get` as a read-only Core row (the columns as
    attributes), by one prebuilt select and no ORM load: the compute
    host's attach (issue 16). Update it with :func:`bdm_update`.

    :raises BDMNotFound:
    """
    with session.begin() as conn:
        row = conn.execute(_BDM_BY_ID, {"b_id": bdm_id}).one_or_none()
    if row is None:
        raise exception.BDMNotFound(id=bdm_id)
    return row


def bdm_read_by_volume_and_instance(ctxt, volume_id, instance_uuid):
    """:func:`bdm_get_by_volume_and_instance` as a read-only Core row
    (the compute host's detach; issue 16).

    :raises VolumeBDMNotFound:
    """
    with session.begin() as conn:
        row = conn.execute(_BDM_BY_VOLUME_AND_INSTANCE, {
            "b_volume_id": volume_id,
            "b_instance_uuid": instance_uuid}).one_or_none()
    if row is None:
        raise exception.VolumeBDMNotFound(volume_id=volume_id,
                                          instance_uuid=instance_uuid)
    return row


def bdm_get_by_uuid(ctxt, uuid):
    """The live BDM ``uuid``.

    :raises BDMNotFound:
    """
    with _scope() as session:
        bdm = _bdm_query(session).filter_by(uuid=uuid).one_or_none()
    if bdm is None:
        raise exception.BDMNotFound(id=uuid)
    return bdm


def bdm_get_by_volume_and_instance(ctxt, volume_id, instance_uuid):
    """The live BDM attaching ``volume_id`` to ``instance_uuid``.

    :raises VolumeBDMNotFound: the volume is not attached to the instance.
    """
    with _scope() as session:
        bdm = _bdm_query(session).filter_by(
            volume_id=volume_id, instance_uuid=instance_uuid).order_by(
            models.BlockDeviceMapping.id.desc()).first()
    if bdm is None:
        raise exception.VolumeBDMNotFound(volume_id=volume_id,
                                          instance_uuid=instance_uuid)
    return bdm


def bdm_get_by_volume(ctxt, volume_id):
    """Every live BDM of ``volume_id`` (several when multiattached)."""
    with _scope() as session:
        return _bdm_query(session).filter_by(volume_id=volume_id).order_by(
            models.BlockDeviceMapping.id).all()


_BDM_INSTANCES_OF_VOLUME = (
    sa.select(_BDMS.c.instance_uuid)
    .where(_BDMS.c.volume_id == sa.bindparam("b_volume_id"),
           _BDMS.c.deleted == 0)
    .order_by(_BDMS.c.id))


def bdm_instances_of_volume(ctxt, volume_id):
    """The instance uuid of every live BDM of ``volume_id``, in BDM id
    order: what the API's already-attached check reads of
    :func:`bdm_get_by_volume`, by one Core select (issue 16)."""
    with session.begin() as conn:
        return list(conn.execute(_BDM_INSTANCES_OF_VOLUME,
                                 {"b_volume_id": volume_id}).scalars())


_BDMS_OF_INSTANCE = (
    sa.select(_BDMS)
    .where(_BDMS.c.instance_uuid == sa.bindparam("b_instance_uuid"),
           _BDMS.c.deleted == 0)
    .order_by(_BDMS.c.id))


def bdm_get_all_by_instance(ctxt, instance_uuid):
    """Every live BDM of ``instance_uuid``, in creation order, in no
    session (one prebuilt select: every reserve reads them, issue 16)."""
    with session.begin() as conn:
        rows = conn.execute(_BDMS_OF_INSTANCE,
                            {"b_instance_uuid": instance_uuid}).all()
    return [_unbound(models.BlockDeviceMapping, row) for row in rows]


def bdm_get_all_volumes(ctxt):
    """Every live BDM of a Cinder volume, of every instance, in id order
    (``ministack-audit``'s nova ledger)."""
    with _scope() as session:
        return _bdm_query(session).filter(
            models.BlockDeviceMapping.destination_type == "volume",
            models.BlockDeviceMapping.volume_id.isnot(None)).order_by(
            models.BlockDeviceMapping.id).all()


def bdm_update(ctxt, bdm_id, values, reload=True):
    """Update live BDM ``bdm_id`` and return it (in no session).

    :param reload: False: do not read the row back; return the columns
        written (``updated_at`` among them), JSON-friendly as
        :func:`to_dict`'s, for a caller that holds the rest of the row
        (the API's attach, the compute host's writes of
        ``connection_info``; issue 16).
    :raises BDMNotFound:
    """
    values = dict(values)
    if isinstance(values.get("connection_info"), dict):
        values["connection_info"] = json.dumps(values["connection_info"])
    values["updated_at"] = db.utcnow()
    statement = _BDMS.update().where(
        _BDMS.c.id == bdm_id, _BDMS.c.deleted == 0).values(values)
    with session.begin() as conn:
        if not conn.execute(statement).rowcount:
            raise exception.BDMNotFound(id=bdm_id)
        if reload:
            row = conn.execute(_BDM_BY_ID, {"b_id": bdm_id}).one()
    if not reload:
        return _json_friendly(values.items())
    return _unbound(models.BlockDeviceMapping, row)


# Soft delete in one statement (deleted = id), no load and flush of the row.
_BDM_DESTROY = (
    _BDMS.update().where(_BDMS.c.id == sa.bindparam("b_id"),
                         _BDMS.c.deleted == 0)
    .values(deleted=_BDMS.c.id, deleted_at=sa.bindparam("b_now"),
            updated_at=sa.bindparam("b_now")))


def bdm_destroy(ctxt, bdm_id):
    """Soft-delete BDM ``bdm_id``; a BDM already gone is not an error."""
    with session.begin() as conn:
        conn.execute(_BDM_DESTROY, {"b_id": bdm_id, "b_now": db.utcnow()})
