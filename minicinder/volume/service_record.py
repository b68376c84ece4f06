"""The volume service's record in ``services`` and its heartbeat.

Upstream every cinder service writes its row and refreshes ``updated_at``
every ``report_interval`` seconds; ``os-services`` calls it ``down`` once
the last refresh is older than ``service_down_time``. minicinder's volume
manager runs inside the API daemon, so the record is that daemon's: it is
``cinder-volume`` at ``<host>@<backend>`` (one backend, ``[DEFAULT]
volume_backend_name``), and a volume's host is that plus ``#<pool>``.
There is no separate scheduler service to record: this daemon places
every volume on its one backend itself.
"""

import logging
import threading

from minicinder.db import api as volume_db
from minicinder.db import services as db
from ministack.db import utcnow

LOG = logging.getLogger(__name__)

BINARY = "cinder-volume"


def backend_host(conf):
    """``<host>@<backend>``: the service's host."""
    return "%s@%s" % (conf.host, conf.volume_backend_name)


def pool_host(conf):
    """``<host>@<backend>#<pool>``: a volume's host (LVM's one pool is
    named after the backend)."""
    return "%s#%s" % (backend_host(conf), conf.volume_backend_name)


def is_up(service, down_time, now=None):
    """Whether the last heartbeat is recent enough (upstream's test: the
    age, either way, at most ``service_down_time``)."""
    last = service.updated_at or service.created_at
    if last is None:
        return False
    age = ((now or utcnow()) - last).total_seconds()
    return abs(age) <= down_time


class ServiceRecord:
    """Registers the volume service and keeps its heartbeat."""

    def __init__(self, database, conf):
        self.database = database
        self.conf = conf
        self.service_id = None
        self.uuid = None

    def register(self):
        """Create or refresh the row; remembers its id and uuid.

        Volumes an older minicinder recorded at the bare host name are
        moved to this backend's pool (``host@backend#pool``), as
        ``cinder-manage volume update_host`` would.
        """
        with self.database.write() as session:
            service = db.service_register(
                session, backend_host(self.conf), BINARY,
                self.conf.storage_availability_zone)
            self.service_id, self.uuid = service.id, service.uuid
            moved = volume_db.volumes_rehost(session, self.conf.host,
                                             pool_host(self.conf))
        if moved:
            LOG.info("Recorded %d volume(s) of host %s at %s", moved,
                     self.conf.host, pool_host(self.conf))
        LOG.info("Volume service %s@%s registered (%s)", self.conf.host,
                 self.conf.volume_backend_name, self.uuid)
        return self.uuid

    def report(self):
        """One heartbeat; re-registers a record someone removed."""
        with self.database.write() as session:
            alive = db.service_report(session, self.service_id)
        if not alive:
            self.register()

    def start_heartbeat(self, interval, stop_event):
        """Report every ``interval`` seconds until ``stop_event``; a
        failed report (database restarting) is retried next time, and the
        service shows ``down`` meanwhile, as upstream."""
        def _loop():
            while not stop_event.wait(interval):
                try:
                    self.report()
                except Exception:
                    LOG.exception("Service heartbeat failed; retrying in "
                                  "%s s", interval)

        thread = threading.Thread(target=_loop, daemon=True,
                                  name="service-heartbeat")
        thread.start()
        return thread
