"""minicompute.virt.libvirt.config: the XML documents, checked by parsing."""

import xml.etree.ElementTree as ET

import pytest

from minicompute.virt.libvirt import config

IMAGE = {"kernel": "/img/vmlinuz", "initrd": "/img/initrd.img",
         "cmdline": "console=ttyS0 quiet panic=0"}


def domain(**kwargs):
    args = dict(kernel=IMAGE["kernel"], initrd=IMAGE["initrd"],
                cmdline=IMAGE["cmdline"], root_disk="/inst/disk")
    args.update(kwargs)
    return ET.fromstring(config.domain_xml("guest-1", "1234-uuid", **args))


def test_domain_is_a_direct_kernel_boot_guest():
    dom = domain(memory_mib=256, vcpus=2, console_log="/inst/console.log")
    assert dom.get("type") == "qemu"
    assert dom.findtext("name") == "guest-1"
    assert dom.findtext("uuid") == "1234-uuid"
    assert dom.find("memory").attrib == {"unit": "MiB"}
    assert dom.findtext("memory") == "256"
    assert dom.findtext("vcpu") == "2"
    os_ = dom.find("os")
    assert os_.find("type").attrib == {"arch": "x86_64", "machine": "pc"}
    assert os_.findtext("kernel") == "/img/vmlinuz"
    assert os_.findtext("initrd") == "/img/initrd.img"
    assert os_.findtext("cmdline") == IMAGE["cmdline"]
    assert dom.find("features/acpi") is not None
    assert dom.find("cpu") is None


def test_root_disk_is_vda_on_virtio():
    (disk,) = domain().findall("devices/disk")
    assert disk.attrib == {"type": "file", "device": "disk"}
    assert disk.find("driver").attrib == {"name": "qemu", "type": "qcow2"}
    assert disk.find("source").get("file") == "/inst/disk"
    assert disk.find("target").attrib == {"dev": "vda", "bus": "virtio"}


def test_guest_agent_channel_and_console():
    devices = domain(console_log="/inst/console.log").find("devices")
    channel = devices.find("channel")
    assert channel.get("type") == "unix"
    assert channel.find("target").attrib == {
        "type": "virtio", "name": "org.qemu.guest_agent.0"}
    assert devices.find("controller[@type='virtio-serial']") is not None
    serial = devices.find("serial")
    assert serial.get("type") == "pty"
    assert serial.find("log").attrib == {"file": "/inst/console.log",
                                         "append": "off"}
    assert devices.find("console/target").get("type") == "serial"
    assert devices.find("controller[@type='usb']").get("model") == "none"


def test_no_console_log_means_no_log_element():
    assert domain().find("devices/serial/log") is None


def test_kvm_passes_the_host_cpu_through():
    dom = domain(virt_type="kvm")
    assert dom.get("type") == "kvm"
    assert dom.find("cpu").get("mode") == "host-passthrough"


def test_q35_gets_root_ports_for_hotplug():
    dom = domain(machine_type="q35", pcie_ports=3)
    pci = dom.findall("devices/controller[@type='pci']")
    assert [c.get("model") for c in pci] == ["pcie-root"] + \
        ["pcie-root-port"] * 3
    assert pci[0].get("index") == "0"
    assert domain().findall("devices/controller[@type='pci']") == []


def test_values_are_escaped_not_formatted():
    """Quotes and markup in values survive: ElementTree, not strings."""
    cmdline = 'console=ttyS0 x="<a & b>"'
    assert domain(cmdline=cmdline).findtext("os/cmdline") == cmdline


def test_iscsi_disk_with_chap_and_initiator():
    disk = ET.fromstring(config.iscsi_disk_xml(
        "vdb", iqn="iqn.2010-10.org.openstack:volume-1", lun=1,
        host="127.0.0.1", port=3260, serial="vol-1",
        initiator_iqn="iqn.1994-05.org.x:h", auth_username="u",
        secret_usage="ministack-chap-1"))
    assert disk.attrib == {"type": "network", "device": "disk"}
    assert disk.find("driver").attrib == {"name": "qemu", "type": "raw",
                                          "cache": "none"}
    source = disk.find("source")
    assert source.attrib == {"protocol": "iscsi",
                             "name": "iqn.2010-10.org.openstack:volume-1/1"}
    assert source.find("host").attrib == {"name": "127.0.0.1",
                                          "port": "3260"}
    assert source.find("initiator/iqn").get("name") == "iqn.1994-05.org.x:h"
    assert source.find("auth").get("username") == "u"
    assert source.find("auth/secret").attrib == {"type": "iscsi",
                                                 "usage": "ministack-chap-1"}
    assert disk.find("target").attrib == {"dev": "vdb", "bus": "virtio"}
    assert disk.findtext("serial") == "vol-1"


def test_iscsi_disk_without_auth():
    disk = config.iscsi_disk("vdc", iqn="iqn.x:y", lun=0, host="h")
    assert disk.find("source/auth") is None
    assert disk.find("source/initiator") is None
    assert disk.find("serial") is None
    assert disk.find("source/host").get("port") == "3260"


def test_iscsi_chap_needs_a_secret():
    with pytest.raises(ValueError):
        config.iscsi_disk("vdb", iqn="iqn.x:y", lun=1, host="h",
                          auth_username="u")


def test_block_disk():
    disk = ET.fromstring(config.block_disk_xml("vdb", "/dev/loop3",
                                               serial="vol-2"))
    assert disk.attrib == {"type": "block", "device": "disk"}
    assert disk.find("source").get("dev") == "/dev/loop3"
    assert disk.find("driver").attrib == {"name": "qemu", "type": "raw",
                                          "cache": "none", "io": "native"}
    assert disk.find("target").attrib == {"dev": "vdb", "bus": "virtio"}
    assert disk.findtext("serial") == "vol-2"


def test_iscsi_secret():
    secret = ET.fromstring(config.iscsi_secret_xml(
        "ministack-chap-1", uuid="5a5a", description="CHAP of volume 1"))
    assert secret.attrib == {"ephemeral": "no", "private": "yes"}
    assert secret.findtext("uuid") == "5a5a"
    assert secret.findtext("description") == "CHAP of volume 1"
    assert secret.find("usage").get("type") == "iscsi"
    assert secret.findtext("usage/target") == "ministack-chap-1"
    assert config.iscsi_secret("u").find("uuid") is None


def test_disk_target_devs():
    dom = config.domain("g", "u", **IMAGE, root_disk="/d")
    dom.find("devices").append(config.iscsi_disk("vdb", iqn="i", lun=1,
                                                 host="h"))
    assert config.disk_target_devs(config.to_xml(dom)) == ["vda", "vdb"]
