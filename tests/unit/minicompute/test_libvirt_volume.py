"""The libvirt volume drivers' disk XML (no libvirt connection needed)."""

import xml.etree.ElementTree as ET

from minicompute.virt.libvirt import initiator
from minicompute.virt.libvirt.volume import iscsi
from minicompute.virt.libvirt.volume import local

CONNECTION_INFO = {
    "driver_volume_type": "iscsi", "serial": "vol-1", "multiattach": True,
    "data": {"target_iqn": "iqn.2010-10.org.openstack:volume-1",
             "target_portal": "127.0.0.1:3260", "target_lun": 1,
             "auth_method": "CHAP", "auth_username": "u",
             "auth_password": "secret", "access_mode": "rw"}}


class FakeHost:
    def __init__(self):
        self.secrets = {}

    def create_secret(self, usage_type, usage_id, value):
        self.secrets[usage_id] = value

    def delete_secret(self, usage_type, usage_id):
        self.secrets.pop(usage_id, None)


def test_qemu_iscsi_disk_uses_secret_and_initiator():
    host = FakeHost()
    drv = iscsi.LibvirtNetISCSIVolumeDriver(host, "iqn.2004-10.org.x:h")
    drv.connect_volume(CONNECTION_INFO, {"uuid": "i"})
    disk = drv.get_config(CONNECTION_INFO, {"dev": "vdb", "bus": "virtio"})
    xml = ET.tostring(disk, encoding="unicode")
    assert "secret" not in xml.replace("<secret", "")  # no password
    source = disk.find("source")
    assert source.get("name") == "iqn.2010-10.org.openstack:volume-1/1"
    assert source.find("host").attrib == {"name": "127.0.0.1",
                                          "port": "3260"}
    assert source.find("initiator/iqn").get("name") == "iqn.2004-10.org.x:h"
    usage = source.find("auth/secret").get("usage")
    assert host.secrets[usage] == "secret"
    assert disk.find("serial").text == "vol-1"
    assert disk.find("shareable") is not None
    drv.disconnect_volume(CONNECTION_INFO, {"uuid": "i"}, still_used=True)
    assert usage in host.secrets
    drv.disconnect_volume(CONNECTION_INFO, {"uuid": "i"})
    assert host.secrets == {}


def test_local_disk_is_block_device():
    drv = local.LibvirtLocalVolumeDriver(FakeHost())
    info = {"driver_volume_type": "local", "serial": "v",
            "data": {"device_path": "/dev/loop7", "access_mode": "ro"}}
    disk = drv.get_config(info, {"dev": "vdc"})
    assert disk.get("type") == "block"
    assert disk.find("source").get("dev") == "/dev/loop7"
    assert disk.find("target").get("dev") == "vdc"
    assert disk.find("readonly") is not None


def test_initiator_is_generated_once(tmp_path):
    missing = str(tmp_path / "none")
    first = initiator.get_initiator_iqn(str(tmp_path), missing)
    assert first.startswith("iqn.2004-10.org.ministack:")
    assert initiator.get_initiator_iqn(str(tmp_path), missing) == first
    open_iscsi = tmp_path / "initiatorname.iscsi.sys"
    open_iscsi.write_text("InitiatorName=iqn.1993-08.org.debian:01:ab\n")
    assert initiator.get_initiator_iqn(str(tmp_path), str(open_iscsi)) == \
        "iqn.1993-08.org.debian:01:ab"
