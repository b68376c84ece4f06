"""What every libvirt volume driver shares (nova's volume/volume.py).

A volume driver knows one ``driver_volume_type`` of Cinder's
connection_info: how to connect it on the host (``connect_volume``), how
the guest's ``<disk>`` element looks (``get_config``), and how to undo the
connection (``disconnect_volume``). The libvirt driver picks one by type.

The ``<disk>`` elements come from the XML builders in
``minicompute.virt.libvirt.config``; this base adds what depends on
Cinder's answer rather than on the disk type: read-only access, and
``<shareable/>`` for multiattach volumes (several guests write the disk,
so libvirt must not lock it or cache it). The serial is the volume id,
shown in the guest as /sys/block/vdX/serial (first 20 characters).
"""

import xml.etree.ElementTree as ET


class LibvirtBaseVolumeDriver:
    """Base of the per-connection-type volume drivers."""

    def __init__(self, host):
        self.host = host

    def get_config(self, connection_info, disk_info):
        """The guest ``<disk>`` Element for ``disk_info['dev']``."""
        disk = self._disk(connection_info, disk_info["dev"],
                          connection_info.get("serial"))
        target = disk.find("target")
        if disk_info.get("bus"):
            target.set("bus", disk_info["bus"])
        if connection_info.get("data", {}).get("access_mode") == "ro":
            ET.SubElement(disk, "readonly")
        if connection_info.get("multiattach"):
            ET.SubElement(disk, "shareable")
        return disk

    def _disk(self, connection_info, target_dev, serial):
        raise NotImplementedError()

    def connect_volume(self, connection_info, instance):
        """Make the volume reachable on this host."""

    def disconnect_volume(self, connection_info, instance, still_used=False):
        """Undo connect_volume unless ``still_used`` by another guest."""

    def source_key(self, connection_info):
        """What identifies the host-side connection (to spot sharing)."""
        return None
