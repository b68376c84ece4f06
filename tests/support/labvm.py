"""Helpers of the labvm tier (tests/labvm): the lab VM reached only
through ``tools/labvm`` and ``./lab.sh --vm``, as a person reaches it."""

import os
import subprocess

from tests.support import login_shell

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LABVM = os.path.join(REPO, "tools", "labvm")
# Under TCG the VM runs Python ~15x slower than the host: its stack.sh,
# and an image build on a fresh machine, take many minutes.
LAB_VM_TIMEOUT = 3600
JOURNEY_DONE = "journey complete in "


def labvm(*args, timeout=600, check=False):
    """``tools/labvm ARGS`` on the host, output captured."""
    done = subprocess.run([LABVM, *args], capture_output=True, text=True,
                          timeout=timeout)
    if check:
        assert done.returncode == 0, (args, done.stdout[-3000:],
                                      done.stderr[-3000:])
    return done


def vm_run(command, timeout=600, check=False):
    """A bash line run as root in the VM (``tools/labvm ssh -- bash -c``)."""
    done = labvm("ssh", "--", "bash", "-c", command, timeout=timeout)
    if check:
        assert done.returncode == 0, (command, done.stdout[-3000:],
                                      done.stderr[-3000:])
    return done


def lab_sh_vm(timeout=LAB_VM_TIMEOUT):
    """``./lab.sh --vm`` as README types it: a new root login shell, from
    the repository."""
    return login_shell.login_shell(
        login_shell.script("./lab.sh --vm", REPO), timeout=timeout)


def assert_journey_ran(done):
    """The transcript of a lab.sh run that deployed and walked the journey."""
    tail = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, tail
    assert "ministack lab is up" in done.stdout, tail
    last = [line for line in done.stdout.splitlines() if line.strip()][-1]
    assert last.startswith(JOURNEY_DONE), tail
    assert "volume in-use" in done.stdout, tail
    assert " is gone" in done.stdout, tail
