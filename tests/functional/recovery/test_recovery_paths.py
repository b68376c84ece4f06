"""The four recovery paths of the seed ("When it goes wrong"), for real.

1. driver attach fails after Cinder mapped the volume (the disk already
   reached the guest): attachment deleted, disk unplugged, BDM destroyed,
   volume available;
2. attachment_complete fails: the driver detaches, the attachment is
   deleted, the volume is available;
3. reserve_block_device_name times out (the host holds its answer past
   the API's 8 s): the API destroys the BDM the host made and no
   reservation lingers; and with the host SIGSTOPped outright, the BDM
   it creates late is removed by its reconciler;
4. the guest refuses the unplug (the host pauses it, as ``virsh
   suspend`` does: a paused guest cannot answer the ACPI eject): the
   retries run out, DeviceDetachFailed rolls Cinder back to in-use with
   the BDM intact, the guest runs again, and a later detach works.

Each failure is armed as ``ministack-fault`` arms it on the lab, through
the stack's own ``/v2.1/os-ministack-faults`` (``Stack.arm_fault``): one
shot, held in minicompute's memory. Every test ends with
``ministack-audit`` reporting nothing.
"""

import time

import pytest

from ministack import executor
from tests.functional.recovery import checks
from tests.support import waiting

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


def _fired(stack, vid):
    """The faults that fired for volume ``vid``; asserts none is armed."""
    resp = stack["nova"].req("GET", "/os-ministack-faults")
    assert resp.status_code == 200, resp.text
    assert resp.json()["faults"] == [], resp.text     # one shot: consumed
    return [f for f in resp.json()["fired"] if f["volume_id"] == vid]


@pytest.mark.parametrize("point", ["driver-attach", "attachment-complete"])
def test_attach_failure_after_mapping_rolls_back(stack, guest, volumes,
                                                 point):
    """Paths 1 and 2: Cinder mapped the volume, then the attach failed."""
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes(point)
    armed = stack.arm_fault(point, volume_id=vid)
    _attach(stack, guest, vid)
    waiting.wait_for("BDM removed", lambda: probe.bdm(guest, vid) is None,
                     timeout=60)
    assert cinder.status(vid) == "available"
    assert cinder.attachments(vid) == []
    _assert_failed_event(stack, guest, "attach_volume", vid,
                         "Injected fault at %s" % point)
    assert [f["id"] for f in _fired(stack, vid)] == [armed["id"]]
    checks.assert_clean(stack, guest, [vid])
    # The volume is really free, and the fault was one shot: a normal
    # attach and detach of the same volume work now.
    _attach(stack, guest, vid)
    _attached(stack, guest, vid)
    assert stack["nova"].detach(guest, vid).status_code == 202
    cinder.wait_status(vid, "available")
    checks.assert_clean(stack, guest, [vid])


def test_reserve_block_device_name_timeout(stack, guest, volumes):
    """Path 3: the compute host does not answer the CALL in time."""
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("rpc-timeout")
    armed = stack.arm_fault("reserve-timeout", server_id=guest)
    assert armed["hold_seconds"] == 8 + 5
    started = time.monotonic()
    resp = stack["nova"].attach(guest, vid)
    took = time.monotonic() - started
    assert resp.status_code == 409, resp.text
    assert "conflictingRequest" in resp.json(), resp.text
    assert 7 <= took < 30, took
    # The host had created the BDM: the API's handler destroyed it.
    assert probe.bdm(guest, vid) is None
    assert [f["id"] for f in _fired(stack, vid)] == [armed["id"]]
    # Nothing reserved in Cinder: the API never got to attachment_create.
    assert cinder.status(vid) == "available"
    assert cinder.attachments(vid) == []
    checks.assert_clean(stack, guest, [vid])


def test_reserve_timeout_with_the_host_stopped_outright(stack, guest,
                                                       volumes):
    """Path 3, the host SIGSTOPped: it answers late, after resuming."""
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("rpc-stopped")
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
    armed = stack.arm_fault("detach-refused", volume_id=vid)
    resp = stack["nova"].detach(guest, vid)
    assert resp.status_code == 202, resp.text
    cinder.wait_status(vid, "detaching", timeout=10)
    # The host paused the real guest for the detach.
    waiting.wait_for("guest paused", lambda: _domstate(dom) == "paused",
                     timeout=10)
    # 2 attempts x 4 s, then roll_detaching.
    cinder.wait_status(vid, "in-use", timeout=40)
    bdm = probe.bdm(guest, vid)
    assert bdm is not None and bdm["connection_info"]
    assert [a["server_id"] for a in cinder.show(vid)["attachments"]] \
        == [guest]
    assert "vdb" in probe.domblklist(dom)
    _assert_failed_event(stack, guest, "detach_volume", vid,
                         "Device detach failed")
    assert [f["id"] for f in _fired(stack, vid)] == [armed["id"]]
    # The fault's undo: the guest runs again.
    assert _domstate(dom) == "running"
    # The guest acts on the eject it was sent while paused; the host
    # puts the disk back (the volume is in-use with its BDM).
    waiting.wait_for("disk present and volume in-use after resume",
                     lambda: "vdb" in probe.domblklist(dom)
                     and cinder.status(vid) == "in-use", timeout=60)
    # Not a poll: the guest may still act on the eject it got while
    # paused, and its unplug (then the replug) cannot be told apart from
    # nothing happening before it happens; give it time.
    time.sleep(5)
    waiting.wait_for("disk back in the guest",
                     lambda: probe.guest_dev_for(dom, vid), timeout=60)
    resp = stack["nova"].detach(guest, vid)
    assert resp.status_code == 202, resp.text
    cinder.wait_status(vid, "available", timeout=60)
    waiting.wait_for("BDM gone", lambda: probe.bdm(guest, vid) is None)
    checks.assert_clean(stack, guest, [vid])


def _domstate(dom):
    out, _ = executor.execute("virsh", "-c", "qemu:///system", "domstate",
                              dom)
    return out.strip()
