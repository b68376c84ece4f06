"""Where the four faults fire: wrappers around the host's real parts.

The attach and detach flows have no hooks. :func:`wrap` puts, when the
service is built, a :class:`FaultInjectingDriver` around the hypervisor
driver, a :class:`FaultInjectingVolumeAPI` around the Cinder adapter and
a :class:`ReplyHoldingEndpoint` around the compute manager's RPC
endpoint; each asks the host's :class:`~minicompute.faults.registry.
ArmedFaults` at its point and, with nothing armed, only forwards (one
dict length read). What each does when its fault fires:

* ``driver-attach``: the real driver plugs the disk; then this
  "hypervisor" raises :class:`InjectedFault`, leaving the disk in the
  guest. The attach flow must take it out again.
* ``attachment-complete``: the real ``attachment_complete`` is not sent;
  :class:`InjectedFault` is raised in its place (connection_info is
  already saved on the BDM).
* ``reserve-timeout``: the manager really reserves the device name and
  creates the BDM; the endpoint then holds its answer for
  ``hold_seconds`` (the API's ``rpc_call_timeout`` plus a margin), so
  the API's CALL really times out. The hold ends early when the service
  stops.
* ``detach-refused``: the real guest is paused (its vCPUs stop, so it
  cannot answer the unplug request, as ``virsh suspend`` makes it in the
  recovery tests) for the driver's real detach with its retries, then
  resumed: the fault's own undo. QEMU keeps the unplug request it was
  sent while the guest was paused; when the resumed guest acts on it the
  disk leaves the live guest, so the undo waits up to
  ``[libvirt] device_detach_timeout`` seconds for that and plugs the
  disk back from the BDM's connection_info (what the host's reconciler
  would do on its next run): the refused detach leaves the guest as it
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


def _fire(armed):
    fault = catalog.get(armed.name)
    raise InjectedFault(name=fault.name, id=armed.id,
                        summary=fault.summary.split(": ", 1)[-1])


class _Wrapper:
    """Delegates every attribute it does not define to ``wrapped``."""

    def __init__(self, wrapped, faults):
        self.wrapped = wrapped
        self.faults = faults

    def __getattr__(self, name):
        return getattr(self.wrapped, name)


class FaultInjectingDriver(_Wrapper):
    """The hypervisor driver, failing where ``driver-attach`` and
    ``detach-refused`` are armed.

    :param conf: the host's config: after resuming a guest that refused
        a detach, its ``[libvirt] device_detach_timeout`` is how long the
        unplug it was sent while paused is waited for.
    """

    def __init__(self, wrapped, faults, conf, sleep=time.sleep,
                 clock=time.monotonic):
        super().__init__(wrapped, faults)
        self.driver = wrapped
        self.conf = conf
        self._sleep = sleep
        self._clock = clock

    def attach_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        self.driver.attach_volume(ctxt, connection_info, instance,
                                   mountpoint, disk_bus=disk_bus,
                                   device_type=device_type)
        armed = self.faults.take(catalog.DRIVER_ATTACH,
                                 connection_info.get("serial"),
                                 instance["uuid"],
                                 getattr(ctxt, "request_id", None))
        if armed is not None:
            _fire(armed)

    def detach_volume(self, ctxt, connection_info, instance, mountpoint):
        armed = self.faults.take(catalog.DETACH_REFUSED,
                                 connection_info.get("serial"),
                                 instance["uuid"],
                                 getattr(ctxt, "request_id", None))
        if armed is None:
            return self.driver.detach_volume(ctxt, connection_info,
                                              instance, mountpoint)
        LOG.warning("Fault detach-refused (%s): pausing guest %s so it "
                    "cannot release %s", armed.id, instance["name"],
                    mountpoint)
        self.driver.pause(instance)
        refused = False
        try:
            return self.driver.detach_volume(ctxt, connection_info,
                                              instance, mountpoint)
        except exception.DeviceDetachFailed:
            refused = True
            raise
        finally:
            self._resume(ctxt, connection_info, instance, mountpoint,
                         refused)

    def _resume(self, ctxt, connection_info, instance, mountpoint, refused):
        """The fault's undo: the guest runs again, with its disk."""
        try:
            self.driver.power_on(ctxt, instance)     # resumes it
            LOG.warning("Fault detach-refused: guest %s resumed",
                        instance["name"])
            if refused:
                self._put_back_if_ejected(ctxt, connection_info, instance,
                                          mountpoint)
        except Exception:
            # The detach's own outcome must reach the flow; the reconciler
            # puts a lost disk back on its next run.
            LOG.exception("Could not resume guest %s after the refused "
                          "detach", instance["name"])

    def _put_back_if_ejected(self, ctxt, connection_info, instance,
                             mountpoint):
        dev = mountpoint.rpartition("/")[2]
        deadline = self._clock() + self.conf.libvirt.device_detach_timeout
        while True:
            disks = (self.driver.list_volume_disks(instance) or {}).get(
                "disks", {})
            disk = disks.get(dev)
            if disk is None or not disk.get("live"):
                LOG.warning("Guest %s acted on the unplug it was sent while "
                            "paused: plugging %s back", instance["name"],
                            mountpoint)
                self.driver.replug_volume(ctxt, connection_info, instance,
                                           mountpoint)
                return
            if self._clock() >= deadline:
                LOG.info("Guest %s kept %s after resuming", instance["name"],
                         mountpoint)
                return
            self._sleep(POLL)


class FaultInjectingVolumeAPI(_Wrapper):
    """The Cinder adapter, failing ``attachment_complete`` where
    ``attachment-complete`` is armed (the attachment is read only then,
    to learn its volume and server)."""

    def attachment_complete(self, ctxt, attachment_id):
        if self.faults.armed(catalog.ATTACHMENT_COMPLETE):
            attachment = self.wrapped.attachment_get(ctxt, attachment_id)
            armed = self.faults.take(catalog.ATTACHMENT_COMPLETE,
                                     attachment.get("volume_id"),
                                     attachment.get("instance"),
                                     getattr(ctxt, "request_id", None))
            if armed is not None:
                _fire(armed)
        return self.wrapped.attachment_complete(ctxt, attachment_id)


class ReplyHoldingEndpoint(_Wrapper):
    """The compute manager as RPC endpoint, holding its answer to
    ``reserve_block_device_name`` where ``reserve-timeout`` is armed.

    :param stopping: set when the service stops (a hold ends then).
    """

    def __init__(self, wrapped, faults, stopping=None):
        super().__init__(wrapped, faults)
        self.target = wrapped.target
        self._stopping = stopping or threading.Event()

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  **kwargs):
        bdm = self.wrapped.reserve_block_device_name(
            ctxt, instance=instance, device=device, volume_id=volume_id,
            **kwargs)
        armed = self.faults.take(catalog.RESERVE_TIMEOUT, volume_id,
                                 instance.get("uuid"),
                                 getattr(ctxt, "request_id", None))
        if armed is not None:
            hold = armed.record.get("hold_seconds") or 65
            LOG.warning("Fault reserve-timeout (%s): BDM %s (%s) created; "
                        "holding the answer for %ss", armed.id, bdm["id"],
                        bdm["device_name"], hold)
            self._stopping.wait(hold)
            LOG.warning("Fault reserve-timeout (%s): answering now, too "
                        "late for the caller", armed.id)
        return bdm


def wrap(conf, faults, driver, volume_api):
    """``(driver, volume_api)`` with their fault points on ``faults``."""
    return (FaultInjectingDriver(driver, faults, conf),
            FaultInjectingVolumeAPI(volume_api, faults))
