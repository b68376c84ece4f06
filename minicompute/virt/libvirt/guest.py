"""A thin wrapper of one libvirt domain (nova's virt/libvirt/guest.py).

One of the two modules that import ``libvirt``. Each method is a few lines
that name the libvirt call and translate its errors, so the driver reads
as intent ("attach this device live and persistently") rather than flags.
"""

import xml.etree.ElementTree as ET

import libvirt

from minicompute import exception
from minicompute import power_state
from ministack.trace.profiler import span

# virDomainState -> nova power state
_POWER_STATES = {
    libvirt.VIR_DOMAIN_NOSTATE: power_state.NOSTATE,
    libvirt.VIR_DOMAIN_RUNNING: power_state.RUNNING,
    libvirt.VIR_DOMAIN_BLOCKED: power_state.RUNNING,
    libvirt.VIR_DOMAIN_PAUSED: power_state.PAUSED,
    libvirt.VIR_DOMAIN_SHUTDOWN: power_state.SHUTDOWN,
    libvirt.VIR_DOMAIN_SHUTOFF: power_state.SHUTDOWN,
    libvirt.VIR_DOMAIN_CRASHED: power_state.CRASHED,
    libvirt.VIR_DOMAIN_PMSUSPENDED: power_state.SUSPENDED,
}


def _flags(persistent, live):
    flags = 0
    if persistent:
        flags |= libvirt.VIR_DOMAIN_AFFECT_CONFIG
    if live:
        flags |= libvirt.VIR_DOMAIN_AFFECT_LIVE
    return flags


class Guest:
    """One domain: power, XML and device hot-plug."""

    def __init__(self, domain):
        self._domain = domain

    @property
    def name(self):
        return self._domain.name()

    @property
    def uuid(self):
        return self._domain.UUIDString()

    @property
    def domain(self):
        """The raw virDomain, for the guest-agent helper."""
        return self._domain

    def _call(self, what, func, *args):
        try:
            return func(*args)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                raise exception.DomainNotFound(name=self.name) from exc
            raise exception.InternalError(
                err="%s of %s failed: %s" % (what, self.name,
                                             exc.get_error_message()))

    # -- power -

    def launch(self):
        """Start the defined domain."""
        self._call("start", self._domain.create)

    def is_active(self):
        return bool(self._domain.isActive())

    def poweroff(self):
        """Pull the plug (virDomainDestroy); a stopped domain is fine."""
        if self.is_active():
            self._call("power off", self._domain.destroy)

    def shutdown(self):
        """Press the ACPI power button; the guest decides what to do."""
        self._call("shutdown", self._domain.shutdownFlags,
                   libvirt.VIR_DOMAIN_SHUTDOWN_ACPI_POWER_BTN)

    def pause(self):
        """Stop the vCPUs (virDomainSuspend)."""
        self._call("suspend", self._domain.suspend)

    def resume(self):
        """Run a paused domain again (virDomainResume); others are left."""
        if self.get_power_state() == power_state.PAUSED:
            self._call("resume", self._domain.resume)

    def save_memory_state(self):
        """Save the memory to libvirt's managed save image and stop the
        domain (virDomainManagedSave); the next start restores it."""
        self._call("managed save", self._domain.managedSave, 0)

    def has_managed_save(self):
        """Whether a managed save image waits for the next start."""
        return bool(self._call("managed save query",
                               self._domain.hasManagedSaveImage, 0))

    def discard_saved_memory(self):
        """Remove the managed save image, if any: the next start boots."""
        if self.has_managed_save():
            self._call("managed save removal",
                       self._domain.managedSaveRemove, 0)

    def get_power_state(self):
        state = self._call("state query", self._domain.info)[0]
        return _POWER_STATES.get(state, power_state.NOSTATE)

    def undefine(self):
        """Remove the persistent definition (and any NVRAM and managed
        save image: a suspended guest's)."""
        flags = (libvirt.VIR_DOMAIN_UNDEFINE_NVRAM |
                 libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
        try:
            self._domain.undefineFlags(flags)
        except libvirt.libvirtError:
            self._call("undefine", self._domain.undefine)

    # -- XML and devices -

    def get_xml_desc(self, inactive=False):
        flags = libvirt.VIR_DOMAIN_XML_INACTIVE if inactive else 0
        return self._call("XML dump", self._domain.XMLDesc, flags)

    def get_disks(self, inactive=False):
        """The domain's disks as ``{target_dev: <disk> Element}``."""
        root = ET.fromstring(self.get_xml_desc(inactive=inactive))
        disks = {}
        for disk in root.findall("./devices/disk"):
            target = disk.find("target")
            if target is not None:
                disks[target.get("dev")] = disk
        return disks

    def attach_device(self, xml, persistent=True, live=True):
        """Hot-plug a device into the running guest and/or its config."""
        with span("libvirt", "LIBRARY", "virDomainAttachDeviceFlags",
                  actor="libvirt", details=lambda: {
                      "domain": self.name, "persistent": persistent,
                      "live": live, "xml": xml}):
            self._call("device attach", self._domain.attachDeviceFlags,
                       xml, _flags(persistent, live))

    def detach_device(self, xml, persistent=True, live=True):
        """Ask for a device's removal (live removal is asynchronous)."""
        try:
            with span("libvirt", "LIBRARY", "virDomainDetachDeviceFlags",
                      actor="libvirt", details=lambda: {
                          "domain": self.name, "persistent": persistent,
                          "live": live, "xml": xml}):
                self._domain.detachDeviceFlags(xml,
                                               _flags(persistent, live))
        except libvirt.libvirtError as exc:
            code = exc.get_error_code()
            if code in (libvirt.VIR_ERR_DEVICE_MISSING,
                        libvirt.VIR_ERR_OPERATION_FAILED) and \
                    "not found" in (exc.get_error_message() or "").lower():
                raise exception.DeviceNotFound(device=self.name)
            if code == libvirt.VIR_ERR_DEVICE_MISSING:
                raise exception.DeviceNotFound(device=self.name)
            raise exception.DeviceDetachFailed(
                device=self.name, reason=exc.get_error_message())

    def resize_disk(self, target_dev, new_size):
        """Grow disk ``target_dev`` (``vdb``) to ``new_size`` bytes, live
        (virDomainBlockResize, nova's ``BlockDevice.resize``).

        QEMU re-reads a network disk's LUN capacity on ``block_resize``
        and refuses a size the LUN does not report yet ("Cannot grow
        iSCSI devices"); virtio-blk then tells the guest kernel. A guest
        that is not running has nothing to resize: its next boot reads
        the LUN's size.

        :returns: True when the running guest was resized.
        :raises DiskNotFound: the guest has no such disk.
        :raises InternalError: libvirt (or QEMU) refused.
        """
        if self.get_power_state() not in (power_state.RUNNING,
                                          power_state.PAUSED):
            return False
        if target_dev not in self.get_disks():
            raise exception.DiskNotFound(location=target_dev)
        with span("libvirt", "LIBRARY", "virDomainBlockResize",
                  actor="libvirt", details=lambda: {
                      "domain": self.name, "disk": target_dev,
                      "bytes": new_size}):
            self._call("block resize of %s" % target_dev,
                       self._domain.blockResize, target_dev, int(new_size),
                       libvirt.VIR_DOMAIN_BLOCK_RESIZE_BYTES)
        return True
