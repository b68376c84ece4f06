"""Server external events on the compute host (nova's
``ComputeManager.external_instance_event``), which the manager hands
to :class:`ExternalEvents`.

``volume-reimaged`` (compute 2.93) is awaited, not served: a rebuild of
a volume-backed server asks Cinder to re-image its root volume and waits
for this event (nova's ``virtapi.wait_for_instance_event``). The rebuild
registers what it waits for with :meth:`ExternalEvents.prepare` before
it asks Cinder, and the event, handled on another RPC thread, wakes it
with the event's status (``completed`` or ``failed``). Such an event
nobody waits for is logged and dropped, as upstream.

``volume-extended`` (compute 2.51) is served: Cinder grew
an attached volume, and the host makes the guest see it, as nova's
``extend_volume``: the BDM must exist and be connected, its
``volume_size`` takes the size Cinder now shows, and the virt driver
resizes the disk in the running guest. The work is recorded as the
event ``compute_extend_volume`` on the request's ``extend_volume``
action (miniapi records it), with the fault when it fails; a cast has no
caller to answer, so the failure ends there (logged), and the volume
stays grown in Cinder, as upstream.
"""

import json
import threading

from oslo_log import log as logging

from minicompute import exception
from minicompute import utils
from minicompute.db import api as db_api

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3

#: The event a volume-backed rebuild waits for.
VOLUME_REIMAGED = "volume-reimaged"


class EventWaiter:
    """One awaited event: ``(server uuid, name, tag)``; :meth:`wait`
    returns its status, or None when it did not come in time."""

    def __init__(self, key):
        self.key = key
        self.status = None
        self._done = threading.Event()

    def deliver(self, status):
        self.status = status
        self._done.set()

    def wait(self, timeout):
        self._done.wait(timeout)
        return self.status


class ExternalEvents:
    """Serves server external events on compute host ``host`` with its
    virt ``driver``, its Cinder client ``volume_api``, and
    ``load_instance`` (the manager's: an instance dict from its uuid)."""

    def __init__(self, host, driver, volume_api, load_instance):
        self.host = host
        self.driver = driver
        self.volume_api = volume_api
        self.load_instance = load_instance
        self._waiters = {}
        self._lock = threading.Lock()

    def prepare(self, instance_uuid, name, tag):
        """Register a wait for event ``name`` with ``tag`` on the server,
        before the request that makes it is sent; the caller passes the
        returned :class:`EventWaiter` to :meth:`forget` when done."""
        waiter = EventWaiter((instance_uuid, name, tag))
        with self._lock:
            self._waiters[waiter.key] = waiter
        return waiter

    def forget(self, waiter):
        with self._lock:
            if self._waiters.get(waiter.key) is waiter:
                del self._waiters[waiter.key]

    def _wake(self, event):
        key = (event.get("server_uuid"), event.get("name"), event.get("tag"))
        with self._lock:
            waiter = self._waiters.pop(key, None)
        if waiter is None:
            LOG.warning("Received unexpected event %s-%s for instance %s",
                        event.get("name"), event.get("tag"),
                        event.get("server_uuid"))
            return
        waiter.deliver(event.get("status") or "completed")

    def handle(self, ctxt, instances, events):
        """Handle ``events`` (dicts with ``name``, ``server_uuid``,
        ``tag``, ``status``) for ``instances``; errors are logged."""
        for event in events:
            if event.get("name") == VOLUME_REIMAGED:
                self._wake(event)
                continue
            if event.get("name") != "volume-extended":
                LOG.debug("Ignoring event %s for %s", event.get("name"),
                          event.get("server_uuid"))
                continue
            try:
                instance = self.load_instance(
                    ctxt, {"uuid": event["server_uuid"]})
            except exception.InstanceNotFound:
                LOG.warning("volume-extended for instance %s, which is "
                            "gone", event["server_uuid"])
                continue
            try:
                self.extend_volume(ctxt, instance, event["tag"])
            except Exception as exc:
                LOG.warning("Extend volume failed, volume_id=%s, instance "
                            "%s, reason: %s", event["tag"],
                            instance["uuid"], exc)

    def extend_volume(self, ctxt, instance, volume_id):
        """Resize ``volume_id``'s disk in ``instance`` to Cinder's size.

        :raises VolumeNotFound: Cinder no longer has the volume.
        :raises NotImplementedError: the virt driver cannot.
        :raises InternalError: libvirt/QEMU refused the resize.
        """
        with utils.EventReporter(ctxt, "compute_extend_volume", self.host,
                                 instance["uuid"],
                                 subject="volume %s" % volume_id), \
                utils.volume_lock(instance["uuid"], volume_id):
            try:
                bdm = db_api.bdm_get_by_volume_and_instance(
                    ctxt, volume_id, instance["uuid"])
            except exception.NotFound:
                LOG.warning("Extend volume failed, volume %s is not "
                            "attached to instance %s", volume_id,
                            instance["uuid"])
                return
            if not bdm.connection_info:
                LOG.warning("Extend volume failed, attached volume %s has "
                            "no connection_info", volume_id)
                return
            size = self.volume_api.get(ctxt, volume_id)["size"]
            db_api.bdm_update(ctxt, bdm.id, {"volume_size": size},
                              reload=False)
            LOG.info("Cinder extended volume %s to %s GiB; resizing it in "
                     "instance %s", volume_id, size, instance["uuid"])
            self.driver.extend_volume(ctxt, json.loads(bdm.connection_info),
                                      instance, size * GiB,
                                      bdm.device_name)
