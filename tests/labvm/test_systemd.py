"""The lab under systemd, as DevStack runs it (devstack/lib/systemd).

In the lab VM PID 1 is systemd: the daemons stack.sh starts itself are
enabled devstack@ units named for their DevStack roles, the
infrastructure is Debian's own units (one copy each, nothing started
beside them), the compute log reaches the journal, and ministackctl
acts through systemctl. Every check runs in the VM through tools/labvm.
"""

import time

import pytest

from tests.support.labvm import vm_run

DEVSTACK_UNITS = ["devstack@keystone", "devstack@n-api", "devstack@n-cpu",
                  "devstack@c-api"]
# Debian's unit -> the daemon's executable, of which exactly one runs.
DEBIAN_UNITS = {"rabbitmq-server": "beam.smp", "mariadb": "mariadbd",
                "memcached": "memcached", "tgt": "tgtd",
                "libvirtd": "libvirtd"}


def _out(command, timeout=120):
    return vm_run(command, timeout=timeout, check=True).stdout.strip()


def _main_pid(unit):
    return int(_out("systemctl show -p MainPID --value %s" % unit))


@pytest.mark.parametrize("unit", DEVSTACK_UNITS)
def test_daemon_runs_as_an_enabled_devstack_unit(lab_vm, unit):
    assert _out("systemctl is-active %s" % unit) == "active"
    # enabled: the lab comes back by itself at boot
    assert _out("systemctl is-enabled %s" % unit) == "enabled"
    unit_file = _out("systemctl show -p FragmentPath --value %s" % unit)
    assert unit_file == "/etc/systemd/system/%s.service" % unit
    assert _main_pid(unit) > 0


@pytest.mark.parametrize("unit", sorted(DEBIAN_UNITS))
def test_debian_unit_serves_the_lab_alone(lab_vm, unit):
    assert _out("systemctl is-active %s" % unit) == "active"
    assert _out("systemctl is-enabled %s" % unit) == "enabled"
    # Its processes are all in its own cgroup: no second copy that
    # stack.sh started beside the package's.
    pids = _out("pgrep -x %s || true" % DEBIAN_UNITS[unit]).split()
    assert pids, "no %s runs" % DEBIAN_UNITS[unit]
    for pid in pids:
        cgroup = _out("cat /proc/%s/cgroup" % pid)
        assert "/%s.service" % unit in cgroup, (pid, cgroup)


def test_journal_shows_the_compute_log(lab_vm):
    journal = _out("journalctl -u devstack@n-cpu --no-pager -o cat -n 400")
    # the daemon's own log lines (oslo.log), not only systemd's
    assert " INFO minicompute" in journal or " INFO ministack" in journal, \
        journal[-2000:]
    # and the log file the tools read is still written
    assert _out("test -s /opt/stack/logs/minicompute.log && echo yes") == "yes"


def test_ministackctl_acts_through_systemctl(lab_vm):
    before = _main_pid("devstack@n-cpu")
    _out("bash -lc 'ministackctl restart minicompute'", timeout=600)
    after = _main_pid("devstack@n-cpu")
    assert after > 0 and after != before
    status = _out("bash -lc 'ministackctl status minicompute'", timeout=120)
    assert " ok (daemon pid %d)" % after in status, status
    logs = _out("bash -lc 'ministackctl logs minicompute'")
    assert logs, "ministackctl logs printed nothing"


def test_systemd_restarts_a_killed_daemon(lab_vm):
    before = _main_pid("devstack@n-cpu")
    _out("kill -KILL %d" % before)
    deadline = time.monotonic() + 120
    after = 0
    while time.monotonic() < deadline:
        after = _main_pid("devstack@n-cpu")
        if after and after != before:
            break
        time.sleep(2)
    assert after and after != before, "devstack@n-cpu was not restarted"
    # the PID files the tools read follow the new daemon
    child = _out("cat /opt/stack/status/minicompute.child.pid")
    assert int(child) == after
