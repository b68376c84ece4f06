"""``./lab.sh --vm`` and ``tools/labvm`` as README and docs/labvm.md
promise them: the lab deployed in a VM from nothing, the journey printed;
a reboot of the VM, then ``./lab.sh --vm`` again with the lab's data
kept; bad input answered with a message and a non-zero exit; ``down``
leaving no QEMU and no port behind.
"""

import os
import socket
import time
import uuid

import pytest

from tests.support.labvm import assert_journey_ran
from tests.support.labvm import lab_sh_vm
from tests.support.labvm import labvm
from tests.support.labvm import vm_run

REBOOT_TIMEOUT = 600


def _openstack(args, check=True):
    """``openstack --os-cloud ministack ARGS`` in the VM, as root logs in."""
    return vm_run("bash -lc 'openstack --os-cloud ministack %s'" % args,
                  timeout=300, check=check)


def _ssh_port():
    with open(os.path.join(_vm_dir(), "ssh_port")) as handle:
        return int(handle.read())


def _vm_dir():
    top = os.environ.get("LABVM_DIR", "/var/lib/ministack-labvm")
    return os.path.join(top, "vms", os.environ.get("LABVM_NAME", "labvm"))


def _listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def _qemu_processes():
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"qemu-system-x86_64") and b"-name" in argv:
            name = argv[argv.index(b"-name") + 1]
            if name == os.environ.get("LABVM_NAME", "labvm").encode():
                found.append(int(pid))
    return found


def test_lab_sh_vm_deploys_and_walks_the_journey(lab_vm):
    assert_journey_ran(lab_vm)
    # It ran in the VM, whose PID 1 is systemd (not on this host).
    done = vm_run("ps -o comm= -p 1", check=True)
    assert done.stdout.strip() == "systemd", done.stdout
    assert "labvm: repository synced" in lab_vm.stdout, lab_vm.stdout[-2000:]


def test_ssh_passes_the_exit_status_through(lab_vm):
    assert labvm("ssh", "--", "true").returncode == 0
    assert labvm("ssh", "--", "sh", "-c", "exit 7").returncode == 7
    done = labvm("ssh", "--", "echo", "two words", "$HOME")
    assert done.stdout == "two words $HOME\n", done.stdout


def test_second_up_is_refused_with_a_message(lab_vm):
    done = labvm("up")
    assert done.returncode != 0
    assert "already running" in done.stderr, done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("args, expect", [
    (("frobnicate",), "unknown verb 'frobnicate'"),
    (("destroy", "--everything"), "unknown option '--everything'"),
])
def test_bad_input_gets_a_message(args, expect):
    done = labvm(*args)
    assert done.returncode != 0
    assert expect in done.stderr, done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("verb", ["ssh", "sync", "down"])
def test_a_vm_that_does_not_exist(verb, monkeypatch):
    monkeypatch.setenv("LABVM_NAME", "no-such-vm-%s" % uuid.uuid4().hex[:8])
    done = labvm(verb)
    assert done.returncode != 0
    assert "no VM 'no-such-vm-" in done.stderr, done.stderr
    status = labvm("status")
    assert status.returncode == 3 and "no VM" in status.stdout, status


def _boot_id():
    done = labvm("ssh", "--", "cat", "/proc/sys/kernel/random/boot_id",
                 timeout=60)
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.mark.labvm_last
def test_reboot_then_lab_sh_vm_keeps_the_data(lab_vm):
    name = "labvm-reboot-%s" % uuid.uuid4().hex[:8]
    volume_id = _openstack("volume create --size 1 %s -f value -c id"
                           % name).stdout.strip()
    try:
        before = _boot_id()
        assert before
        labvm("ssh", "--", "systemctl", "reboot")
        # sshd goes away, then answers again from the new boot.
        deadline = time.monotonic() + REBOOT_TIMEOUT
        after = before
        while after in (None, before) and time.monotonic() < deadline:
            time.sleep(5)
            after = _boot_id()
        assert after not in (None, before), "the VM did not come back"
        again = lab_sh_vm()
        assert_journey_ran(again)
        assert "reusing the running" in again.stdout, again.stdout[-2000:]
        shown = _openstack("volume show %s -f value -c status" % volume_id)
        assert shown.stdout.strip() == "available", shown.stdout
    finally:
        _openstack("volume delete %s" % volume_id, check=False)


@pytest.mark.labvm_shutdown
def test_down_leaves_no_qemu_and_no_port(lab_vm):
    port = _ssh_port()
    done = labvm("down", timeout=300)
    assert done.returncode == 0, done.stderr
    assert _qemu_processes() == []
    assert not _listening(port)
    status = labvm("status")
    assert status.returncode == 3 and "stopped" in status.stdout, status.stdout
    # The disk is kept for the next up.
    assert os.path.exists(os.path.join(_vm_dir(), "disk.qcow2"))
