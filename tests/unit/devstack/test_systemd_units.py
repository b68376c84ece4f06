"""devstack/lib/systemd: the devstack@ unit files stack.sh writes where
PID 1 is systemd, and the detection that keeps the supervisor elsewhere.

The shell functions run in a real bash on files under tmp_path; systemctl
is a fake on PATH that records its calls (this host has no systemd).
"""

import os
import subprocess

DEVSTACK = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                        "..", "..", "devstack"))


def _bash(tmp_path, script, **env):
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    systemctl = fake / "systemctl"
    systemctl.write_text('#!/bin/sh\necho "$@" >> "%s"\n'
                         % (tmp_path / "calls"))
    systemctl.chmod(0o755)
    env = dict(os.environ, TOP_DIR=DEVSTACK,
               PATH="%s:%s" % (fake, os.environ["PATH"]),
               SYSTEMD_UNIT_DIR=str(tmp_path / "units"),
               STATUS_DIR=str(tmp_path / "status"),
               LOGDIR=str(tmp_path / "logs"), CONF_DIR=str(tmp_path / "etc"),
               **env)
    return subprocess.run(["bash", "-c", 'source "$TOP_DIR/functions"\n'
                           + script], env=env, capture_output=True,
                          text=True, timeout=60)


def test_roles_are_devstack_names(tmp_path):
    done = _bash(tmp_path, "for n in keystone miniapi minicompute "
                 "minicinder minicompute@compute2; do devstack_unit $n; done")
    assert done.stdout.split() == [
        "devstack@keystone.service", "devstack@n-api.service",
        "devstack@n-cpu.service", "devstack@c-api.service",
        "devstack@n-cpu-compute2.service"]


def test_no_systemd_keeps_pid_files(tmp_path):
    done = _bash(tmp_path, 'mkdir -p "$STATUS_DIR"; echo 4242 > '
                 '"$STATUS_DIR/minicompute.pid"; system_unit minicompute; '
                 'read_pid minicompute', USE_SYSTEMD="False")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4242"
    assert not (tmp_path / "calls").exists()


def test_unit_file_runs_the_daemon_with_journal_logging(tmp_path):
    done = _bash(tmp_path, 'X_CONF="/etc/a b%.conf" UNIT_ENVIRONMENT=X_CONF '
                 'run_devstack_unit minicompute '
                 '/opt/stack/venv/bin/minicompute '
                 '--config-file "/etc/ministack/minicompute.conf"',
                 USE_SYSTEMD="True")
    assert done.returncode == 0, done.stderr
    unit = (tmp_path / "units" / "devstack@n-cpu.service").read_text()
    assert "Type=simple\n" in unit and "Restart=on-failure\n" in unit
    assert 'Environment="X_CONF=/etc/a b%%.conf"\n' in unit
    log_conf = tmp_path / "etc" / "journal-logging.conf"
    assert ('ExecStart="/opt/stack/venv/bin/minicompute" "--config-file" '
            '"/etc/ministack/minicompute.conf" "--config-file" "%s"\n'
            % log_conf) in unit
    assert "use_stderr = true" in log_conf.read_text()
    assert "WantedBy=multi-user.target" in unit
    calls = (tmp_path / "calls").read_text().splitlines()
    assert "enable --quiet devstack@n-cpu.service" in calls
    assert "restart devstack@n-cpu.service" in calls


def test_unchanged_unit_is_not_rewritten(tmp_path):
    script = ('run_devstack_unit miniapi /bin/true; '
              'write_devstack_unit miniapi /bin/true && echo changed '
              '|| echo same')
    done = _bash(tmp_path, script, USE_SYSTEMD="True")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "same"
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls.count("daemon-reload") == 1
