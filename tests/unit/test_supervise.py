"""devstack/tools/supervise: restart on crash, pass TERM on, give up."""

import os
import signal
import subprocess
import sys

from tests.support import waiting

SUPERVISE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "devstack", "tools", "supervise")


def _start(tmp_path, *command):
    return subprocess.Popen(
        [sys.executable, SUPERVISE, "svc", str(tmp_path), "--", *command],
        stderr=subprocess.PIPE, text=True)


def _child_pid(tmp_path, other_than=None, timeout=10):
    path = tmp_path / "svc.child.pid"

    def child():
        text = path.read_text().strip() if path.exists() else ""
        return int(text) if text and int(text) != other_than else None
    return waiting.wait_for("a (new) child pid in %s" % path, child,
                            timeout=timeout, interval=0.05)


def test_a_killed_daemon_is_restarted_and_term_stops_both(tmp_path):
    # The supervised daemon: a process that runs until it is killed.
    sup = _start(tmp_path, sys.executable, "-c",
                 "import time; time.sleep(60)")
    try:
        first = _child_pid(tmp_path)
        os.kill(first, signal.SIGKILL)
        second = _child_pid(tmp_path, other_than=first)
        assert second != first
        sup.send_signal(signal.SIGTERM)
        assert sup.wait(10) == 0
        assert not (tmp_path / "svc.child.pid").exists()
        # the daemon itself got the TERM and is gone
        assert not os.path.exists("/proc/%d" % second) or \
            open("/proc/%d/stat" % second).read().split()[2] == "Z"
    finally:
        if sup.poll() is None:
            sup.kill()


def test_a_crash_loop_gives_up_with_exit_1(tmp_path):
    sup = _start(tmp_path, sys.executable, "-c", "raise SystemExit(3)")
    assert sup.wait(30) == 1
    assert "giving up" in sup.stderr.read()
