"""The destination's domain XML of a live migration (upstream's
``nova.virt.libvirt.migration.get_updated_guest_xml``).

The guest leaves with its source definition; what differs on the
destination is rewritten with the XML library before libvirt sends it
(``VIR_MIGRATE_PARAM_DEST_XML``):

* every volume ``<disk>``, matched by its ``<serial>`` (the volume id),
  is replaced by the ``<disk>`` the destination built from its own
  connection_info (its initiator's session, its CHAP secret);
* every path under the source's instance directory (the root overlay,
  the kernel and initrd, the console log) moves to the destination's
  instance directory: the hosts do not share one.
"""

import xml.etree.ElementTree as ET


def _serial(disk):
    serial = disk.find("serial")
    return serial.text if serial is not None else None


def _move_paths(element, source_dir, dest_dir):
    prefix = source_dir.rstrip("/") + "/"
    for node in element.iter():
        for key, value in node.attrib.items():
            if value.startswith(prefix):
                node.set(key, dest_dir.rstrip("/") + "/" + value[len(prefix):])
        if node.text and node.text.startswith(prefix):
            node.text = dest_dir.rstrip("/") + "/" + node.text[len(prefix):]


def updated_guest_xml(xml_text, volume_disks, source_dir, dest_dir):
    """The domain XML the destination defines.

    :param xml_text: the running domain's XML on the source.
    :param volume_disks: ``{serial: <disk> XML text}`` built on the
        destination.
    :param source_dir, dest_dir: the instance directories.
    :raises ValueError: a volume of ``volume_disks`` has no disk in the
        domain (the guest and the BDMs disagree: not migrated).
    """
    root = ET.fromstring(xml_text)
    devices = root.find("devices")
    missing = set(volume_disks)
    for index, disk in enumerate(list(devices)):
        if disk.tag != "disk":
            continue
        serial = _serial(disk)
        if serial in volume_disks:
            new = ET.fromstring(volume_disks[serial])
            # Keep the guest's PCI address and alias: the device must
            # stay where the guest kernel found it.
            for tag in ("address", "alias"):
                old = disk.find(tag)
                if old is not None and new.find(tag) is None:
                    new.append(old)
            devices.remove(disk)
            devices.insert(index, new)
            missing.discard(serial)
    if missing:
        raise ValueError("the domain has no disk for volume(s) %s"
                         % ", ".join(sorted(missing)))
    if source_dir != dest_dir:
        _move_paths(root, source_dir, dest_dir)
    return ET.tostring(root, encoding="unicode")


def local_disk_targets(xml_text, instance_dir):
    """The target devs of the domain's file disks in ``instance_dir``
    (its root overlay): what a block migration copies; volumes and other
    disks are left out."""
    prefix = instance_dir.rstrip("/") + "/"
    targets = []
    for disk in ET.fromstring(xml_text).findall("./devices/disk"):
        source = disk.find("source")
        target = disk.find("target")
        if source is not None and target is not None and \
                (source.get("file") or "").startswith(prefix):
            targets.append(target.get("dev"))
    return targets
