"""Volumes Cinder hands over as a local block device (``local`` type).

Used when Cinder gives the device path directly (``{"driver_volume_type":
"local", "data": {"device_path": ...}}``): there is nothing to connect on
the host, the guest gets a block disk on that path.
"""

from minicompute.virt.libvirt import config
from minicompute.virt.libvirt.volume import base


class LibvirtLocalVolumeDriver(base.LibvirtBaseVolumeDriver):

    def _disk(self, connection_info, target_dev, serial):
        return config.block_disk(target_dev,
                                 connection_info["data"]["device_path"],
                                 serial=serial)

    def source_key(self, connection_info):
        return connection_info["data"]["device_path"]
