"""GET /os-availability-zone[/detail] (nova's availability_zone.py).

Zones come from the compute services, as upstream: every compute host
is in the default zone ``nova``; the zone is available while one of its
services is enabled. ``detail`` (admin) adds the hosts and, per host,
each service's liveness (``available``: heartbeat recent), whether it is
enabled (``active``) and its last update. Services that are not compute
hosts belong to the ``internal`` zone, shown in ``detail`` only.
"""

import collections

import flask

from miniapi.api import common
from miniapi.compute import servers as server_ops
from minicompute.db import api as db_api

bp = flask.Blueprint("availability_zones", __name__, url_prefix="/v2.1")

INTERNAL_ZONE = "internal"


def _zone(service):
    return server_ops.DEFAULT_AZ if service.topic == "compute" \
        else INTERNAL_ZONE


def _zones(ctxt, with_internal):
    """(available zone -> services, not-available zone names)."""
    zones = collections.OrderedDict()
    for service in db_api.service_get_all(ctxt.elevated()):
        zone = _zone(service)
        if zone == INTERNAL_ZONE and not with_internal:
            continue
        zones.setdefault(zone, []).append(service)
    available = {z: s for z, s in zones.items()
                 if any(not svc.disabled for svc in s)}
    unavailable = [z for z in zones if z not in available]
    return available, unavailable


@bp.get("/os-availability-zone")
def index():
    available, unavailable = _zones(common.context(), with_internal=False)
    info = [{"zoneName": z, "zoneState": {"available": True},
             "hosts": None} for z in available]
    info += [{"zoneName": z, "zoneState": {"available": False},
              "hosts": None} for z in unavailable]
    return flask.jsonify({"availabilityZoneInfo": info})


@bp.get("/os-availability-zone/detail")
def detail():
    ctxt = common.context()
    common.require_admin(ctxt, "os_compute_api:os-availability-zone:detail")
    down_time = flask.current_app.config["COMPUTE_API"].down_time
    available, unavailable = _zones(ctxt, with_internal=True)
    info = []
    for zone, services in available.items():
        hosts = collections.OrderedDict()
        for svc in services:
            hosts.setdefault(svc.host, {})[svc.binary] = {
                "available": db_api.service_is_up(svc, down_time),
                "active": not svc.disabled,
                "updated_at": common.isotime_micro(
                    svc.updated_at or svc.last_seen_up)}
        info.append({"zoneName": zone, "zoneState": {"available": True},
                     "hosts": hosts})
    info += [{"zoneName": z, "zoneState": {"available": False},
              "hosts": None} for z in unavailable]
    return flask.jsonify({"availabilityZoneInfo": info})
