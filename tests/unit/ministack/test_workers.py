"""API worker processes (ministack.workers): forks serving one socket.

Each test forks real processes from pytest's; a worker never returns into
pytest (it leaves with ``os._exit``), and every test stops its workers.
"""

import http.client
import json
import os
import signal
import threading

import pytest

from ministack import workers as ms_workers
from tests.support import processes
from tests.support import waiting


def _port():
    sock = ms_workers.listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()
    return port


class Recorder:
    """A WSGI app answering with its pid and whether ``after_fork`` ran in
    it; ``before_exit`` leaves a file named after the worker's pid."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.forked = False

    def after_fork(self):
        self.forked = True

    def before_exit(self):
        (self.tmp_path / ("exited-%d" % os.getpid())).write_text("")

    def __call__(self, environ, start_response):
        body = json.dumps({"pid": os.getpid(),
                           "forked": self.forked}).encode()
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))])
        return [body]


def _get(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/")
        resp = conn.getresponse()
        assert resp.status == 200
        return json.loads(resp.read())
    finally:
        conn.close()


@pytest.fixture
def pool(tmp_path):
    app = Recorder(tmp_path)
    pool = ms_workers.WorkerProcesses(
        app, "127.0.0.1", _port(), workers=2, threads=2,
        after_fork=app.after_fork, before_exit=app.before_exit,
        stop_timeout=30)
    pool.start()
    yield pool
    pool.stop()


def test_workers_serve_the_socket_once_ready(pool):
    pool.ready()
    seen = set()
    for _ in range(200):
        answer = _get(pool.port)
        assert answer["forked"] is True   # after_fork ran before serving
        seen.add(answer["pid"])
        if seen == set(pool.pids):
            break
    assert seen == set(pool.pids)   # both take connections
    assert os.getpid() not in seen
    assert len(pool.pids) == 2


def test_stop_ends_every_worker_after_before_exit(pool, tmp_path):
    pool.ready()
    pids = list(pool.pids)
    stop_event = threading.Event()
    stop_event.set()
    pool.wait(stop_event)
    assert pool.pids == [] and not pool.failed
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)   # reaped: no zombie left
        assert (tmp_path / ("exited-%d" % pid)).exists()


def test_a_worker_that_dies_stops_the_service(pool):
    pool.ready()
    victim, survivor = pool.pids
    os.kill(victim, signal.SIGKILL)
    stop_event = threading.Event()
    pool.wait(stop_event, interval=0.05)
    assert stop_event.is_set() and pool.failed
    assert pool.pids == []
    with pytest.raises(ChildProcessError):
        os.waitpid(survivor, os.WNOHANG)


def test_stop_before_ready_releases_the_waiting_workers(pool):
    pids = list(pool.pids)
    pool.stop()
    assert pool.pids == []
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_at_least_one_worker():
    with pytest.raises(ValueError):
        ms_workers.WorkerProcesses(lambda e, s: [], "127.0.0.1", 0, 0)


def test_workers_stop_when_the_parent_is_killed(tmp_path):
    """A parent killed with SIGKILL (no clean stop) takes its workers
    with it: they must not keep its port from the next daemon."""
    out, go = os.pipe()
    parent = os.fork()
    if parent == 0:   # a parent of its own, killed below
        code = 1
        try:
            app = Recorder(tmp_path)
            pool = ms_workers.WorkerProcesses(app, "127.0.0.1", _port(), 2,
                                              threads=1)
            pool.start()
            pool.ready()
            os.write(go, json.dumps(pool.pids).encode())
            threading.Event().wait()
        finally:
            os._exit(code)
    os.close(go)
    pids = json.loads(os.read(out, 100))
    os.close(out)
    os.kill(parent, signal.SIGKILL)
    os.waitpid(parent, 0)
    for pid in pids:
        # Re-parented to init (or a subreaper): poll /proc until gone.
        waiting.wait_for("worker %d to stop" % pid,
                         lambda pid=pid: processes.gone(pid), timeout=30)
