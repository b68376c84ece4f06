"""The fuzz prober's two waits (tests/fuzz/probe.py), without the lab:
the traceback of a failed request read from the daemon's log, and a
restarted service answering again. Both poll with tests.support.waiting."""

import http.server
import threading

import pytest

from tests.fuzz import probe
from tests.support import daemons

PREFIX = "2026-12-02 10:00:00.123 4242 ERROR miniapi.wsgi"
TRACEBACK = "\n".join([
    PREFIX + " [req-abc admin p1] Unexpected error in GET /v2.1/servers",
    PREFIX + " Traceback (most recent call last):",
    PREFIX + '   File "/opt/stack/venv/lib/python3.11/site-packages/'
             'flask/app.py", line 1, in wsgi_app',
    PREFIX + '   File "/work/main/miniapi/api/servers.py", line 42, in show',
    PREFIX + " KeyError: 'flavor'",
]) + "\n"


def test_cause_reads_the_requests_traceback_logged_since_the_last_look(
        tmp_path):
    log = tmp_path / "miniapi.log"
    log.write_text("an older line\n")
    reader = probe.LogReader(str(tmp_path))
    with open(log, "a") as f:
        f.write(TRACEBACK)
    cause, trace = reader.cause("compute", "req-abc")
    assert cause.startswith("KeyError: 'flavor' at ")
    assert "servers.py" in cause
    assert "Traceback" not in trace and "KeyError" in trace


def test_cause_is_empty_when_the_log_never_shows_it(tmp_path):
    (tmp_path / "miniapi.log").write_text(TRACEBACK)
    reader = probe.LogReader(str(tmp_path))   # already read: nothing new
    assert reader.cause("compute", "req-abc", wait=0.3) == ("", "")


@pytest.fixture
def answering_root():
    server = http.server.HTTPServer(("127.0.0.1", 0),
                                    http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d/" % server.server_port
    server.shutdown()
    server.server_close()


def test_wait_for_a_service_that_answers(tmp_path, answering_root):
    prober = probe.Prober({"compute": answering_root}, str(tmp_path))
    assert prober._wait_for("compute") is True


def test_wait_for_a_service_that_stays_down(tmp_path, monkeypatch):
    monkeypatch.setattr(probe, "RECONNECT_WAIT", 0.5)
    down = "http://127.0.0.1:%d/" % daemons.free_port()
    prober = probe.Prober({"compute": down}, str(tmp_path))
    assert prober._wait_for("compute") is False
