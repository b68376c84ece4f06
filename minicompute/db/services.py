"""Service heartbeats.

``service_heartbeat`` is how a compute host says it is alive (the API only
schedules to hosts whose last heartbeat is recent: ``service_is_up``).
Part of ``minicompute.db.api``, which re-exports every public function.
"""

import uuid as uuidlib

import sqlalchemy as sa

from minicompute import exception
from minicompute.db import models
from minicompute.db.session import begin as _begin
from minicompute.db.session import scope as _scope
from ministack import db
from ministack import exception as ms_exception


def service_heartbeat(ctxt, host, binary, topic):
    """Create the service row or bump its report_count and last_seen_up."""
    now = db.utcnow()
    with _scope() as session:
        service = session.query(models.Service).filter_by(
            host=host, binary=binary, deleted=0).one_or_none()
        if service is None:
            service = models.Service(
                uuid=str(uuidlib.uuid4()), host=host, binary=binary,
                topic=topic, report_count=1, last_seen_up=now)
            session.add(service)
        else:
            service.report_count = (service.report_count or 0) + 1
            service.last_seen_up = now
            service.topic = topic
    return service


def service_get_all(ctxt, binary=None):
    """Every live service row (optionally of one ``binary``)."""
    with _scope() as session:
        query = session.query(models.Service).filter_by(deleted=0)
        if binary:
            query = query.filter_by(binary=binary)
        return query.order_by(models.Service.id).all()


_SERVICES = models.Service.__table__
_SERVICE_BY_HOST_AND_TOPIC = (
    sa.select(_SERVICES.c.host, _SERVICES.c.disabled,
              _SERVICES.c.forced_down, _SERVICES.c.last_seen_up,
              _SERVICES.c.updated_at, _SERVICES.c.created_at)
    .where(_SERVICES.c.host == sa.bindparam("b_host"),
           _SERVICES.c.topic == sa.bindparam("b_topic"),
           _SERVICES.c.deleted == 0)
    .order_by(_SERVICES.c.id).limit(1))


def service_liveness(ctxt, host, topic):
    """The first live service of ``topic`` on ``host`` (id order), with
    only what :func:`service_is_up` and a host status read (``host``,
    ``disabled``, ``forced_down``, ``last_seen_up``, ``updated_at``,
    ``created_at``), or None.

    One Core select of one row: the API checks its host on every attach
    and detach, and loading every service through the ORM to pick one
    was a visible share of miniapi's CPU per attach.
    """
    with _begin() as conn:
        return conn.execute(_SERVICE_BY_HOST_AND_TOPIC, {
            "b_host": host, "b_topic": topic}).one_or_none()


def service_get_by_host_and_binary(ctxt, host, binary):
    """The service ``binary`` on ``host``.

    :raises ComputeHostNotFound:
    """
    with _scope() as session:
        service = session.query(models.Service).filter_by(
            host=host, binary=binary, deleted=0).one_or_none()
    if service is None:
        raise exception.ComputeHostNotFound(host=host)
    return service


def service_is_up(service, down_time=60):
    """Whether ``service`` reported within the last ``down_time`` seconds."""
    if service.forced_down:
        return False
    last = service.last_seen_up or service.updated_at or service.created_at
    if last is None:
        return False
    elapsed = (db.utcnow() - last).total_seconds()
    return abs(elapsed) <= down_time


def service_update(ctxt, service_uuid, values):
    """Update the live service with UUID ``service_uuid`` (``PUT
    /os-services/{id}``: enable/disable, forced_down).

    :raises ministack.exception.NotFound: no such service.
    """
    with _scope() as session:
        service = session.query(models.Service).filter_by(
            uuid=service_uuid, deleted=0).one_or_none()
        if service is None:
            raise ms_exception.NotFound(
                message="Service %s could not be found." % service_uuid)
        for key, value in values.items():
            setattr(service, key, value)
        service.updated_at = db.utcnow()
    return service


def service_destroy(ctxt, service_uuid, binary="nova-compute"):
    """Soft-delete the live service ``service_uuid`` and, for a compute
    service, its host's compute nodes (``DELETE /os-services/{id}``: a
    host retired, e.g. a subnode taken away).

    :raises ministack.exception.NotFound: no such service.
    :raises ministack.exception.Conflict: the host still has instances
        (upstream: migrate or delete them first).
    """
    now = db.utcnow()
    with _scope() as session:
        service = session.query(models.Service).filter_by(
            uuid=service_uuid, deleted=0).one_or_none()
        if service is None:
            raise ms_exception.NotFound(
                message="Service %s could not be found." % service_uuid)
        if service.binary == binary:
            hosting = session.query(models.Instance.id).filter_by(
                host=service.host, deleted=0).first()
            if hosting is not None:
                raise ms_exception.Conflict(
                    message="Unable to delete compute service that is "
                            "hosting instances. Migrate or delete the "
                            "instances first.")
            for node in session.query(models.ComputeNode).filter_by(
                    host=service.host, deleted=0):
                node.deleted, node.deleted_at = node.id, now
        service.deleted, service.deleted_at = service.id, now
    return service
