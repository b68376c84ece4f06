"""What every fault test ends with: a clean audit and nothing leaked."""

import os
import signal

from ministack import executor
from tests.support import journey
from tests.support import waiting


def assert_clean(stack, server, volume_ids, timeout=60):
    """The audit finds nothing and no resource of ours is left over.

    Waits (up to ``timeout``) for the compute's reconciler to settle what
    a fault left, then checks every ledger itself too: no BDM, no Cinder
    attachment, no volume disk in the domain, no ACL entry on our targets,
    at most one loop device per LV, no LV of a deleted volume.
    """
    def audit_clean():
        rc, report = stack.audit()
        return (rc == 0 and not report["found"]) or None
    try:
        waiting.wait_for("audit reports no divergence", audit_clean,
                         timeout=timeout, interval=3)
    except waiting.WaitTimeout:
        rc, report = stack.audit()
        raise AssertionError("audit rc=%s: %s" % (rc, journey.dumps(
            report["found"])))
    probe, cinder = stack["probe"], stack["cinder_api"]
    dom = probe.domain_name(server)
    assert list(probe.domblklist(dom)) == ["vda"], probe.domblklist(dom)
    for vid in volume_ids:
        assert probe.bdm(server, vid) is None
        assert cinder.attachments(vid) == []
        assert cinder.status(vid) == "available"
    from minicinder.volume.targets import tgt
    for target in tgt.TgtAdm().show_targets():
        if "volume-%s-" % stack["tag"] in target["iqn"]:
            assert target["acls"] == [], target
    out, _ = executor.execute("losetup", "--list", "--noheadings", "--raw",
                              "--output", "NAME,OFFSET,SIZELIMIT,BACK-FILE")
    ranges = [tuple(line.split(" ")[1:]) for line in out.splitlines()]
    assert len(ranges) == len(set(ranges)), "duplicate loop devices"


def attach_ok(stack, server, vid):
    """Attach through the API and wait until the guest sees the disk."""
    resp = stack["nova"].attach(server, vid)
    assert resp.status_code == 200, resp.text
    stack["cinder_api"].wait_status(vid, "in-use")
    dom = stack["probe"].domain_name(server)
    waiting.wait_for("volume in guest",
                     lambda: stack["probe"].guest_dev_for(dom, vid),
                     timeout=30)


def event_of(stack, server, action, finished=False):
    """The newest ``action`` of the server with its events (2.84: the
    events carry ``details``, the reason of a failure); ``finished``
    waits for its events to end first."""
    nova = journey.Nova(stack["api"].url, version="2.84")
    if finished:
        return nova.finished_action(server, action)
    latest = next(a for a in nova.actions(server) if a["action"] == action)
    return nova.action(server, latest["request_id"])


def signal_daemon(daemon, sig):
    os.kill(daemon.pid, sig)


SIGSTOP, SIGCONT, SIGKILL = signal.SIGSTOP, signal.SIGCONT, signal.SIGKILL
