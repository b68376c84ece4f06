"""Reboot and console output against a real guest (tempest's
compute/servers/test_server_actions.py and test_instance_actions.py).

A reboot is checked where it happens: the guest kernel's boot_id
(``/proc/sys/kernel/random/boot_id``, new at every boot) changes, and an
attached volume is still there afterwards.
"""

from tests.tempest_style import waiters
from tests.tempest_style.decorators import idempotent_id


def _boot_id(guest):
    return guest.execute("cat /proc/sys/kernel/random/boot_id").strip()


def _reboot(cloud, server_id, kind):
    cloud.compute.request("POST", "/servers/%s/action" % server_id,
                          {"reboot": {"type": kind}}, expected=202)
    waiters.wait_for_server_status(cloud.compute, server_id, "ACTIVE",
                                   timeout=cloud.conf.build_timeout)


@idempotent_id("996887e5-d2b8-4119-8f01-30f6820c33ed")
def test_reboot_soft_and_hard_with_volume(cloud, servers, guest_of,
                                          cleanup):
    """SOFT (ACPI power button) then HARD reboot: the server is ACTIVE
    again each time, the guest really booted again, the attached volume
    is still in-use and seen by the guest, and both reboots are recorded
    as ``reboot`` instance actions."""
    server_id = servers[1]
    volume = cloud.create_volume(cleanup)
    cloud.attach_volume(cleanup, server_id, volume["id"])
    guest = guest_of(server_id)
    boot = _boot_id(guest) if guest else None
    for kind in ("SOFT", "HARD"):
        _reboot(cloud, server_id, kind)
        vol = cloud.volumes.show_volume(volume["id"])["volume"]
        assert vol["status"] == "in-use", (kind, vol)
        if guest:
            guest.wait_for_agent()
            new_boot = _boot_id(guest)
            assert new_boot != boot, kind
            boot = new_boot
            assert guest.device_for(volume["id"])
    actions = cloud.compute.list_instance_actions(server_id)
    assert [a["action"] for a in actions[:2]] == ["reboot", "reboot"], \
        actions
    cloud.detach_volume(server_id, volume["id"])


@idempotent_id("bbc8cf7e-fa96-4b64-9561-f3ef3ec93b47")
def test_get_console_output(cloud, servers):
    """The guest's serial console log; ``length`` keeps its last lines
    (tempest's test_get_console_output checks three)."""
    server_id = servers[0]
    url = "/servers/%s/action" % server_id
    full = cloud.compute.request("POST", url, {"os-getConsoleOutput": {}},
                                 expected=200)[2]["output"]
    assert full.strip(), "the console log is empty"
    tail = cloud.compute.request("POST", url, {"os-getConsoleOutput": {
        "length": 3}}, expected=200)[2]["output"]
    assert len(tail.split("\n")) == 3, tail
    cloud.compute.request("POST", url, {"os-getConsoleOutput": {
        "length": "x"}}, expected=400)
