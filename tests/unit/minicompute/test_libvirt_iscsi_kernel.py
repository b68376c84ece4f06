"""LibvirtISCSIVolumeDriver, the kernel-initiator path, with os-brick's fake.

The lab has no kernel iSCSI initiator (no open-iscsi, no device-mapper), so
it runs the QEMU-initiator driver; the kernel path, upstream's, is covered
here instead. os-brick's own ``FakeConnector`` stands in for the
``ISCSIConnector`` the driver builds (as nova's unit tests replace the
connector, never the driver): it returns the fixed device path
``/dev/vdFAKE`` and does nothing on disconnect. A subclass records what the
driver hands it and can fail with os-brick's own exceptions.
"""

import copy
import xml.etree.ElementTree as ET

from os_brick import exception as brick_exception
from os_brick.initiator import connector as brick_connector
from os_brick.initiator.connectors import fake as brick_fake
from os_brick.initiator.connectors import iscsi as brick_iscsi
import pytest

from minicompute.virt.libvirt.volume import iscsi

SECRET = "chap-password-not-in-xml"

CONNECTION_INFO = {
    "driver_volume_type": "iscsi", "serial": "7d4c5a0e-vol",
    "data": {"target_discovered": False,
             "target_iqn": "iqn.2010-10.org.openstack:volume-7d4c5a0e",
             "target_portal": "192.0.2.10:3260", "target_lun": 1,
             "volume_id": "7d4c5a0e-vol",
             "auth_method": "CHAP", "auth_username": "chapuser",
             "auth_password": SECRET, "access_mode": "rw",
             "encrypted": False}}


class RecordingConnector(brick_fake.FakeConnector):
    """os-brick's FakeConnector, recording its calls; ``fail`` makes the
    next connect/disconnect raise that os-brick exception instead."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []
        self.fail = None

    def connect_volume(self, connection_properties):
        self.calls.append(("connect", copy.deepcopy(connection_properties)))
        if self.fail:
            raise self.fail
        return super().connect_volume(connection_properties)

    def disconnect_volume(self, connection_properties, device_info,
                          force=False, ignore_errors=False):
        self.calls.append(("disconnect", copy.deepcopy(connection_properties),
                           device_info))
        if self.fail:
            raise self.fail
        return super().disconnect_volume(connection_properties, device_info,
                                         force=force,
                                         ignore_errors=ignore_errors)


@pytest.fixture
def factory_calls(monkeypatch):
    """Replace os-brick's connector factory: the driver gets a
    RecordingConnector; the factory's arguments are kept."""
    calls = []

    def factory(protocol, root_helper, *args, **kwargs):
        calls.append((protocol, root_helper, kwargs))
        return RecordingConnector(root_helper)

    monkeypatch.setattr(brick_connector.InitiatorConnector, "factory",
                        staticmethod(factory))
    return calls


@pytest.fixture
def info():
    return copy.deepcopy(CONNECTION_INFO)


def test_driver_builds_os_bricks_iscsi_connector():
    # Unpatched: the real factory gives os-brick's ISCSIConnector, single
    # path (building it runs no command).
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    assert isinstance(drv.connector, brick_iscsi.ISCSIConnector)
    assert drv.connector.use_multipath is False


def test_connect_hands_chap_data_to_os_brick(factory_calls, info):
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    assert factory_calls == [("ISCSI", None, {"use_multipath": False})]
    drv.connect_volume(info, {"uuid": "inst-1"})
    # os-brick got Cinder's connection data, CHAP credentials included
    (call,) = drv.connector.calls
    assert call == ("connect", CONNECTION_INFO["data"])
    # and its device path is kept in connection_info (saved in the BDM,
    # used by get_config and by the disconnect)
    assert info["data"]["device_path"] == brick_fake.FakeConnector.fake_path


def test_disk_config_is_a_block_disk_on_the_device_path(factory_calls, info):
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    drv.connect_volume(info, {"uuid": "inst-1"})
    disk = drv.get_config(info, {"dev": "vdb", "bus": "virtio"})
    assert disk.tag == "disk"
    assert disk.get("type") == "block"
    assert disk.get("device") == "disk"
    assert disk.find("source").attrib == {
        "dev": brick_fake.FakeConnector.fake_path}
    assert disk.find("target").attrib == {"dev": "vdb", "bus": "virtio"}
    assert disk.find("serial").text == "7d4c5a0e-vol"
    assert disk.find("readonly") is None
    assert disk.find("shareable") is None
    # the kernel logged in: no CHAP, no network source, no secret in XML
    assert disk.find("source/host") is None
    assert disk.find("auth") is None
    assert SECRET not in ET.tostring(disk, encoding="unicode")
    assert drv.source_key(info) == brick_fake.FakeConnector.fake_path


def test_disk_config_read_only_and_multiattach(factory_calls, info):
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    info["data"]["access_mode"] = "ro"
    info["multiattach"] = True
    drv.connect_volume(info, {"uuid": "inst-1"})
    disk = drv.get_config(info, {"dev": "vdc"})
    assert disk.find("source").get("dev") == brick_fake.FakeConnector.fake_path
    assert disk.find("readonly") is not None
    assert disk.find("shareable") is not None


def test_disconnect_hands_the_same_data_to_os_brick(factory_calls, info):
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    drv.connect_volume(info, {"uuid": "inst-1"})
    drv.disconnect_volume(info, {"uuid": "inst-1"})
    assert drv.connector.calls[1] == ("disconnect", info["data"], None)
    assert drv.connector.calls[1][1]["auth_password"] == SECRET


def test_disconnect_keeps_a_session_another_guest_uses(factory_calls, info):
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    drv.connect_volume(info, {"uuid": "inst-1"})
    drv.disconnect_volume(info, {"uuid": "inst-1"}, still_used=True)
    assert [c[0] for c in drv.connector.calls] == ["connect"]


@pytest.mark.parametrize("error", [
    brick_exception.TargetPortalNotFound(target_portal="192.0.2.10:3260"),
    brick_exception.VolumeDeviceNotFound(device="/dev/sdz"),
    brick_exception.BrickException("login failed"),
])
def test_connect_error_propagates_and_sets_no_device(factory_calls, info,
                                                     error):
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    drv.connector.fail = error
    with pytest.raises(type(error)) as raised:
        drv.connect_volume(info, {"uuid": "inst-1"})
    assert raised.value is error
    # no half-made connection recorded: the caller's rollback sees none
    assert "device_path" not in info["data"]
    assert drv.source_key(info) is None


def test_disconnect_error_propagates(factory_calls, info):
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    drv.connect_volume(info, {"uuid": "inst-1"})
    error = brick_exception.VolumeDeviceNotFound(device="/dev/vdFAKE")
    drv.connector.fail = error
    with pytest.raises(brick_exception.VolumeDeviceNotFound) as raised:
        drv.disconnect_volume(info, {"uuid": "inst-1"})
    assert raised.value is error
    # the device path stays: a retry disconnects the same device
    assert info["data"]["device_path"] == brick_fake.FakeConnector.fake_path


def test_hops_are_os_bricks_connect_and_disconnect():
    # The course and the phases match the words connect_volume and
    # disconnect_volume; the lane is os-brick's.
    assert iscsi.CONNECT_HOP == "connect_volume (os-brick iSCSI)"
    assert iscsi.DISCONNECT_HOP == "disconnect_volume (os-brick iSCSI)"


def test_by_path_is_udevs_name_of_the_lun(info):
    assert iscsi.by_path(info["data"]) == (
        "/dev/disk/by-path/ip-192.0.2.10:3260-iscsi-"
        "iqn.2010-10.org.openstack:volume-7d4c5a0e-lun-1")


def test_device_path_is_the_by_path_link_when_udev_makes_it(
        factory_calls, info, tmp_path, monkeypatch):
    device = tmp_path / "sdb"
    device.write_text("")
    link = tmp_path / "by-path-link"
    link.symlink_to(device)
    control = tmp_path / "control"
    control.write_text("")
    monkeypatch.setattr(iscsi, "UDEV_CONTROL", str(control))
    monkeypatch.setattr(iscsi, "by_path", lambda data: str(link))
    drv = iscsi.LibvirtISCSIVolumeDriver(host=None)
    drv.connector.fake_path = str(device)
    drv.connect_volume(info, {"uuid": "inst-1"})
    assert info["data"]["device_path"] == str(link)
    assert drv.get_config(info, {"dev": "vdb"}).find("source").get("dev") \
        == str(link)


def test_device_path_is_os_bricks_when_the_link_is_another_device(
        tmp_path, monkeypatch, info):
    other = tmp_path / "sdc"
    other.write_text("")
    link = tmp_path / "by-path-link"
    link.symlink_to(other)
    control = tmp_path / "control"
    control.write_text("")
    monkeypatch.setattr(iscsi, "UDEV_CONTROL", str(control))
    monkeypatch.setattr(iscsi, "by_path", lambda data: str(link))
    assert iscsi._stable_path(info["data"], str(tmp_path / "sdb")) == \
        str(tmp_path / "sdb")


def test_device_path_without_udev_does_not_wait(monkeypatch, info):
    monkeypatch.setattr(iscsi, "UDEV_CONTROL", "/nonexistent/udev/control")
    slept = []
    assert iscsi._stable_path(info["data"], "/dev/sdb",
                              sleep=slept.append) == "/dev/sdb"
    assert slept == []


def test_device_path_falls_back_after_waiting_for_udev(
        tmp_path, monkeypatch, info):
    control = tmp_path / "control"
    control.write_text("")
    monkeypatch.setattr(iscsi, "UDEV_CONTROL", str(control))
    monkeypatch.setattr(iscsi, "by_path",
                        lambda data: str(tmp_path / "never"))
    slept = []
    assert iscsi._stable_path(info["data"], "/dev/sdb", wait=0.2,
                              sleep=slept.append) == "/dev/sdb"


def test_same_source_matches_a_block_device_by_either_name(tmp_path):
    device = tmp_path / "sdb"
    device.write_text("")
    link = tmp_path / "by-path-link"
    link.symlink_to(device)
    by_link = ET.Element("source", dev=str(link))
    by_name = ET.Element("source", dev=str(device))
    assert iscsi.same_source(str(device), by_link)
    assert iscsi.same_source(str(link), by_name)
    assert iscsi.same_source(str(link), by_link)
    assert not iscsi.same_source(str(tmp_path / "sdc"), by_link)
    network = ET.Element("source", protocol="iscsi", name="iqn.x/1")
    assert iscsi.same_source("iqn.x/1", network)
    assert not iscsi.same_source("iqn.x/2", network)
