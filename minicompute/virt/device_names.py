"""Choosing the /dev/vdX name of a new disk, as nova's libvirt driver does.

Rules (as upstream's ``nova/virt/libvirt/blockinfo.py``):

* A requested name is only validated (``match_device``); libvirt ignores
  it, because the guest kernel names virtio disks in PCI order anyway.
  The stable handle in the guest is ``/dev/disk/by-id/virtio-<serial>``.
* The root disk is ``vda``; a new disk gets the first free name in the
  order vda, vdb, ... vdz, vdaa, ... not used by the instance's BDMs.
* ``[compute] max_disk_devices_to_attach`` caps the number of disks
  (root included); past it the reservation fails with TooManyDiskDevices.

Pure functions: the manager passes the names in use.
"""

import re
import string

from minicompute import exception

# nova/block_device.py _pref / match_device
_DEV_RE = re.compile(r"(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$")

# virtio disk names are unbounded in principle; stop at two letters
# (vdzz), more than any guest here will ever have.
_UNLIMITED = 26 + 26 * 26


def match_device(device):
    """Split ``/dev/vdb`` into ``('/dev/vd', 'b')``; None if malformed."""
    match = _DEV_RE.match(device or "")
    return match.groups() if match else None


def strip_dev(device):
    """``/dev/vdb`` -> ``vdb``."""
    return device[len("/dev/"):] if device and device.startswith("/dev/") \
        else device


def generate_device_name(prefix, index):
    """``('vd', 0)`` -> ``vda``; ``('vd', 26)`` -> ``vdaa``."""
    letters = ""
    index += 1
    while index > 0:
        index, rem = divmod(index - 1, 26)
        letters = string.ascii_lowercase[rem] + letters
    return prefix + letters


def validate_requested(device):
    """Check a user-supplied name.

    :returns: True when a (valid) name was supplied.
    :raises InvalidDevicePath: the name is malformed.
    """
    if device is None:
        return False
    if match_device(device) is None:
        raise exception.InvalidDevicePath(path=device)
    return True


def next_device_name(used, max_devices=-1, prefix="vd"):
    """The first free ``/dev/<prefix>X`` given the names in ``used``.

    :param used: device names in use (``/dev/vda`` or ``vda``), root
        included.
    :param max_devices: ``[compute] max_disk_devices_to_attach``.
    :raises TooManyDiskDevices:
    """
    taken = {strip_dev(name) for name in used if name}
    limit = _UNLIMITED if max_devices < 0 else max_devices
    if len(taken) >= limit:
        raise exception.TooManyDiskDevices(maximum=limit)
    for index in range(limit):
        name = generate_device_name(prefix, index)
        if name not in taken:
            return "/dev/" + name
    raise exception.TooManyDiskDevices(maximum=limit)
