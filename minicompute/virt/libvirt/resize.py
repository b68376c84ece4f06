"""Telling a running guest that one of its volumes grew (nova's libvirt
``extend_volume``): ``virDomainBlockResize`` of the disk, in bytes.

The guest's volumes are network disks here (QEMU's own iSCSI initiator,
no host block device to rescan), like nova's ``LibvirtNetVolumeDriver``,
whose ``extend_volume`` has nothing to do on the host: QEMU re-reads the
LUN's capacity on ``block_resize`` and grows the disk to exactly the
size asked (a size the LUN does not report yet is refused, "Cannot grow
iSCSI devices"). virtio-blk then tells the guest kernel, which shows the
new size (``lsblk``). With the kernel initiator (a host block device)
os-brick's ``extend_volume`` would rescan the device first
(``volume/iscsi.py``).
"""

import libvirt

from minicompute import exception
from minicompute import power_state
from ministack.trace.profiler import span


def resize_disk(guest, target_dev, new_size):
    """Grow disk ``target_dev`` (``vdb``) of ``guest`` to ``new_size``
    bytes, live. A guest that is not running has nothing to resize: the
    next boot reads the LUN's size.

    :returns: True when the running guest was resized.
    :raises DiskNotFound: the guest has no such disk.
    :raises InternalError: libvirt (or QEMU) refused.
    """
    if guest.get_power_state() not in (power_state.RUNNING,
                                       power_state.PAUSED):
        return False
    if target_dev not in guest.get_disks():
        raise exception.DiskNotFound(location=target_dev)
    with span("libvirt", "LIBRARY", "virDomainBlockResize",
              actor="libvirt", details=lambda: {
                  "domain": guest.name, "disk": target_dev,
                  "bytes": new_size}):
        guest._call("block resize of %s" % target_dev,
                    guest.domain.blockResize, target_dev, int(new_size),
                    libvirt.VIR_DOMAIN_BLOCK_RESIZE_BYTES)
    return True


class ResizeMixin:
    """``extend_volume`` of the libvirt driver (needs its ``host``)."""

    def extend_volume(self, ctxt, connection_info, instance, new_size,
                      mountpoint):
        """``virDomainBlockResize`` of the volume's network disk (nova's
        net volume driver has nothing to do on the host)."""
        resize_disk(self.host.get_guest(instance["name"]),
                    mountpoint.rpartition("/")[2], new_size)
