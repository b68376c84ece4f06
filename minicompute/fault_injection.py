"""Test-only fault-injection points of minicompute (OFF by default).

Two of the seed's recovery paths start with a failure that cannot be made
from outside the process at a precise moment: the hypervisor failing right
*after* Cinder mapped the volume and the disk went into the guest, and
``attachment_complete`` failing after the disk is wired. Everything else
(a guest refusing an unplug, a paused or killed compute, a stopped
minicinder/tgtd/libvirtd/RabbitMQ) is made for real by the tests.

A point fires only when ``[fault_injection] enabled`` is true (its help
says it is for tests) *and* the volume's display name contains
``inject-fault-<point>``, so one test daemon can run normal and faulty
attaches side by side, and a production config can never trip it by
accident: the option is false unless someone sets it.
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


def should_fail(conf, point, volume):
    """Whether ``point`` fires for ``volume`` (a Cinder volume dict)."""
    group = getattr(conf, "fault_injection", None)
    if group is None or not group.enabled:
        return False
    name = (volume or {}).get("name") or (volume or {}).get(
        "display_name") or ""
    return (MARKER + point) in name


def maybe_fail(conf, point, volume):
    """Raise :class:`InjectedFault` if ``point`` fires for ``volume``."""
    if should_fail(conf, point, volume):
        LOG.warning("Fault injection: failing %s for volume %s", point,
                    volume.get("id"))
        raise InjectedFault(point=point)
