"""Pause and suspend of a libvirt guest, as upstream's libvirt driver.

Pause stops the vCPUs (``virDomainSuspend``) and unpause runs them
again; the QEMU process, its memory and its disks stay as they are.
Suspend saves the memory to libvirt's managed save image and stops the
domain (``virDomainManagedSave``, upstream's ``save_memory_state``);
resume starts the domain, which libvirt restores from that image, so the
guest runs on where it stopped. The disks of the domain's definition,
the volumes among them, are neither unplugged nor disconnected on the
host: the restored QEMU opens them again as they are (upstream rebuilds
the same XML from the BDMs and re-connects them, which finds the
connections in place). Mixed into :class:`.driver.LibvirtDriver`.
"""

from oslo_log import log as logging

from minicompute.virt.libvirt import guest_agent

LOG = logging.getLogger(__name__)


class PauseSuspendMixin:
    """``unpause``, ``suspend`` and ``resume`` of the driver contract
    (``pause`` is the driver's own: ``ministack-fault`` uses it too)."""

    def unpause(self, instance):
        self.host.get_guest(instance["name"]).resume()

    def suspend(self, ctxt, instance):
        self.host.get_guest(instance["name"]).save_memory_state()

    def resume(self, ctxt, instance):
        """Restore the saved guest. Without a saved image (removed by
        hand) the guest boots afresh, and is waited for as a start is."""
        guest = self.host.get_guest(instance["name"])
        if guest.is_active():
            return
        saved = guest.has_managed_save()
        guest.launch()
        if not saved:
            LOG.warning("Guest %s had no saved memory: booted afresh",
                        instance["name"])
            guest_agent.wait_for_agent(
                guest.domain, timeout=self.conf.compute.build_timeout)
