"""``os-services``: the volume service's record, as an operator sees and
changes it (admin only, as upstream's default policy).

Disabling the service keeps new volumes off its backend (they go to
``error``, as upstream's scheduler finds "No valid backend"). Freezing
marks it ``frozen``; upstream then refuses management operations only on
*replicated* volumes, and this backend replicates nothing, so the flag
changes nothing else, exactly as with upstream's LVM driver.
"""

import logging

from minicinder import exception
from minicinder.db import services as db
from minicinder.volume import api as volume_api
from minicinder.volume import service_record

LOG = logging.getLogger(__name__)


class ServiceAPI:

    def __init__(self, database, conf):
        self.database = database
        self.conf = conf

    def get_all(self, ctx, host=None, binary=None):
        """``[(service, is_up)]``; ``host`` matches a machine or a backend
        (``node1`` finds ``node1@lvm``)."""
        volume_api.require_admin(ctx, "volume_extension:services:index")
        with self.database.read() as session:
            services = db.service_get_all(session, host, binary)
        down_time = self.conf.service_down_time
        return [(s, service_record.is_up(s, down_time)) for s in services]

    def zone_available(self, zone):
        """Whether an enabled, up volume service serves ``zone`` (what
        ``os-availability-zone`` reports; readable by everyone)."""
        with self.database.read() as session:
            services = db.service_get_all(session,
                                          binary=service_record.BINARY)
        return any(s.availability_zone == zone and not s.disabled and
                   service_record.is_up(s, self.conf.service_down_time)
                   for s in services)

    def set_disabled(self, ctx, host, binary, disabled, reason=None,
                     set_reason=False):
        """Enable or disable the service at exactly ``host``.

        :param set_reason: write ``reason`` (enable clears it; a plain
            disable leaves it alone, as upstream).
        :raises ServiceNotFound: no such service (404).
        """
        volume_api.require_admin(ctx, "volume_extension:services:update")
        with self.database.write() as session:
            service = db.service_get(session, host, binary)
            if service is None:
                raise exception.ServiceNotFound(service_id=binary)
            values = {"disabled": disabled}
            if set_reason:
                values["disabled_reason"] = reason
            db.service_update(session, service.id, values)
        LOG.warning("Service %s on %s %s%s", binary, host,
                    "disabled" if disabled else "enabled",
                    " (%s)" % reason if reason else "")

    def set_frozen(self, ctx, host, frozen):
        """Freeze or thaw the cinder-volume services on ``host``.

        :raises InvalidInput: no volume service there (400, upstream's
            answer).
        """
        volume_api.require_admin(
            ctx, "volume:%s_host" % ("freeze" if frozen else "thaw"))
        with self.database.write() as session:
            services = db.service_get_all(session, host,
                                          service_record.BINARY)
            if not services:
                raise exception.InvalidInput(
                    reason="No service found with host=%s" % host)
            for service in services:
                db.service_update(session, service.id, {"frozen": frozen})
        LOG.warning("Volume service on %s %s", host,
                    "frozen" if frozen else "thawed")
