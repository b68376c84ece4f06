"""Start real ministack daemons as subprocesses for functional tests.

Each daemon gets its own generated config file, log file and (for the REST
services) a free port, and is stopped with SIGTERM (then SIGKILL) when the
test is done. Nothing is mocked: the daemon is the console script installed
in the venv, talking to the real broker, database and system services.

Usage::

    d = start_daemon("minicinder", {"DEFAULT": {...}, "database": {...}},
                     tmp_path, ready=http_ready("/"))
    ...
    d.stop()
"""

import configparser
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

RABBIT_URL = os.environ.get(
    "MINISTACK_TRANSPORT_URL",
    "rabbit://stackrabbit:secretrabbit@127.0.0.1:5672/ministack")


def free_port():
    """An unused TCP port on 127.0.0.1 (bind to port 0 and release it)."""
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_config(path, sections):
    parser = configparser.RawConfigParser()
    parser.optionxform = str  # keep option names as written
    for section, values in sections.items():
        if section != "DEFAULT":
            parser.add_section(section)
        for key, value in values.items():
            parser.set(section, key, str(value))
    with open(path, "w") as handle:
        parser.write(handle)


def binary_path(name):
    """The console script next to the running interpreter (the venv)."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    return candidate if os.path.exists(candidate) else name


class DaemonFailed(Exception):
    pass


class Daemon:
    """A running daemon: its process, config, log and (maybe) URL."""

    def __init__(self, name, proc, conf_path, log_path, port=None):
        self.name = name
        self.proc = proc
        self.conf_path = conf_path
        self.log_path = log_path
        self.port = port
        self.url = "http://127.0.0.1:%s" % port if port else None

    @property
    def pid(self):
        return self.proc.pid

    def log(self):
        try:
            with open(self.log_path) as handle:
                return handle.read()
        except OSError:
            return ""

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=20):
        """SIGTERM, wait, then SIGKILL: return the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


def http_ready(path="/"):
    """A readiness probe: any HTTP answer on ``path`` means ready."""
    def _probe(daemon):
        try:
            urllib.request.urlopen(daemon.url + path, timeout=2).close()
        except urllib.error.HTTPError:
            pass  # an HTTP error status is still an answering server
        except (urllib.error.URLError, OSError):
            return False
        return True
    return _probe


def log_ready(marker):
    """A readiness probe: ``marker`` appears in the daemon's log."""
    return lambda daemon: marker in daemon.log()


def start_daemon(name, sections, tmp_path, ready=None, port_option=None,
                 timeout=60, extra_args=()):
    """Write a config, start ``name`` and wait for ``ready(daemon)``.

    :param sections: {section: {option: value}} written to the config file;
        ``[DEFAULT] log_file`` is added so all output lands in one file.
    :param port_option: (section, option) to fill with a free port.
    :raises DaemonFailed: the process exited or never became ready; the
        message carries the tail of its log.
    """
    sections = {k: dict(v) for k, v in sections.items()}
    port = None
    if port_option:
        port = free_port()
        sections.setdefault(port_option[0], {})[port_option[1]] = port
    os.makedirs(tmp_path, exist_ok=True)
    conf_path = os.path.join(str(tmp_path), "%s.conf" % name)
    log_path = os.path.join(str(tmp_path), "%s.log" % name)
    sections.setdefault("DEFAULT", {}).setdefault("log_file", log_path)
    write_config(conf_path, sections)
    return _launch(name, conf_path, log_path, port, ready, timeout,
                   extra_args)


def restart_daemon(daemon, ready=None, timeout=60):
    """Start a stopped ``daemon`` again on its config, log and port;
    ``ready`` as for :func:`start_daemon`. Returns the new Daemon."""
    return _launch(daemon.name, daemon.conf_path, daemon.log_path,
                   daemon.port, ready, timeout, append=True)


def _launch(name, conf_path, log_path, port, ready, timeout, extra_args=(),
            append=False):
    with open(log_path + ".stdout", "a" if append else "w") as out:
        proc = subprocess.Popen(
            [binary_path(name), "--config-file", conf_path, *extra_args],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    daemon = Daemon(name, proc, conf_path, log_path, port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not daemon.alive():
            raise DaemonFailed("%s exited with %s:\n%s\n%s" % (
                name, proc.returncode, _tail(log_path + ".stdout"),
                _tail(log_path)))
        if ready is None or ready(daemon):
            return daemon
        time.sleep(0.2)
    daemon.stop()
    raise DaemonFailed("%s not ready after %ss:\n%s" % (
        name, timeout, _tail(log_path)))


def _tail(path, lines=40):
    try:
        with open(path) as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no log)"
