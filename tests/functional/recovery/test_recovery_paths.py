"""The four recovery paths of the seed ("When it goes wrong"), for real.

1. driver attach fails after Cinder mapped the volume (the disk already
   reached the guest): attachment deleted, disk unplugged, BDM destroyed,
   volume available;
2. attachment_complete fails: the driver detaches, the attachment is
   deleted, the volume is available;
3. reserve_block_device_name times out (minicompute SIGSTOPped): no BDM
   survives (the one the host creates late is removed by its reconciler)
   and no reservation lingers;
4. the guest refuses the unplug (``virsh suspend``: a paused guest cannot
   answer the ACPI eject): the retries run out, DeviceDetachFailed rolls
   Cinder back to in-use with the BDM intact, and a later detach works.

Paths 1 and 2 use the test-only fault injection (volume names
``inject-fault-<point>``); 3 and 4 are real faults made from outside.
Every test ends with ``ministack-audit`` reporting nothing.
"""

import time

import pytest

from ministack import executor
from tests.support import waiting
from tests.functional.recovery import checks

pytestmark = pytest.mark.slow


def _attach(stack, server, vid):
    resp = stack["nova"].attach(server, vid)
    assert resp.status_code == 200, resp.text
    return resp.json()["volumeAttachment"]


def _attached(stack, server, vid):
    stack["cinder_api"].wait_status(vid, "in-use")
    dom = stack["probe"].domain_name(server)
    waiting.wait_for("volume in guest",
                     lambda: stack["probe"].guest_dev_for(dom, vid),
                     timeout=30)


def _assert_failed_event(stack, server, action, *words):
    detail = checks.event_of(stack, server, action, finished=True)
    events = {e["event"]: e for e in detail["events"]}
    event = events["compute_%s" % action]
    assert event["result"] == "Error", detail
    assert detail["message"] == "Error", detail
    for word in words:
        assert word in (event["details"] or ""), event
    return event


@pytest.mark.parametrize("point", ["driver_attach", "attachment_complete"])
def test_attach_failure_after_mapping_rolls_back(stack, guest, volumes,
                                                 point):
    """Paths 1 and 2: Cinder mapped the volume, then the attach failed."""
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("inject-fault-%s" % point)
    _attach(stack, guest, vid)
    waiting.wait_for("BDM removed", lambda: probe.bdm(guest, vid) is None,
                     timeout=60)
    assert cinder.status(vid) == "available"
    assert cinder.attachments(vid) == []
    _assert_failed_event(stack, guest, "attach_volume", vid,
                         "Injected fault at %s" % point)
    checks.assert_clean(stack, guest, [vid])
    # The volume is really free: a normal attach and detach work now.
    # (The name still carries the marker, so use a fresh volume.)
    ok = volumes("after-%s" % point)
    _attach(stack, guest, ok)
    _attached(stack, guest, ok)
    assert stack["nova"].detach(guest, ok).status_code == 202
    cinder.wait_status(ok, "available")
    checks.assert_clean(stack, guest, [vid, ok])


def test_reserve_block_device_name_timeout(stack, guest, volumes):
    """Path 3: the compute host does not answer the CALL in time."""
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("rpc-timeout")
    checks.signal_daemon(stack["compute"], checks.SIGSTOP)
    try:
        started = time.monotonic()
        resp = stack["nova"].attach(guest, vid)
        took = time.monotonic() - started
    finally:
        checks.signal_daemon(stack["compute"], checks.SIGCONT)
    assert resp.status_code == 409, resp.text
    assert "conflictingRequest" in resp.json(), resp.text
    assert 7 <= took < 30, took
    # Nothing reserved in Cinder: the API never got to attachment_create.
    assert cinder.status(vid) == "available"
    assert cinder.attachments(vid) == []
    # The resumed host answers the stale CALL and creates a BDM nobody
    # will use; its reconciler must remove it (after the grace).
    waiting.wait_for("late BDM removed", lambda: probe.bdm(guest, vid)
                     is None, timeout=60)
    checks.assert_clean(stack, guest, [vid])


def test_guest_refuses_unplug_then_cooperates(stack, guest, volumes):
    """Path 4: a paused guest cannot release the disk."""
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("refuse")
    _attach(stack, guest, vid)
    _attached(stack, guest, vid)
    dom = probe.domain_name(guest)
    executor.execute("virsh", "-c", "qemu:///system", "suspend", dom)
    try:
        resp = stack["nova"].detach(guest, vid)
        assert resp.status_code == 202, resp.text
        cinder.wait_status(vid, "detaching", timeout=10)
        # 2 attempts x 4 s, then roll_detaching.
        cinder.wait_status(vid, "in-use", timeout=40)
        bdm = probe.bdm(guest, vid)
        assert bdm is not None and bdm["connection_info"]
        assert [a["server_id"] for a in cinder.show(vid)["attachments"]] \
            == [guest]
        assert "vdb" in probe.domblklist(dom)
        _assert_failed_event(stack, guest, "detach_volume", vid,
                             "Device detach failed")
    finally:
        executor.execute("virsh", "-c", "qemu:///system", "resume", dom)
    # The guest now acts on the eject it was sent while paused; the host
    # reconciler puts the disk back (the volume is in-use with its BDM).
    waiting.wait_for("disk present and volume in-use after resume",
                     lambda: "vdb" in probe.domblklist(dom)
                     and cinder.status(vid) == "in-use", timeout=60)
    # Not a poll: the guest may still act on the eject it got while
    # paused, and its unplug (then the reconciler's replug) cannot be
    # told apart from nothing happening before it happens; give it time.
    time.sleep(5)
    waiting.wait_for("disk back in the guest",
                     lambda: probe.guest_dev_for(dom, vid), timeout=60)
    resp = stack["nova"].detach(guest, vid)
    assert resp.status_code == 202, resp.text
    cinder.wait_status(vid, "available", timeout=60)
    waiting.wait_for("BDM gone", lambda: probe.bdm(guest, vid) is None)
    checks.assert_clean(stack, guest, [vid])
