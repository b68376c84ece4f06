"""Service heartbeats.

``service_heartbeat`` is how a compute host says it is alive (the API only
schedules to hosts whose last heartbeat is recent: ``service_is_up``).
Part of ``minicompute.db.api``, which re-exports every public function.
"""

import uuid as uuidlib

from minicompute import exception
from ministack import db
from ministack import exception as ms_exception
from minicompute.db import models
from minicompute.db.session import scope as _scope


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
