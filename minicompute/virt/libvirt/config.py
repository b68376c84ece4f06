"""Libvirt XML for ministack guests, volumes and CHAP secrets.

Every document is built with :mod:`xml.etree.ElementTree`, never by string
formatting, so a volume id or a path can never break (or inject into) the
XML. Each ``*_xml`` function returns the document as text, ready for
``defineXML`` / ``createXML`` / ``attachDeviceFlags`` / ``secretDefineXML``;
the matching element builder (same name without ``_xml``) returns the
:class:`~xml.etree.ElementTree.Element` for callers that want to add to it.

What the guest looks like (``domain``):

* direct kernel boot (kernel + initrd + cmdline from the image record),
  no firmware disk boot, no NIC, no graphics, no USB;
* the root disk is ``vda`` on virtio, so the first attached volume is
  ``vdb``;
* a virtio-serial channel named ``org.qemu.guest_agent.0`` for qemu-ga;
* the serial console on a pty (``virsh console``) also logged to a file
  through virtlogd;
* machine type ``pc`` (i440fx) by default: its root bus has 31 ACPI
  hot-pluggable slots, so virtio disks hot-plug *and* hot-unplug without
  extra controllers. For ``q35`` we add empty ``pcie-root-port``
  controllers, one per future hot-plugged disk (as nova's
  ``num_pcie_ports``), because a q35 root complex cannot hot-plug.
"""

import xml.etree.ElementTree as ET

#: The virtio-serial port name qemu-ga listens on.
AGENT_CHANNEL_NAME = "org.qemu.guest_agent.0"

DEFAULT_MACHINE_TYPE = "pc"

#: Empty PCIe root ports added to q35 guests for hot-plug.
DEFAULT_PCIE_PORTS = 8


def to_xml(element):
    """Serialise ``element`` as indented text (no XML declaration)."""
    ET.indent(element)
    return ET.tostring(element, encoding="unicode")


def _sub(parent, tag, text=None, **attrib):
    """Append ``<tag **attrib>text</tag>`` to ``parent`` and return it.

    Attribute values that are None are left out.
    """
    child = ET.SubElement(parent, tag, {k: str(v) for k, v in attrib.items()
                                        if v is not None})
    if text is not None:
        child.text = str(text)
    return child


def is_q35(machine_type):
    """True for ``q35`` and versioned names such as ``pc-q35-7.2``."""
    return "q35" in (machine_type or "")


# --- the guest ---------------------------------------------------------------

def domain(name, uuid, *, kernel, initrd, cmdline, root_disk=None,
           root_disk_format="qcow2", memory_mib=128, vcpus=1,
           virt_type="qemu", machine_type=DEFAULT_MACHINE_TYPE,
           console_log=None, pcie_ports=DEFAULT_PCIE_PORTS, disks=()):
    """The ``<domain>`` of a direct-kernel-boot guest.

    :param kernel, initrd, cmdline: from the image record
        (:func:`ministack.images.get_image`).
    :param root_disk: path of the instance's root disk (usually a qcow2
        overlay over the image's disk); it becomes ``vda``. None for a
        volume-backed guest, whose ``vda`` is in ``disks``.
    :param disks: ``<disk>`` Elements of the volumes the guest is
        defined with (boot from volume: its root and data volumes).
    :param virt_type: ``kvm`` or ``qemu`` (TCG), libvirt's domain type.
    :param console_log: file the serial console is logged to, or None.
    :param pcie_ports: empty root ports for hot-plug (q35 only).
    """
    dom = ET.Element("domain", type=virt_type)
    _sub(dom, "name", name)
    _sub(dom, "uuid", uuid)
    _sub(dom, "memory", memory_mib, unit="MiB")
    _sub(dom, "vcpu", vcpus)

    os_ = _sub(dom, "os")
    _sub(os_, "type", "hvm", arch="x86_64", machine=machine_type)
    _sub(os_, "kernel", kernel)
    _sub(os_, "initrd", initrd)
    _sub(os_, "cmdline", cmdline)

    # ACPI is what makes PCI hot-unplug (i440fx) and `virsh shutdown`
    # (power button) reach the guest.
    features = _sub(dom, "features")
    _sub(features, "acpi")
    _sub(features, "apic")
    if virt_type == "kvm":
        _sub(dom, "cpu", mode="host-passthrough")
    _sub(dom, "clock", offset="utc")
    _sub(dom, "on_poweroff", "destroy")
    _sub(dom, "on_reboot", "restart")
    _sub(dom, "on_crash", "destroy")

    devices = _sub(dom, "devices")
    if root_disk is not None:
        devices.append(_file_disk(root_disk, "vda", root_disk_format))
    for disk in disks:
        devices.append(disk)
    if is_q35(machine_type):
        # Root ports need an explicit root complex to hang off (index 0).
        _sub(devices, "controller", type="pci", index=0, model="pcie-root")
        for _ in range(pcie_ports):
            _sub(devices, "controller", type="pci", model="pcie-root-port")
    # No USB controller and no balloon: nothing uses them and under TCG
    # every emulated device costs boot time.
    _sub(devices, "controller", type="usb", model="none")
    _sub(devices, "controller", type="virtio-serial", index=0)
    channel = _sub(devices, "channel", type="unix")
    # No path: libvirt picks one under /var/lib/libvirt/qemu/ and connects
    # its agent client to it.
    _sub(channel, "source", mode="bind")
    _sub(channel, "target", type="virtio", name=AGENT_CHANNEL_NAME)
    serial = _sub(devices, "serial", type="pty")
    if console_log:
        _sub(serial, "log", file=console_log, append="off")
    _sub(serial, "target", port=0)
    console = _sub(devices, "console", type="pty")
    _sub(console, "target", type="serial", port=0)
    _sub(devices, "memballoon", model="none")
    return dom


def domain_xml(name, uuid, **kwargs):
    """:func:`domain` as text."""
    return to_xml(domain(name, uuid, **kwargs))


def _file_disk(path, target_dev, disk_format):
    disk = ET.Element("disk", type="file", device="disk")
    _sub(disk, "driver", name="qemu", type=disk_format)
    _sub(disk, "source", file=path)
    _sub(disk, "target", dev=target_dev, bus="virtio")
    return disk


# --- volumes -----------------------------------------------------------------

def iscsi_disk(target_dev, *, iqn, lun, host, port=3260, serial=None,
               initiator_iqn=None, auth_username=None, secret_usage=None,
               secret_uuid=None):
    """A ``<disk type='network'>`` QEMU's libiscsi initiator connects.

    QEMU logs into the target itself, so the host needs no kernel
    initiator and the guest sees a plain virtio disk.

    :param target_dev: guest device name, ``vdb``...
    :param iqn, lun: the target and LUN (``<source name='IQN/LUN'>``).
    :param serial: the volume id; the guest shows the first 20 characters
        in ``/sys/block/vdX/serial`` (virtio-blk's limit).
    :param initiator_iqn: the initiator name QEMU presents, which the
        target's ACL must admit.
    :param auth_username: CHAP user; the password is in the libvirt secret
        named by ``secret_usage`` or ``secret_uuid`` (see
        :func:`iscsi_secret`).
    """
    disk = ET.Element("disk", type="network", device="disk")
    _sub(disk, "driver", name="qemu", type="raw", cache="none")
    source = _sub(disk, "source", protocol="iscsi", name="%s/%s" % (iqn, lun))
    _sub(source, "host", name=host, port=port)
    if initiator_iqn:
        initiator = _sub(source, "initiator")
        _sub(initiator, "iqn", name=initiator_iqn)
    if auth_username:
        if not (secret_usage or secret_uuid):
            raise ValueError("CHAP auth needs secret_usage or secret_uuid")
        auth = _sub(source, "auth", username=auth_username)
        _sub(auth, "secret", type="iscsi", usage=secret_usage,
             uuid=secret_uuid)
    _sub(disk, "target", dev=target_dev, bus="virtio")
    if serial:
        _sub(disk, "serial", serial)
    return disk


def iscsi_disk_xml(target_dev, **kwargs):
    """:func:`iscsi_disk` as text."""
    return to_xml(iscsi_disk(target_dev, **kwargs))


def block_disk(target_dev, path, *, serial=None):
    """A ``<disk type='block'>`` for a host block device (``/dev/...``),
    e.g. what os-brick's kernel initiator returns."""
    disk = ET.Element("disk", type="block", device="disk")
    _sub(disk, "driver", name="qemu", type="raw", cache="none", io="native")
    _sub(disk, "source", dev=path)
    _sub(disk, "target", dev=target_dev, bus="virtio")
    if serial:
        _sub(disk, "serial", serial)
    return disk


def block_disk_xml(target_dev, path, **kwargs):
    """:func:`block_disk` as text."""
    return to_xml(block_disk(target_dev, path, **kwargs))


# --- CHAP secrets ------------------------------------------------------------

def iscsi_secret(usage, *, uuid=None, description=None):
    """A private, persistent ``<secret>`` of usage type iscsi.

    Define it with ``conn.secretDefineXML(xml)`` and then store the CHAP
    password with ``secret.setValue(password.encode())``. Disks refer to it
    by ``usage`` (unique per libvirt host) or by ``uuid``.
    """
    secret = ET.Element("secret", ephemeral="no", private="yes")
    if uuid:
        _sub(secret, "uuid", uuid)
    if description:
        _sub(secret, "description", description)
    usage_el = _sub(secret, "usage", type="iscsi")
    _sub(usage_el, "target", usage)
    return secret


def iscsi_secret_xml(usage, **kwargs):
    """:func:`iscsi_secret` as text."""
    return to_xml(iscsi_secret(usage, **kwargs))


# --- reading back ------------------------------------------------------------

def disk_target_devs(xml_text):
    """The ``<target dev>`` of every disk in a domain's XML, in order.

    Useful with ``minicompute.virt.device_names`` to pick a free name, and
    to check that a detach really happened.
    """
    root = ET.fromstring(xml_text)
    return [t.get("dev") for t in root.findall("./devices/disk/target")]
