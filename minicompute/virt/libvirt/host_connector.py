"""This host's volume connector: os-brick's connector properties, asked
once in a while instead of on every attach and detach.

Nova asks os-brick's ``get_connector_properties`` each time it attaches
or detaches a volume. os-brick answers by running commands (reading the
initiator name, the NVMe host NQN, the system UUID, multipath's state),
on the critical path of both the attach and the
detach. What it reports changes only when the host is reconfigured, so
the answer is kept for :data:`TTL` seconds and asked again after that
(and once at start-up, so that the first attach does not pay for it).

The hop stays visible: a cached answer is still an ``os_brick
get_connector_properties`` span, marked ``cached`` with its age.
"""

import threading
import time

from ministack.trace.profiler import span

#: Seconds a fetched answer is reused (a reconfigured host is picked up
#: within this; restarting nova-compute picks it up at once).
TTL = 300.0

NAME = "os_brick get_connector_properties"


class HostConnector:
    """``get()`` returns this host's connector (a fresh dict each time)
    with ``initiator`` set to the IQN we log in as."""

    def __init__(self, my_ip, host, initiator_iqn, ttl=TTL,
                 clock=time.monotonic):
        self._my_ip = my_ip
        self._host = host
        self._initiator_iqn = initiator_iqn
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._props = None
        self._fetched_at = None

    def _fetch(self):
        from os_brick.initiator import connector
        return connector.get_connector_properties(
            None, self._my_ip, False, False, host=self._host)

    def get(self):
        with self._lock:
            now = self._clock()
            age = None if self._props is None else now - self._fetched_at
            if age is None or age >= self._ttl:
                with span("os_brick", "LIBRARY", NAME, actor="os-brick"):
                    self._props = self._fetch()
                self._fetched_at = now
            else:
                with span("os_brick", "LIBRARY", NAME, actor="os-brick",
                          details=lambda: {"cached": True,
                                           "age_s": round(age, 1)}):
                    pass
            props = dict(self._props)
        # The IQN QEMU (or open-iscsi) presents must be the one the
        # target's ACL admits, i.e. the one in this connector.
        props["initiator"] = self._initiator_iqn
        return props
