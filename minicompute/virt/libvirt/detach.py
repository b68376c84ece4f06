"""Taking a disk out of a guest: from the running guest, with retries,
then from its persistent definition (nova's ``_detach_with_retry``).

QEMU removes a disk only once the guest kernel let go of it, so a live
detach is a request: each attempt waits for libvirt's device-removed
event (``Host.expect_removal``) and asks again after a timeout
(``[libvirt] device_detach_attempts`` and ``device_detach_timeout``).
"""

from oslo_log import log as logging

from minicompute import exception
from minicompute.virt.libvirt import config
from ministack.trace.profiler import span

LOG = logging.getLogger(__name__)


class DiskDetacher:
    """Detaches disks from this host's guests (``host``: the driver's
    ``Host``, whose events say when a device is gone)."""

    def __init__(self, host, conf):
        self.host = host
        self.conf = conf

    def detach(self, guest, dev):
        """Detach ``dev`` from the live guest, then from its config.

        Live first: if the guest refuses, the persistent definition still
        matches what runs, and the volume (rolled back to in-use) is
        consistent everywhere.

        :raises DiskNotFound: neither the live guest nor its config has it.
        :raises DeviceDetachFailed: still attached after every attempt.
        """
        live = guest.get_disks() if guest.is_active() else {}
        persistent = guest.get_disks(inactive=True)
        if dev not in live and dev not in persistent:
            raise exception.DiskNotFound(location=dev)
        if dev in live:
            self._detach_live(guest, dev, live[dev])
        if dev in persistent:
            xml = config.to_xml(persistent[dev])
            try:
                guest.detach_device(xml, persistent=True, live=False)
            except exception.DeviceNotFound:
                pass

    def _detach_live(self, guest, dev, disk):
        attempts = self.conf.libvirt.device_detach_attempts
        timeout = self.conf.libvirt.device_detach_timeout
        alias_el = disk.find("alias")
        alias = alias_el.get("name") if alias_el is not None else None
        xml = config.to_xml(disk)
        for attempt in range(1, attempts + 1):
            waiter = self.host.expect_removal(guest.uuid, alias)
            try:
                LOG.debug("Detaching %s (%s) from %s, attempt %d/%d", dev,
                          alias, guest.name, attempt, attempts)
                try:
                    guest.detach_device(xml, persistent=False, live=True)
                except exception.DeviceNotFound:
                    return
                details = {"alias": alias, "attempt": attempt,
                           "timeout": timeout}
                with span("guest", "LIBRARY", "guest releases %s" % dev,
                          actor="guest", details=details) as sp:
                    result = waiter.wait(timeout)
                    if not result:
                        sp.set(error="the guest did not release %s "
                               "within %ss" % (dev, timeout))
            finally:
                self.host.forget_removal(guest.uuid, alias)
            if result or dev not in guest.get_disks():
                LOG.info("Device %s removed from %s after %d attempt(s)",
                         dev, guest.name, attempt)
                return
            LOG.warning("Guest %s did not release %s within %ss (attempt "
                        "%d/%d)", guest.name, dev, timeout, attempt,
                        attempts)
        raise exception.DeviceDetachFailed(
            device=dev, reason="the guest did not release it after %d "
            "attempts of %ss" % (attempts, timeout))
