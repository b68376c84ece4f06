"""Where the four faults fire: named points in the attach and detach flows.

Each point is one line at the step where its fault fires, so a reader of
the flow sees it (``minicompute/virt/block_device.py`` and
``minicompute/manager.py``). It asks the armed faults of the host that
runs the operation (:class:`~minicompute.faults.registry.ArmedFaults`,
registered here by the compute service with :func:`serve`); with nothing
armed that is a dictionary lookup and the flow goes on. When armed:

* ``driver-attach`` (:func:`point`, right after the driver plugged the
  disk): raises :class:`InjectedFault`, leaving the disk in the guest;
  the attach flow must take it out again (the seed's recovery path 1).
* ``attachment-complete`` (:func:`point`, in place of the call to
  Cinder): raises :class:`InjectedFault`; connection_info is already
  saved on the BDM.
* ``reserve-timeout`` (:func:`hold_reply`, after the BDM was created):
  holds the host's answer to the CALL for ``hold_seconds`` (the API's
  ``rpc_call_timeout`` plus a margin), so the API's CALL really times
  out. The hold ends early when the service stops.
* ``detach-refused`` (:class:`refused_detach`, around the driver's
  detach): the real guest is paused (its vCPUs stop, so it cannot answer
  the unplug, as ``virsh suspend`` makes it) for the driver's detach
  with its retries, then resumed: the fault's own undo. QEMU keeps the
  unplug request it was sent while paused; when the resumed guest acts
  on it the disk leaves the guest, so the undo waits up to ``[libvirt]
  device_detach_timeout`` seconds for that and plugs the disk back from
  the BDM's connection_info: the refused detach leaves the guest as it
  was, the seed's end state.
"""

import threading
import time

from oslo_log import log as logging

from minicompute import exception
from minicompute.faults import catalog

LOG = logging.getLogger(__name__)

#: Seconds between two looks at the guest's disks after a resume.
POLL = 0.5


class InjectedFault(exception.NovaException):
    msg_fmt = ("Injected fault at %(name)s (ministack-fault %(id)s): "
               "%(summary)s")


class _Host:
    """What the points need of one compute host."""

    def __init__(self, faults, conf, stopping, sleep, clock):
        self.faults = faults
        self.conf = conf
        self.stopping = stopping
        self.sleep = sleep
        self.clock = clock


#: host name -> _Host, for each compute service of this process.
_HOSTS = {}


def serve(faults, conf, stopping=None, sleep=time.sleep,
          clock=time.monotonic):
    """Let the points of host ``faults.host`` fire ``faults``' faults.

    :param conf: the host's config (``[libvirt] device_detach_timeout``).
    :param stopping: set when the service stops (a held answer ends).
    """
    _HOSTS[faults.host] = _Host(faults, conf,
                                stopping or threading.Event(), sleep, clock)


def withdraw(faults):
    """Undo :func:`serve` (the service stopped)."""
    if _HOSTS.get(faults.host) is not None and \
            _HOSTS[faults.host].faults is faults:
        del _HOSTS[faults.host]


def _take(name, host, ctxt, volume_id, server_id):
    served = _HOSTS.get(host)
    if served is None:
        return None, None
    return served, served.faults.take(name, volume_id, server_id,
                                      getattr(ctxt, "request_id", None))


def _fire(armed):
    fault = catalog.get(armed.name)
    raise InjectedFault(name=fault.name, id=armed.id,
                        summary=fault.summary.split(": ", 1)[-1])


def point(name, host, ctxt, volume_id, server_id):
    """Fault ``name``'s point: raise :class:`InjectedFault` when it is
    armed on ``host`` for this volume and server."""
    armed = _take(name, host, ctxt, volume_id, server_id)[1]
    if armed is not None:
        _fire(armed)


def hold_reply(host, ctxt, volume_id, server_id, bdm):
    """The ``reserve-timeout`` point: when armed, wait past the caller's
    timeout before the host answers with ``bdm`` (the BDM it created)."""
    served, armed = _take(catalog.RESERVE_TIMEOUT, host, ctxt, volume_id,
                          server_id)
    if armed is None:
        return
    hold = armed.record.get("hold_seconds") or 65
    LOG.warning("Fault reserve-timeout (%s): BDM %s (%s) created; holding "
                "the answer for %ss", armed.id, bdm["id"],
                bdm["device_name"], hold)
    served.stopping.wait(hold)
    LOG.warning("Fault reserve-timeout (%s): answering now, too late for "
                "the caller", armed.id)


class refused_detach:
    """The ``detach-refused`` point, around the driver's detach:
    ``with refused_detach(ctxt, virt_driver, instance, volume_id,
    connection_info, mountpoint): virt_driver.detach_volume(...)``.

    When armed, the guest is paused on entry and resumed on exit (and
    the disk plugged back if the resumed guest acted on the unplug it
    was sent while paused); the detach's own outcome is left as it is.
    """

    __slots__ = ("ctxt", "driver", "instance", "connection_info",
                 "mountpoint", "served", "armed")

    def __init__(self, ctxt, virt_driver, instance, volume_id,
                 connection_info, mountpoint):
        self.ctxt = ctxt
        self.driver = virt_driver
        self.instance = instance
        self.connection_info = connection_info
        self.mountpoint = mountpoint
        self.served, self.armed = _take(
            catalog.DETACH_REFUSED, instance.get("host"), ctxt, volume_id,
            instance["uuid"])

    def __enter__(self):
        if self.armed is not None:
            LOG.warning("Fault detach-refused (%s): pausing guest %s so it "
                        "cannot release %s", self.armed.id,
                        self.instance["name"], self.mountpoint)
            self.driver.pause(self.instance)
        return self

    def __exit__(self, etype, value, _tb):
        if self.armed is not None:
            self._resume(etype is not None and
                         issubclass(etype, exception.DeviceDetachFailed))
        return False

    def _resume(self, refused):
        """The fault's undo: the guest runs again, with its disk."""
        try:
            self.driver.power_on(self.ctxt, self.instance)   # resumes it
            LOG.warning("Fault detach-refused: guest %s resumed",
                        self.instance["name"])
            if refused:
                self._put_back_if_ejected()
        except Exception:
            # The detach's own outcome must reach the flow; the reconciler
            # puts a lost disk back on its next run.
            LOG.exception("Could not resume guest %s after the refused "
                          "detach", self.instance["name"])

    def _put_back_if_ejected(self):
        dev = self.mountpoint.rpartition("/")[2]
        served = self.served
        deadline = served.clock() + \
            served.conf.libvirt.device_detach_timeout
        while True:
            disks = (self.driver.list_volume_disks(self.instance) or
                     {}).get("disks", {})
            disk = disks.get(dev)
            if disk is None or not disk.get("live"):
                LOG.warning("Guest %s acted on the unplug it was sent "
                            "while paused: plugging %s back",
                            self.instance["name"], self.mountpoint)
                self.driver.replug_volume(self.ctxt, self.connection_info,
                                          self.instance, self.mountpoint)
                return
            if served.clock() >= deadline:
                LOG.info("Guest %s kept %s after resuming",
                         self.instance["name"], self.mountpoint)
                return
            served.sleep(POLL)
