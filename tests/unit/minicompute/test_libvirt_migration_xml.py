"""The destination XML of a live migration (minicompute.virt.libvirt.
migration): volumes swapped for the destination's disks by serial, paths
moved to the destination's instance directory."""

import xml.etree.ElementTree as ET

import pytest

from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import migration

SRC = "/var/lib/ministack/instances/u1"
DST = "/var/lib/ministack/hosts/compute2/instances/u1"


def _domain():
    volume = config.iscsi_disk("vdb", iqn="iqn.src", lun=1, host="10.42.0.1",
                               serial="vol-1", initiator_iqn="iqn.h1")
    ET.SubElement(volume, "address", type="pci", slot="0x07")
    return config.domain_xml(
        "instance-00000001", "u1", kernel=SRC + "/kernel",
        initrd=SRC + "/ramdisk", cmdline="console=ttyS0",
        root_disk=SRC + "/disk", console_log=SRC + "/console.log",
        disks=[volume])


def test_volume_disk_replaced_by_serial_keeping_its_address():
    new = config.iscsi_disk_xml("vdb", iqn="iqn.src", lun=1,
                                host="10.42.0.1", serial="vol-1",
                                initiator_iqn="iqn.h2")
    root = ET.fromstring(migration.updated_guest_xml(
        _domain(), {"vol-1": new}, SRC, DST))
    disks = root.findall("./devices/disk")
    vdb = [d for d in disks if d.find("target").get("dev") == "vdb"][0]
    assert vdb.find("source/initiator/iqn").get("name") == "iqn.h2"
    assert vdb.find("address").get("slot") == "0x07"
    assert len(disks) == 2


def test_paths_move_to_the_destination_directory():
    root = ET.fromstring(migration.updated_guest_xml(_domain(), {}, SRC,
                                                     DST))
    assert root.find("os/kernel").text == DST + "/kernel"
    assert root.find("os/initrd").text == DST + "/ramdisk"
    vda = root.find("./devices/disk/source")
    assert vda.get("file") == DST + "/disk"
    assert root.find("./devices/serial/log").get("file") == \
        DST + "/console.log"


def test_a_volume_the_guest_lacks_is_refused():
    with pytest.raises(ValueError):
        migration.updated_guest_xml(_domain(), {"vol-9": "<disk/>"}, SRC,
                                    DST)


def test_local_disk_targets_are_the_instance_files_only():
    assert migration.local_disk_targets(_domain(), SRC) == ["vda"]
