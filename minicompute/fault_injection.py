"""Test-only fault injection: wrappers around the driver and Cinder adapter.

Two of the seed's recovery paths start with a failure that cannot be made
from outside the process at a precise moment: the hypervisor failing right
*after* the disk went into the guest (Cinder has mapped the volume), and
``attachment_complete`` failing after the disk is wired. Everything else
(a guest refusing an unplug, a paused or killed compute, a stopped
minicinder/tgtd/libvirtd/RabbitMQ) is made for real by the tests.

The attach flow itself has no hooks: when ``[fault_injection] enabled``
is true (its help says it is for tests), :func:`wrap` puts a
:class:`FaultInjectingDriver` around the hypervisor driver and a
:class:`FaultInjectingVolumeAPI` around the Cinder adapter when the
service is built. A point fires only for a volume whose display name
contains ``inject-fault-<point>``, so one test daemon can run normal and
faulty attaches side by side, and a production config never builds the
wrappers: the option is false unless someone sets it.
"""

from oslo_log import log as logging

from minicompute import exception

LOG = logging.getLogger(__name__)

#: The named points (and where they are in the attach flow).
DRIVER_ATTACH = "driver_attach"            # after the disk is in the guest
ATTACHMENT_COMPLETE = "attachment_complete"  # instead of os-complete
POINTS = (DRIVER_ATTACH, ATTACHMENT_COMPLETE)

MARKER = "inject-fault-"


class InjectedFault(exception.NovaException):
    msg_fmt = "Injected fault at %(point)s (test-only fault injection)"


def enabled(conf):
    group = getattr(conf, "fault_injection", None)
    return group is not None and group.enabled


def should_fail(point, volume):
    """Whether ``point`` fires for ``volume`` (a Cinder volume dict)."""
    name = (volume or {}).get("name") or (volume or {}).get(
        "display_name") or ""
    return (MARKER + point) in name


def _maybe_fail(point, volume):
    if should_fail(point, volume):
        LOG.warning("Fault injection: failing %s for volume %s", point,
                    volume.get("id"))
        raise InjectedFault(point=point)


class _Wrapper:
    """Delegates every attribute it does not define to ``wrapped``."""

    def __init__(self, wrapped, volume_api):
        self.wrapped = wrapped
        self._volume_api = volume_api

    def __getattr__(self, name):
        return getattr(self.wrapped, name)


class FaultInjectingDriver(_Wrapper):
    """A hypervisor that fails right after the hot-plug succeeded.

    The real driver plugs the disk; then this "hypervisor" raises, leaving
    the disk in the guest, as libvirt can when a hot-plug that timed out
    lands anyway. The attach flow must take it out again.
    """

    def attach_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        self.wrapped.attach_volume(ctxt, connection_info, instance,
                                   mountpoint, disk_bus=disk_bus,
                                   device_type=device_type)
        volume_id = connection_info.get("serial")
        if volume_id:
            _maybe_fail(DRIVER_ATTACH,
                        self._volume_api.get(ctxt, volume_id))


class FaultInjectingVolumeAPI(_Wrapper):
    """A Cinder whose ``attachment_complete`` fails for marked volumes."""

    def __init__(self, wrapped):
        super().__init__(wrapped, wrapped)

    def attachment_complete(self, ctxt, attachment_id):
        attachment = self.wrapped.attachment_get(ctxt, attachment_id)
        _maybe_fail(ATTACHMENT_COMPLETE,
                    self.wrapped.get(ctxt, attachment["volume_id"]))
        return self.wrapped.attachment_complete(ctxt, attachment_id)


def wrap(conf, driver, volume_api):
    """``(driver, volume_api)``, wrapped when fault injection is enabled."""
    if not enabled(conf):
        return driver, volume_api
    LOG.warning("[fault_injection] enabled: test-only faults fire for "
                "volumes named %s<point> (%s)", MARKER, ", ".join(POINTS))
    return (FaultInjectingDriver(driver, volume_api),
            FaultInjectingVolumeAPI(volume_api))
