"""Real faults from outside, in the middle of attach and detach flows.

* minicompute SIGKILLed mid-attach and mid-detach (the flow is held in
  the middle by SIGSTOPping minicinder, so the kill lands while the
  compute waits for Cinder); start-up recovery settles both;
* minicompute stopped while a detach is cast: the cast waits in its
  queue and runs when the host is back;
* minicinder stopped (SIGTERM) during a detach: the attachment delete
  fails, and once minicinder is back the host's reconciler finishes
  the detach the guest had already done;
* libvirtd and RabbitMQ restarted (shared by everyone on the box, so
  only with MINISTACK_SHARED_FAULTS=1): the daemons reconnect and the
  next detach/attach works;
* RabbitMQ restarted while minicompute is down with a detach cast
  waiting in its (durable) queue: the cast survives and runs when the
  host is back;
* tgtd stopped (shared too): an attach fails cleanly while it is down,
  and once it is back minicinder rebuilds the attached volume's export,
  the guest reads its data again and the detach works.

Every test ends with ``ministack-audit`` reporting nothing and nothing
of ours leaked.
"""

import os
import subprocess
import time

import pytest
import sqlalchemy as sa

from tests.functional.recovery import checks
from tests.support import daemons
from tests.support import waiting

pytestmark = pytest.mark.slow

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))

shared = pytest.mark.skipif(
    os.environ.get("MINISTACK_SHARED_FAULTS") != "1",
    reason="restarts a daemon every engineer on the box shares; set "
           "MINISTACK_SHARED_FAULTS=1 to run")


def _running_event(stack, server, event):
    engine = sa.create_engine(stack["nova_db"])
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(
                "SELECT e.id FROM instance_actions_events e JOIN "
                "instance_actions a ON a.id=e.action_id WHERE "
                "a.instance_uuid=:u AND e.event=:e AND e.finish_time IS "
                "NULL"), {"u": server, "e": event}).first()
    finally:
        engine.dispose()


def _event_details(stack, server, action, finished=False):
    """``(result, details)`` of the compute event of ``action``, or
    ``(None, "")`` while the host has not started that event yet;
    ``finished`` waits for it to end."""
    detail = checks.event_of(stack, server, action, finished=finished)
    event = {e["event"]: e for e in detail["events"]}.get(
        "compute_%s" % action)
    if event is None:
        return None, ""
    return event["result"], event["details"] or ""


def _bytes_waiting_at(port):
    """Whether a stopped daemon listening on ``port`` has a request it
    has not read: a connection in its accept queue, or bytes unread on
    an accepted one (/proc/net/tcp*: ``rx_queue`` of the sockets whose
    local port is ``port``; for a listening socket, its backlog)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.readlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            fields = row.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            rx_queue = int(fields[4].split(":")[1], 16)
            if local_port == port and rx_queue > 0:
                return True
    return False


def _kill_compute_waiting_for_cinder(stack, what, reached, timeout):
    """Hold minicinder (SIGSTOP) until ``reached()``, then SIGKILL the
    host mid-call; minicinder resumes and the host is started again (its
    start-up recovery settles the flow)."""
    checks.signal_daemon(stack["cinder"], checks.SIGSTOP)
    try:
        waiting.wait_for(what, reached, timeout=timeout)
        waiting.wait_for("the host's call to be waiting at minicinder",
                         lambda: _bytes_waiting_at(stack["cinder"].port),
                         timeout=30, interval=0.1)
        checks.signal_daemon(stack["compute"], checks.SIGKILL)
        stack["compute"].proc.wait(10)
    finally:
        checks.signal_daemon(stack["cinder"], checks.SIGCONT)
    stack.restart("compute")


def test_compute_killed_mid_attach(stack, guest, volumes):
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("kill-attach")
    resp = stack["nova"].attach(guest, vid)
    assert resp.status_code == 200, resp.text
    # the host will be waiting for attachment_update when it dies
    _kill_compute_waiting_for_cinder(
        stack, "attach running on the host",
        lambda: _running_event(stack, guest, "compute_attach_volume"), 20)
    cinder.wait_status(vid, "available", timeout=60)
    assert probe.bdm(guest, vid) is None
    result, details = _event_details(stack, guest, "attach_volume",
                                      finished=True)
    assert result == "Error" and "interrupted" in details, details
    assert "rolled back" in details, details
    checks.assert_clean(stack, guest, [vid])


def test_compute_killed_mid_detach(stack, guest, volumes):
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("kill-detach")
    checks.attach_ok(stack, guest, vid)
    dom = probe.domain_name(guest)
    resp = stack["nova"].detach(guest, vid)
    assert resp.status_code == 202, resp.text
    # The guest lets go, then the host blocks on attachment_delete.
    _kill_compute_waiting_for_cinder(
        stack, "disk unplugged", lambda: "vdb" not in probe.domblklist(dom),
        30)
    cinder.wait_status(vid, "available", timeout=60)
    waiting.wait_for("BDM gone", lambda: probe.bdm(guest, vid) is None)
    result, details = _event_details(stack, guest, "detach_volume",
                                      finished=True)
    assert result == "Error" and "interrupted" in details, details
    checks.assert_clean(stack, guest, [vid])


def _detach_while_compute_down(stack, guest, vid, meanwhile):
    """Cast a detach to the stopped host, run ``meanwhile()``, bring the
    host back: the queued cast runs and the detach succeeds."""
    cinder, probe = stack["cinder_api"], stack["probe"]
    stack["compute"].stop()
    try:
        # Still "up" for the API (last heartbeat < service_down_time):
        # the cast goes into the host's queue and waits there.
        resp = stack["nova"].detach(guest, vid)
        assert resp.status_code == 202, resp.text
        meanwhile()
        assert cinder.status(vid) == "detaching"
        assert probe.bdm(guest, vid) is not None
    finally:
        stack.restart("compute")
    cinder.wait_status(vid, "available", timeout=60)
    waiting.wait_for("BDM gone", lambda: probe.bdm(guest, vid) is None)
    result, _ = _event_details(stack, guest, "detach_volume",
                                finished=True)
    assert result == "Success"
    checks.assert_clean(stack, guest, [vid])


def test_detach_cast_while_compute_down(stack, guest, volumes):
    vid = volumes("queued")
    checks.attach_ok(stack, guest, vid)
    # The subject: the host stays down a while (no condition to wait
    # for: the cast waits in its queue whatever the time).
    _detach_while_compute_down(stack, guest, vid, lambda: time.sleep(5))


def test_minicinder_stopped_during_detach(stack, guest, volumes):
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("cinder-down")
    checks.attach_ok(stack, guest, vid)
    dom = probe.domain_name(guest)
    checks.signal_daemon(stack["compute"], checks.SIGSTOP)
    try:
        resp = stack["nova"].detach(guest, vid)
        assert resp.status_code == 202, resp.text
        stack["cinder"].stop()
    finally:
        checks.signal_daemon(stack["compute"], checks.SIGCONT)
    try:
        waiting.wait_for("detach failed on the host", lambda: _event_details(
            stack, guest, "detach_volume")[0] == "Error", timeout=60)
        result, details = _event_details(stack, guest, "detach_volume")
        assert "cinder" in details.lower(), details
        assert "vdb" not in probe.domblklist(dom)   # the guest let go
        assert probe.bdm(guest, vid) is not None    # the BDM survived
    finally:
        stack.restart("cinder")
    # The reconciler finishes the detach the guest already did.
    cinder.wait_status(vid, "available", timeout=60)
    waiting.wait_for("BDM gone", lambda: probe.bdm(guest, vid) is None)
    checks.assert_clean(stack, guest, [vid])


def _devstack(lib, *commands):
    """Run devstack's own ``commands`` (from ``lib/<lib>``); seconds."""
    script = "cd %s/devstack && source stackrc && source functions && " \
             "source lib/%s && %s" % (REPO, lib, " && ".join(commands))
    started = time.monotonic()
    subprocess.run(["bash", "-c", script], check=True, timeout=120,
                   capture_output=True)
    return time.monotonic() - started


@shared
def test_libvirtd_restarted(stack, guest, volumes):
    cinder = stack["cinder_api"]
    vid = volumes("libvirtd")
    checks.attach_ok(stack, guest, vid)
    took = _devstack("libvirt", "stop_process libvirtd libvirtd",
                     "start_libvirt")
    print("libvirtd restart took %.1fs" % took)
    # The guest kept running (QEMU outlives libvirtd) and the host
    # reconnects on its next call.
    assert stack["nova"].detach(guest, vid).status_code == 202
    cinder.wait_status(vid, "available", timeout=60)
    other = volumes("libvirtd2")
    checks.attach_ok(stack, guest, other)
    assert stack["nova"].detach(guest, other).status_code == 202
    cinder.wait_status(other, "available", timeout=60)
    checks.assert_clean(stack, guest, [vid, other])


@shared
def test_rabbitmq_restarted(stack, guest, volumes):
    cinder = stack["cinder_api"]
    vid = volumes("rabbit")
    checks.attach_ok(stack, guest, vid)
    _restart_rabbitmq()

    def detached():
        resp = stack["nova"].detach(guest, vid)
        return resp.status_code == 202 or None
    # Until the API's and the host's connections are back the cast may
    # fail with a clean error (volume rolled back to in-use); retry.
    waiting.wait_for("detach accepted", detached, timeout=90, interval=3)
    cinder.wait_status(vid, "available", timeout=90)
    checks.assert_clean(stack, guest, [vid])


def _rabbitmqctl(*args):
    proc = subprocess.run(["rabbitmqctl", "-n", "rabbit@localhost", *args],
                          check=True, capture_output=True, text=True,
                          timeout=120)
    return proc.stdout


def _restart_rabbitmq():
    started = time.monotonic()
    _rabbitmqctl("stop_app")
    _rabbitmqctl("start_app")
    print("RabbitMQ down for %.1fs" % (time.monotonic() - started))


def _queue(stack, name):
    """``(durable, messages)`` of queue ``name`` on the stack's vhost."""
    vhost = daemons.RABBIT_URL.rsplit("/", 1)[1] or "/"
    out = _rabbitmqctl("list_queues", "-q", "-p", vhost, "name", "durable",
                       "messages")
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == name:
            return parts[1] == "true", int(parts[2])
    return None


@shared
def test_durable_cast_survives_broker_restart_while_compute_down(
        stack, guest, volumes):
    vid = volumes("durable")
    checks.attach_ok(stack, guest, vid)
    queue = "compute.%s" % stack["host"]

    def restart_broker():
        waiting.wait_for("cast queued", lambda: _queue(stack, queue) ==
                         (True, 1), timeout=10)
        _restart_rabbitmq()
        # The queue and the persistent message in it came back with the
        # broker; nothing consumed it yet.
        assert _queue(stack, queue) == (True, 1)
    _detach_while_compute_down(stack, guest, vid, restart_broker)


def _export_rebuilt(vid):
    from minicinder.volume.targets import tgt
    for target in tgt.TgtAdm().show_targets():
        if target["iqn"].endswith(vid) and target["acls"]:
            return target
    return None


@shared
def test_tgtd_stopped(stack, guest, volumes):
    cinder, probe = stack["cinder_api"], stack["probe"]
    vid = volumes("tgtd")
    checks.attach_ok(stack, guest, vid)
    dom = probe.domain_name(guest)
    dev = probe.guest_dev_for(dom, vid)
    data = os.urandom(4096)
    probe.write_block(dom, dev, data)
    other = volumes("tgtd-new")
    _devstack("tgt", "stop_tgt")
    try:
        # No target daemon: Cinder cannot export the new volume, so the
        # host's attach fails and rolls back.
        resp = stack["nova"].attach(guest, other)
        assert resp.status_code == 200, resp.text
        waiting.wait_for("attach failed on the host", lambda: _event_details(
            stack, guest, "attach_volume")[0] == "Error", timeout=90)
        cinder.wait_status(other, "available", timeout=60)
        assert probe.bdm(guest, other) is None
        assert list(probe.domblklist(dom)) == ["vda", dev]
        _, details = _event_details(stack, guest, "attach_volume")
        assert other in details or "cinder" in details.lower(), details
    finally:
        took = _devstack("tgt", "start_tgt")
        print("tgtd restart took %.1fs" % took)
    # minicinder rebuilds the export (target, CHAP account, ACL) from its
    # database; QEMU's initiator logs in again on the next I/O.
    waiting.wait_for("export rebuilt", lambda: _export_rebuilt(vid),
                     timeout=30)
    assert probe.read_block(dom, dev, len(data)) == data
    assert stack["nova"].detach(guest, vid).status_code == 202
    cinder.wait_status(vid, "available", timeout=60)
    checks.attach_ok(stack, guest, other)     # and a new attach works again
    assert stack["nova"].detach(guest, other).status_code == 202
    cinder.wait_status(other, "available", timeout=60)
    checks.assert_clean(stack, guest, [vid, other])
