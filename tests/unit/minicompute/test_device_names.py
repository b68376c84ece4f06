"""minicompute.virt.device_names: nova's libvirt naming rules."""

import pytest

from minicompute import exception
from minicompute.virt import device_names


def test_first_free_after_root():
    assert device_names.next_device_name(["/dev/vda"]) == "/dev/vdb"
    assert device_names.next_device_name(
        ["/dev/vda", "/dev/vdc"]) == "/dev/vdb"   # gaps are reused


def test_two_letter_names():
    used = ["vd" + chr(ord("a") + i) for i in range(26)]
    assert device_names.next_device_name(used) == "/dev/vdaa"
    assert device_names.generate_device_name("vd", 27) == "vdab"


def test_limit_counts_root():
    with pytest.raises(exception.TooManyDiskDevices):
        device_names.next_device_name(["/dev/vda", "/dev/vdb"], 2)


@pytest.mark.parametrize("device", ["/dev/vdb", "/dev/sdc", "/dev/xvdd"])
def test_valid_requested(device):
    assert device_names.validate_requested(device)


@pytest.mark.parametrize("device", ["vdb", "/dev/1", "/dev/vd!", ""])
def test_invalid_requested(device):
    with pytest.raises(exception.InvalidDevicePath):
        device_names.validate_requested(device)
