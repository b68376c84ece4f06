"""Queries on ``services``: the volume service's record and heartbeat.

A host filter matches as upstream's ``_filter_host`` does: ``node1``
matches ``node1`` itself and every backend on it (``node1@lvm``,
``node1@lvm#pool``), so an operator can name the machine.
"""

import uuid

import sqlalchemy as sa

from minicinder.db import models
from ministack.db import utcnow


def _live():
    return sa.select(models.Service).where(
        models.Service.deleted.is_(False))


def host_matches(column, host):
    """``column`` is ``host`` or one of its backends or pools."""
    return sa.or_(column == host,
                  column.startswith(host + "@", autoescape=True),
                  column.startswith(host + "#", autoescape=True))


def service_get_all(session, host=None, binary=None):
    query = _live()
    if host is not None:
        query = query.where(host_matches(models.Service.host, host))
    if binary is not None:
        query = query.where(models.Service.binary == binary)
    return list(session.scalars(query.order_by(models.Service.id)))


def service_get(session, host, binary):
    """The service at exactly ``host`` running ``binary``, or None."""
    return session.scalars(_live().where(
        models.Service.host == host,
        models.Service.binary == binary)).first()


def service_register(session, host, binary, zone):
    """Create the record (first start) or refresh it (a restart): the
    heartbeat starts now; ``disabled`` and ``frozen`` are kept, as an
    operator set them."""
    service = service_get(session, host, binary)
    now = utcnow()
    if service is None:
        service = models.Service(
            uuid=str(uuid.uuid4()), host=host, binary=binary, topic=binary,
            report_count=0, disabled=False, frozen=False,
            availability_zone=zone, replication_status="not-capable")
        session.add(service)
    service.availability_zone = zone
    service.report_count = (service.report_count or 0) + 1
    service.updated_at = now
    session.flush()
    return service


def service_report(session, service_id):
    """One heartbeat. :returns: False when the record is gone."""
    return session.execute(
        sa.update(models.Service)
        .where(models.Service.id == service_id,
               models.Service.deleted.is_(False))
        .values(updated_at=utcnow(),
                report_count=models.Service.report_count + 1)
    ).rowcount == 1


def service_update(session, service_id, values):
    """An operator's change (enable, disable, freeze, thaw): stamped in
    ``modified_at``, not in the heartbeat's ``updated_at``."""
    session.execute(sa.update(models.Service)
                    .where(models.Service.id == service_id)
                    .values(modified_at=utcnow(), **values))
