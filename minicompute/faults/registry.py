"""The faults armed on one compute host: in memory, with their expiry.

:class:`ArmedFaults` is what the host's fault endpoint arms and disarms
and what its fault points ask at each attach and detach (:meth:`take`).
It lives in the daemon's memory only, so a restarted minicompute has
nothing armed. Each fault has a deadline on this host's monotonic clock
(its lifetime counts from the moment the host armed it, so the clocks of
the API and of a subnode never have to agree): one shot by default
(consumed by the first operation that matches, and expired unused after
``catalog.ONE_SHOT_LIFETIME``), or every matching operation during
``seconds``.

Cost when nothing is armed: :meth:`take` reads one dict's length, with
no lock, no clock and no I/O, so an attach pays nothing for the feature.

Every change is logged at WARNING, with who armed the fault: arming,
firing, expiring unused and disarming.
"""

import collections
import datetime
import threading
import time

from oslo_log import log as logging

from minicompute.faults import catalog

LOG = logging.getLogger(__name__)

#: How many fired faults a host remembers (``list_faults``).
HISTORY = 20


def _now_iso():
    return datetime.datetime.now(datetime.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def _target(volume_id, server_id):
    parts = []
    if volume_id:
        parts.append("volume %s" % volume_id)
    if server_id:
        parts.append("server %s" % server_id)
    return " and ".join(parts) or "any volume of any server"


class Armed:
    """One armed fault as this host holds it.

    :param record: what the API sent (``id``, ``name``, ``volume_id``,
        ``server_id``, ``one_shot``, ``seconds``, ``hold_seconds``,
        ``armed_by``, ``armed_at``).
    :param deadline: this host's monotonic time at which it expires.
    """

    def __init__(self, record, deadline):
        self.record = dict(record)
        self.deadline = deadline
        self.fired = 0

    @property
    def id(self):
        return self.record["id"]

    @property
    def name(self):
        return self.record["name"]

    def matches(self, name, volume_id, server_id):
        return (self.record["name"] == name and
                self.record.get("volume_id") in (None, volume_id) and
                self.record.get("server_id") in (None, server_id))

    def describe(self):
        return "%s for %s, %s" % (
            self.record["name"], _target(self.record.get("volume_id"),
                                         self.record.get("server_id")),
            "one shot" if self.record.get("one_shot") else
            "every match for %ss" % self.record.get("seconds"))


class ArmedFaults:
    """The armed faults of compute host ``host`` and the recent firings.

    :param clock: monotonic seconds (injectable for tests).
    :param on_shot: ``on_shot(armed)`` after a one-shot fault fired, so
        the copies other hosts hold can be dropped (the service casts
        ``disarm_faults`` to every host).
    """

    def __init__(self, host, clock=time.monotonic, on_shot=None):
        self.host = host
        self._clock = clock
        self._lock = threading.Lock()
        self._armed = {}
        self.fired = collections.deque(maxlen=HISTORY)
        self.on_shot = on_shot

    # -- arming --

    def arm(self, record, by=None):
        """Arm ``record`` (a dict the API built); returns its listing."""
        fault = catalog.get(record.get("name"))
        if fault is None:
            raise ValueError("unknown fault %r" % record.get("name"))
        seconds = record.get("seconds") or catalog.ONE_SHOT_LIFETIME
        armed = Armed(record, self._clock() + seconds)
        with self._lock:
            self._armed[record["id"]] = armed
        LOG.warning("Fault %s armed (%s) by %s: %s, until %ss from now. "
                    "Next %s: %s", fault.name, record["id"],
                    by or record.get("armed_by") or "?", armed.describe(),
                    seconds, fault.operation, fault.summary)
        return self._listing(armed, self._clock())

    def disarm(self, name=None, fault_id=None, by=None, why="disarmed"):
        """Remove the faults of ``name`` (or the one ``fault_id``, or all
        of them); returns the listings of those removed."""
        now = self._clock()
        with self._lock:
            gone = [a for a in self._armed.values()
                    if (name is None or a.name == name) and
                    (fault_id is None or a.id == fault_id)]
            for armed in gone:
                del self._armed[armed.id]
        for armed in gone:
            LOG.warning("Fault %s (%s) %s%s: %s", armed.name, armed.id, why,
                        " by %s" % by if by else "", armed.describe())
        return [self._listing(a, now) for a in gone]

    # -- at the fault points --

    def armed(self, name):
        """Whether a fault ``name`` may be armed (cheap; may be stale: an
        expired one still counts until :meth:`take` prunes it)."""
        return bool(self._armed) and any(
            a.record["name"] == name for a in list(self._armed.values()))

    def take(self, name, volume_id=None, server_id=None, request_id=None):
        """The armed fault ``name`` that fires for this operation, or None.

        A one-shot fault is consumed (and ``on_shot`` called); a windowed
        one stays armed. Expired faults are dropped on the way.
        """
        if not self._armed:
            return None
        now = self._clock()
        self._expire(now)
        with self._lock:
            for armed in self._armed.values():
                if armed.matches(name, volume_id, server_id):
                    break
            else:
                return None
            armed.fired += 1
            if armed.record.get("one_shot"):
                del self._armed[armed.id]
        fired = {"id": armed.id, "name": name, "host": self.host,
                 "volume_id": volume_id, "server_id": server_id,
                 "fired_at": _now_iso(), "request_id": request_id,
                 "armed_by": armed.record.get("armed_by")}
        self.fired.append(fired)
        LOG.warning("Fault %s (%s) fires for volume %s on server %s [%s]: "
                    "%s", name, armed.id, volume_id, server_id, request_id,
                    catalog.get(name).step)
        if armed.record.get("one_shot") and self.on_shot is not None:
            try:
                self.on_shot(armed)
            except Exception:
                LOG.exception("Could not tell the other hosts that fault "
                              "%s fired", armed.id)
        return armed

    def _expire(self, now):
        with self._lock:
            gone = [a for a in self._armed.values() if a.deadline <= now]
            for armed in gone:
                del self._armed[armed.id]
        for armed in gone:
            LOG.warning("Fault %s (%s) expired%s: %s", armed.name, armed.id,
                        " unused" if not armed.fired else "",
                        armed.describe())

    # -- listing --

    def _listing(self, armed, now):
        return dict(armed.record, host=self.host, fired=armed.fired,
                    seconds_left=max(0, int(round(armed.deadline - now))))

    def listing(self):
        """``{"host", "armed": [...], "fired": [...]}`` (oldest first)."""
        now = self._clock()
        self._expire(now)
        with self._lock:
            armed = list(self._armed.values())
        return {"host": self.host,
                "armed": [self._listing(a, now) for a in armed],
                "fired": list(self.fired)}
