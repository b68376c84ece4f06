"""Instances: create, read (project-scoped), compare-and-swap update,
soft delete.

``instance_update`` is a compare-and-swap on ``task_state`` and/or
``vm_state`` (nova's ``instance.save(expected_task_state=[None])``): the
UPDATE carries the expected values in its WHERE clause, so exactly one of
two racing writers wins and the other gets ``UnexpectedTaskStateError``.
Non-admin contexts only see instances of their own project. Part of
``minicompute.db.api``, which re-exports every public function here.
"""

import re
import uuid as uuidlib

import sqlalchemy as sa

from minicompute import exception
from minicompute.db import instance_metadata
from minicompute.db import models
from minicompute.db.rows import json_friendly as _json_friendly
from minicompute.db.rows import unbound as _unbound
from minicompute.db.session import begin as _begin
from minicompute.db.session import scope as _scope
from ministack import db

# Sentinel for "no compare-and-swap on this column" (None is a real value).
UNSET = object()


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
    with _begin() as conn:
        row = conn.execute(statement, params).one_or_none()
    if row is None:
        raise exception.InstanceNotFound(instance_id=uuid)
    return row


def instance_get(ctxt, uuid):
    """The live instance ``uuid``.

    :raises InstanceNotFound: no such live instance, or it belongs to
        another project and the context is not admin.
    """
    return _unbound(models.Instance, _instance_row(ctxt, uuid))


def instance_get_dict(ctxt, uuid):
    """``to_dict(instance_get(ctxt, uuid))``, with no model object: the
    compute host reloads the instance at the start of every RPC it
    serves.

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
    """Soft-delete instance ``uuid``, its remaining BDMs and its metadata.

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
        instance_metadata.instance_metadata_destroy_all(session, uuid, now)
    return instance

