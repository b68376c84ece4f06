"""The cross-project iSCSI attack, run for real against the deployed lab.

The hole (issue 11): a connector's ``initiator`` reached ``tgtadm
--initiator-name`` unchecked, and tgtd echoes ACL names unescaped in
``tgtadm --op show``, which minicinder re-read to decide which target is
which. An initiator with a newline planted a fake ``Target <tid>: <iqn>``
line; exporting the attacker's next volume then bound the attacker's CHAP
account and initiator name onto the victim's target, and a real iSCSI
login read the other project's disk.

Here the demo user plays the attacker against a volume of the admin
project: every way to send the forged name is refused with a 400 naming
the field, nothing reaches tgtd, the attacker's own export works, and a
real login with ``iscsi-inq`` (libiscsi, as an initiator the attacker
controls) using the attacker's CHAP account and initiator name fails
against the victim's target. The CHAP password never appears in a
process's argv while minicinder exports (checked with strace on the
running daemon). Afterwards the victim's ACL lists only the victim's own
initiator and the audit is clean.
"""

import json
import os
import shutil
import subprocess
import tempfile
import uuid

import pytest

from minicinder.volume.targets import tgt
from tests.support import processes
from tests.support import waiting
from tests.tempest_style import waiters

MV = "3.54"
VICTIM_IQN = "iqn.2024-01.org.ministack.victim:host-%s" % uuid.uuid4().hex[:8]
ATTACKER_IQN = ("iqn.2024-01.org.ministack.attacker:host-%s"
                % uuid.uuid4().hex[:8])
STATUS_DIR = os.environ.get("MINISTACK_STATUS_DIR", "/opt/stack/status")
AUDIT = os.environ.get("MINISTACK_AUDIT",
                       "/opt/stack/venv/bin/ministack-audit")


def connector(initiator, **extra):
    """What os-brick sends for an iSCSI host, with ``initiator``."""
    found = {"initiator": initiator, "host": "attacker-host",
             "ip": "127.0.0.1", "platform": "x86_64", "os_type": "linux",
             "multipath": False, "enforce_multipath": False}
    found.update(extra)
    return found


def make_volume(client, cleanup, name):
    volume = client.create_volume(size=1, name="security-%s-%s" % (
        name, uuid.uuid4().hex[:6]))
    cleanup.add(delete_volume, client, volume["id"])
    waiters.wait_for_volume_status(client, volume["id"],
                                            "available")
    return volume["id"]


def delete_volume(client, volume_id):
    client.delete_volume(volume_id)
    waiters.wait_for_volume_deleted(client, volume_id)


def export(client, cleanup, volume_id, initiator):
    """Reserve and connect in one POST (3.54): the volume is exported to
    ``initiator``. :returns: (attachment id, connection_info data)."""
    body = client.request(
        "POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4()),
            "connector": connector(initiator), "mode": "rw"}},
        expected=200, microversion=MV)[2]["attachment"]
    cleanup.add(client.request, "DELETE", "/attachments/%s" % body["id"],
                expected=(200, 404), microversion=MV)
    return body["id"], body["connection_info"]


def iscsi_inq(data, initiator, iqn=None):
    """Log in to the target of connection_info ``data`` (or to ``iqn``)
    with its CHAP account, as ``initiator``, and send an INQUIRY.

    The credentials go to libiscsi through its environment variables, not
    the URL: argv is world-readable. :returns: (exit code, output).
    """
    url = "iscsi://%s/%s/1" % (data["target_portal"],
                               iqn or data["target_iqn"])
    env = dict(os.environ,
               LIBISCSI_CHAP_USERNAME=data["auth_username"],
               LIBISCSI_CHAP_PASSWORD=data["auth_password"])
    proc = subprocess.run(["iscsi-inq", "-i", initiator, url], env=env,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


def target_of(iqn):
    return tgt.TgtAdm().find_target(iqn)


def all_acls():
    return [acl for target in tgt.TgtAdm().show_targets()
            for acl in target["acls"]]


@pytest.fixture
def victim_volume(admin_volumes, cleanup):
    """A volume of the admin project, exported to the victim's host."""
    volume_id = make_volume(admin_volumes, cleanup, "victim")
    _, data = export(admin_volumes, cleanup, volume_id, VICTIM_IQN)
    return volume_id, data


# An initiator name that, echoed by tgtd, reads as the victim's tid under
# the name of the attacker's next volume, with its LUN already there (so
# an export would skip straight to binding CHAP and the ACL).
FORGED = ("iqn.2024-01.org.ministack.attacker:x\nTarget %d: %s\n"
          "    LUN information:\n        LUN: 1")


def test_forged_initiator_is_refused_everywhere(
        victim_volume, demo_volumes, cleanup):
    """Every route that takes a connector answers 400 naming the
    initiator, and tgtd never sees the forged name."""
    victim_id, victim = victim_volume
    victim_tid = target_of(victim["target_iqn"])["tid"]
    first = make_volume(demo_volumes, cleanup, "attacker-1")
    second = make_volume(demo_volumes, cleanup, "attacker-2")
    forged = FORGED % (victim_tid, victim["target_iqn"].replace(
        victim_id, second))
    acls_before = all_acls()

    def refused(method, path, body, microversion=MV):
        status, _, payload = demo_volumes.request(
            method, path, body, microversion=microversion)
        assert status == 400, (path, status, payload)
        assert "initiator" in json.dumps(payload), payload

    refused("POST", "/attachments", {"attachment": {
        "volume_uuid": first, "instance_uuid": str(uuid.uuid4()),
        "connector": connector(forged)}})
    status, _, reserved = demo_volumes.request(
        "POST", "/attachments", {"attachment": {
            "volume_uuid": first, "instance_uuid": str(uuid.uuid4())}},
        microversion=MV)
    assert status == 200, reserved
    attachment_id = reserved["attachment"]["id"]
    cleanup.add(demo_volumes.request, "DELETE",
                "/attachments/%s" % attachment_id, expected=(200, 404),
                microversion=MV)
    refused("PUT", "/attachments/%s" % attachment_id,
            {"attachment": {"connector": connector(forged)}})
    for action in ("os-initialize_connection", "os-terminate_connection"):
        refused("POST", "/volumes/%s/action" % second,
                {action: {"connector": connector(forged)}},
                microversion="3.0")
    # Other shapes a hostile connector may take are refused too.
    for bad in ({"initiator": ["iqn.2024-01.org.x:y"]},
                {"initiator": "iqn.2024-01.org.x:y\n"},
                {"initiator": "iqn.2024-01.org.x:y",
                 "host": "h\nTarget 1: x"}):
        status, _, payload = demo_volumes.request(
            "POST", "/volumes/%s/action" % second,
            {"os-terminate_connection": {"connector": bad}},
            microversion="3.0")
        assert status == 400, (bad, status, payload)

    assert all_acls() == acls_before
    assert target_of(victim["target_iqn"])["acls"] == [VICTIM_IQN]


def test_attacker_cannot_log_in_to_the_victims_target(
        victim_volume, demo_volumes, cleanup):
    """The attack's end: a real login with the attacker's CHAP account
    and initiator name reaches only the attacker's own disk."""
    victim_id, victim = victim_volume
    victim_tid = target_of(victim["target_iqn"])["tid"]
    first = make_volume(demo_volumes, cleanup, "attacker-1")
    second = make_volume(demo_volumes, cleanup, "attacker-2")
    forged = FORGED % (victim_tid, victim["target_iqn"].replace(
        victim_id, second))
    # The whole attack is played even if a step is refused, so that on a
    # vulnerable lab the test ends where the attack does: in the login.
    planted, _, payload = demo_volumes.request(
        "POST", "/volumes/%s/action" % first,
        {"os-initialize_connection": {"connector": connector(forged)}},
        microversion="3.0")
    if planted == 200:
        cleanup.add(demo_volumes.request, "POST",
                    "/volumes/%s/action" % first,
                    {"os-terminate_connection": {"connector": connector(
                        forged)}}, microversion="3.0")
    # The attacker's next export, which used to land on the victim's tid.
    _, mine = export(demo_volumes, cleanup, second, ATTACKER_IQN)

    code, out = iscsi_inq(mine, ATTACKER_IQN, iqn=victim["target_iqn"])
    assert code != 0, ("the attacker logged in to the victim's target: %s"
                       % out)
    assert ("Target not found" in out or "uthoriz" in out
            or "uthentication" in out), out
    # Control: the attacker's credentials do work on the attacker's disk,
    # so the refusal above is the ACL and CHAP at work, not a broken login.
    code, out = iscsi_inq(mine, ATTACKER_IQN)
    assert code == 0, out
    assert planted == 400, payload
    assert "initiator" in json.dumps(payload), payload
    assert target_of(mine["target_iqn"])["tid"] != victim_tid

    victim_target = target_of(victim["target_iqn"])
    assert victim_target["acls"] == [VICTIM_IQN]
    assert not victim_target["sessions"]


def test_tgt_adapter_refuses_a_planted_target_line(victim_volume):
    """Defence in depth: a forged ACL name planted straight into tgtd (as
    an older ministack let through) makes the parser fail loudly instead
    of handing out the victim's tid, and binding such a name is refused."""
    victim_id, victim = victim_volume
    adm = tgt.TgtAdm()
    victim_tid = target_of(victim["target_iqn"])["tid"]
    scratch_iqn = "iqn.2024-01.org.ministack.security:scratch-%s" % (
        uuid.uuid4().hex[:8])
    scratch_tid = max(t["tid"] for t in adm.show_targets()) + 100
    tgtadm = ["tgtadm", "--lld", "iscsi", "--mode", "target"]
    subprocess.run(tgtadm + ["--op", "new", "--tid", str(scratch_tid),
                             "--targetname", scratch_iqn], check=True)
    try:
        with pytest.raises(Exception) as refused:
            adm.bind_initiator(scratch_tid, FORGED % (
                victim_tid, victim["target_iqn"]))
        assert "initiator" in str(refused.value)
        subprocess.run(tgtadm + [
            "--op", "bind", "--tid", str(scratch_tid), "--initiator-name",
            FORGED % (victim_tid, "iqn.2010-10.org.openstack:volume-"
                      + str(uuid.uuid4()))], check=True)
        with pytest.raises(tgt.UnexpectedOutput):
            adm.show_targets()
    finally:
        subprocess.run(tgtadm + ["--op", "delete", "--force", "--tid",
                                 str(scratch_tid)], check=True)
    assert target_of(victim["target_iqn"])["acls"] == [VICTIM_IQN]


def _traced_by(pid, tracer):
    """Whether every thread of ``pid`` is traced by ``tracer`` (its
    ``TracerPid`` in /proc); an exited tracer fails at once."""
    if tracer.poll() is not None:
        raise AssertionError("strace exited %s: %s" % (
            tracer.returncode, tracer.stderr.read()))
    tasks = os.listdir("/proc/%d/task" % pid)
    for task in tasks:
        try:
            with open("/proc/%d/task/%s/status" % (pid, task)) as f:
                status = dict(line.split(":", 1) for line in f
                              if ":" in line)
        except FileNotFoundError:   # a thread that just ended
            continue
        if int(status["TracerPid"]) != tracer.pid:
            return False
    return bool(tasks)


@pytest.mark.skipif(shutil.which("strace") is None,
                    reason="strace is not installed")
def test_chap_password_never_in_argv(demo_volumes, cleanup):
    """Trace every program minicinder runs while it creates an export
    (target, LUN, CHAP account, ACL): none has the password in argv.
    Its API worker processes (``osapi_volume_workers``) are traced too:
    the export is made by whichever serves the request.

    minicinder sends its tgt requests to tgtd's socket rather than
    running tgtadm, so the trace also records what is written: the
    export's requests (the ACL names the attacker's initiator) must be
    seen, or the trace proved nothing. The password is in those writes,
    so the trace file lives in a root-only directory."""
    with open(os.path.join(STATUS_DIR, "minicinder.child.pid")) as f:
        pid = int(f.read())
    pids = [pid] + processes.children(pid)
    volume_id = make_volume(demo_volumes, cleanup, "argv")
    private = tempfile.mkdtemp(prefix="ministack-argv-")   # mode 0700
    trace = os.path.join(private, "strace")
    tracer = subprocess.Popen(
        ["strace", "-f", "-qq", "-s", "4096", "-e",
         "trace=execve,connect,write,sendto,sendmsg",
         "-o", trace] + [arg for pid in pids for arg in ("-p", str(pid))],
        stderr=subprocess.PIPE)
    try:
        waiting.wait_for("strace to attach to every thread of %s" % pids,
                         lambda: all(_traced_by(pid, tracer)
                                     for pid in pids),
                         timeout=30, interval=0.1)
        _, data = export(demo_volumes, cleanup, volume_id, ATTACKER_IQN)
    finally:
        tracer.terminate()
        tracer.wait(30)
    with open(trace) as f:
        traced = f.read()
    shutil.rmtree(private)
    assert ATTACKER_IQN in traced and "/var/run/tgtd/socket" in traced, (
        "strace saw no request of the export: %s" % traced[:500])
    argvs = [line for line in traced.splitlines() if "execve(" in line]
    assert not [line for line in argvs if data["auth_password"] in line]


def test_audit_is_clean_after_the_attack():
    """Runs after the attacks (and their cleanups): no divergence left."""
    proc = subprocess.run([AUDIT, "--json"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
