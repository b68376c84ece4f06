"""README's first command, ``./lab.sh``, as a newcomer types it.

On a fresh machine ``./lab.sh`` once deployed the whole stack and then
exited 127 before the journey (stackrc called a function it had not
sourced), and no test ran it. This module runs it as README says:
from the repository, in a new root login shell, and reads what a person
would read: the exit status and the journey's last line. Then the
promises README makes of it: it is safe to run again, ``bash
devstack/unstack.sh`` then ``./lab.sh`` brings the stack back with its
data, and ``bash devstack/clean.sh`` then ``./lab.sh`` starts over from
nothing.

``./run_tests.sh`` brings the lab up with ``./lab.sh`` itself when this
tier is selected (on CI: the first deployment of a fresh machine) and
keeps that run's transcript in ``BRING_UP_LOG``; the first test reads it.

These tests stop, wipe and redeploy the whole lab: run them on a lab
machine, never beside another tier.
"""

import json
import os
import signal
import socket
import subprocess
import uuid

import pytest

from tests.support import login_shell

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BRING_UP_LOG = "/opt/stack/logs/lab.sh.bring-up.log"
LAB_TIMEOUT = 1800          # a fresh machine took 172 s; apt can be slow
JOURNEY_DONE = "journey complete in "
# The services README names, by the port each answers on.
API_PORTS = {"miniapi": 8774, "minicinder": 8776, "keystone": 5000}


def _run(commands, timeout=LAB_TIMEOUT):
    """Commands as README shows them, from the repository."""
    return login_shell.login_shell(login_shell.script(commands, REPO),
                                   timeout=timeout)


def _openstack(*args):
    """``openstack --os-cloud ministack ARGS -f json``, parsed."""
    done = login_shell.login_shell(
        "openstack --os-cloud ministack %s -f json"
        % " ".join(args), timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    return json.loads(done.stdout)


def _assert_journey_ran(done):
    tail = done.stdout[-3000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    assert "ministack lab is up" in done.stdout, tail
    last = [line for line in done.stdout.splitlines() if line.strip()][-1]
    assert last.startswith(JOURNEY_DONE), tail
    # The journey attached and detached for real, in this run.
    assert "volume in-use" in done.stdout, tail
    assert "vdb " in done.stdout, tail                  # lsblk in the guest
    assert " is gone" in done.stdout, tail


def _demo_server():
    servers = _openstack("server list --name '^demo$'")
    assert len(servers) == 1, servers
    return servers[0]


def _listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def _backing_loops():
    """Loop devices over the lab's LVM backing file (the kernel keeps
    them across runs: a redeploy must not leave another behind)."""
    done = subprocess.run(["losetup", "--list", "--noheadings",
                           "--output", "NAME,BACK-FILE"],
                          capture_output=True, text=True, check=True)
    return [line.split()[0] for line in done.stdout.splitlines()
            if "stack-volumes" in line and "backing-file" in line]


def _volume(name):
    return _openstack("volume create --size 1", name)


def _volume_names():
    return {v["Name"] for v in _openstack("volume list")}


@pytest.fixture(scope="module", autouse=True)
def repository_checkout():
    if os.geteuid() != 0:
        pytest.skip("./lab.sh runs as root")


def test_the_bring_up_ran_lab_sh_to_the_journeys_end():
    """run_tests.sh deployed this machine with ``./lab.sh`` (on CI, a
    fresh one): its transcript ends with the journey's last line."""
    if not os.path.exists(BRING_UP_LOG):
        pytest.skip("run_tests.sh did not bring this lab up with ./lab.sh "
                    "(%s missing); the next tests run it" % BRING_UP_LOG)
    with open(BRING_UP_LOG, errors="replace") as handle:
        text = handle.read()
    assert "ministack lab is up" in text
    assert "command not found" not in text, text[-3000:]
    last = [line for line in text.splitlines() if line.strip()][-1]
    assert last.startswith(JOURNEY_DONE), text[-3000:]


def test_lab_sh_runs_to_the_journeys_end():
    done = _run("./lab.sh")
    _assert_journey_ran(done)


def test_lab_sh_again_changes_nothing():
    """Safe to repeat: the same demo server, the same volume group on the
    same loop device, and the journey again."""
    server = _demo_server()
    loops = _backing_loops()
    done = _run("./lab.sh")
    _assert_journey_ran(done)
    assert _demo_server()["ID"] == server["ID"]
    assert _backing_loops() == loops and len(loops) == 1, loops


def _lab_guests():
    """The QEMU processes of the lab's guests (their disks are in the
    lab's state directory; other QEMUs on the machine are not ours)."""
    done = subprocess.run(["pgrep", "-a", "-f", "qemu-system"],
                          capture_output=True, text=True)
    return [line for line in done.stdout.splitlines()
            if "/var/lib/ministack/" in line]


def test_unstack_then_lab_sh_brings_the_stack_back_with_its_data():
    """Also after a restart of the machine, as CI's runner does it: every
    process ended, the guests' QEMUs too. lab.sh then starts the demo
    server's guest again, and the journey waits for it to boot (ACTIVE
    came first, once, and lsblk found no agent)."""
    name = "quickstart-kept-%s" % uuid.uuid4().hex[:8]
    volume = _volume(name)
    server = _demo_server()
    try:
        done = _run("bash devstack/unstack.sh", timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr
        assert "ministack lab stopped" in done.stdout
        up = [svc for svc, port in API_PORTS.items() if _listening(port)]
        assert not up, "still answering after unstack.sh: %s" % up
        for guest in _lab_guests():
            os.kill(int(guest.split()[0]), signal.SIGKILL)
        done = _run("./lab.sh")
        _assert_journey_ran(done)
        assert name in _volume_names()
        assert _demo_server()["ID"] == server["ID"]
        assert len(_backing_loops()) == 1
    finally:
        login_shell.login_shell(
            "openstack --os-cloud ministack volume delete %s" % volume["id"],
            timeout=120)


def test_clean_then_lab_sh_starts_from_nothing():
    """clean.sh removes every state the lab has (databases, volumes,
    exports, guests, loop devices); lab.sh deploys a new lab on it. The
    lab is redeployed even when clean.sh leaves something behind, so the
    next tiers have a lab to test."""
    name = "quickstart-wiped-%s" % uuid.uuid4().hex[:8]
    _volume(name)
    server = _demo_server()
    cleaned = _run("bash devstack/clean.sh", timeout=900)
    loops, guests = _backing_loops(), _lab_guests()
    done = _run("./lab.sh")
    assert cleaned.returncode == 0, cleaned.stdout[-2000:] + cleaned.stderr
    assert "ministack lab cleaned" in cleaned.stdout
    assert loops == [] and guests == [], (loops, guests)
    _assert_journey_ran(done)
    assert name not in _volume_names()
    assert _demo_server()["ID"] != server["ID"]
    assert len(_backing_loops()) == 1
