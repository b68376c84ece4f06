"""reboot_instance and get_console_output: the manager over fake:/ RPC,
the libvirt reboot sequence and the console log reader."""

import pytest

from minicompute import exception
from minicompute import utils
from minicompute.db import api as db_api
from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import console
from minicompute.virt.libvirt import reboot
from tests.unit.minicompute.manager_flow import action_events

# ``stack`` (a ComputeService on fake:/ with the fake driver) and
# ``server`` (one ACTIVE server on it) come from conftest.


@pytest.mark.parametrize("kind", ["SOFT", "HARD"])
def test_reboot_instance(ctxt, stack, server, kind):
    _svc, client, driver, _ = stack
    db_api.instance_update(ctxt, server["uuid"], {
        "task_state": "rebooting" if kind == "SOFT" else "rebooting_hard"})
    db_api.action_start(ctxt, server["uuid"], "reboot")
    client.reboot_instance(ctxt, server, kind)
    assert db_api.instance_get(ctxt, server["uuid"]).task_state is None
    row = db_api.instance_get(ctxt, server["uuid"])
    assert (row.vm_state, row.power_state) == ("active", 1)
    assert ("reboot", server["uuid"], kind) in driver.calls
    # The event is finished after the instance is saved (and before the
    # cast, sent as a call, returns).
    assert ("compute_reboot_instance", "Success") in [
        (e.event, e.result) for e in action_events(ctxt, server)]


def test_failed_reboot_leaves_error_with_the_reason(ctxt, stack, server,
                                                    monkeypatch):
    svc, client, driver, _ = stack

    def boom(ctxt, instance, reboot_type):
        raise exception.InternalError(err="domain would not start")
    monkeypatch.setattr(driver, "reboot", boom)
    db_api.action_start(ctxt, server["uuid"], "reboot")
    client.reboot_instance(ctxt, server, "HARD")
    assert db_api.instance_get(ctxt, server["uuid"]).vm_state == "error"
    row = db_api.instance_get(ctxt, server["uuid"])
    assert row.task_state is None
    assert "domain would not start" in row.fault


def test_console_output_over_rpc(ctxt, stack, server):
    _svc, client, _driver, _ = stack
    assert client.get_console_output(ctxt, server) == \
        "fake console line 1\nfake console line 2\n"
    assert client.get_console_output(ctxt, server, tail_length=2) == \
        "fake console line 2\n"


def test_console_output_of_a_gone_guest(ctxt, stack, server):
    _svc, client, driver, _ = stack
    driver.instances.clear()
    with pytest.raises(exception.InstanceNotFound):
        client.get_console_output(ctxt, server)


@pytest.mark.parametrize("data,count,expected", [
    (b"a\nb\nc\n", 2, b"c\n"), (b"a\nb\nc\n", 3, b"b\nc\n"),
    (b"a\nb\nc", 2, b"b\nc"), (b"a\nb\n", 0, b""), (b"a", 5, b"a")])
def test_tail_lines(data, count, expected):
    assert utils.tail_lines(data, count) == expected


class FakeGuest:
    """A guest.Guest stand-in that records what the reboot asked."""

    name = "instance-00000001"

    def __init__(self, stops_after=None, active=True):
        self.calls = []
        self.active = active
        self._stops_after = stops_after   # polls until ACPI takes effect

    def is_active(self):
        if self._stops_after is not None and "shutdown" in self.calls:
            if self._stops_after == 0:
                self.active = False
            self._stops_after -= 1
        return self.active

    def shutdown(self):
        self.calls.append("shutdown")

    def poweroff(self):
        self.calls.append("poweroff")
        self.active = False

    def launch(self):
        self.calls.append("launch")
        self.active = True

    def discard_saved_memory(self):
        self.calls.append("discard saved memory")


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_soft_reboot_shuts_down_and_starts():
    guest, clock = FakeGuest(stops_after=3), Clock()
    assert reboot.reboot(guest, "SOFT", 120, sleep=clock.sleep,
                         clock=clock) == "SOFT"
    assert guest.calls == ["shutdown", "launch"]


def test_soft_reboot_falls_back_to_hard():
    guest, clock = FakeGuest(stops_after=None), Clock()
    assert reboot.reboot(guest, "SOFT", 5, sleep=clock.sleep,
                         clock=clock) == "HARD"
    assert guest.calls == ["shutdown", "poweroff", "discard saved memory",
                           "launch"]
    assert clock.now >= 5


@pytest.mark.parametrize("active", [True, False])
def test_hard_reboot_power_cycles(active):
    guest = FakeGuest(active=active)
    assert reboot.reboot(guest, "HARD", 5) == "HARD"
    # a suspended guest's saved memory goes: it boots afresh
    assert guest.calls == ["poweroff", "discard saved memory", "launch"]


def test_console_log_path_from_domain_xml(tmp_path):
    log = tmp_path / "console.log"
    xml = config.domain_xml(
        "instance-00000001", "0296fb26-f21f-49d3-8937-04366b375e30",
        kernel="/k", initrd="/i", cmdline="console=ttyS0", root_disk="/d",
        memory_mib=128, vcpus=1, virt_type="qemu", console_log=str(log))
    assert console.log_path(xml) == str(log)

    class Guest:
        def get_xml_desc(self):
            return xml
    assert console.read_log(Guest()) == b""     # not written yet
    log.write_bytes(b"x" * 10 + b"y" * console.MAX_CONSOLE_BYTES)
    assert console.read_log(Guest()) == b"y" * console.MAX_CONSOLE_BYTES


def test_console_not_available_without_a_log():
    xml = config.domain_xml(
        "instance-00000001", "0296fb26-f21f-49d3-8937-04366b375e30",
        kernel="/k", initrd="/i", cmdline="", root_disk="/d",
        memory_mib=128, vcpus=1, virt_type="qemu", console_log=None)

    class Guest:
        def get_xml_desc(self):
            return xml
    with pytest.raises(exception.ConsoleNotAvailable):
        console.read_log(Guest())
