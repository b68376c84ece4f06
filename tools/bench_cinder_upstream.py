"""Upstream Cinder, for tools/bench_cinder.py to measure side by side.

:class:`UpstreamCinder` runs the real thing -- cinder 29.0.0 from PyPI,
unmodified, in its own venv -- the way a DevStack would run a single-node
Cinder, minus what the comparison does not need:

* ``cinder-api``, ``cinder-scheduler`` and ``cinder-volume``, three
  processes, each in its own session so that stopping one by its PID (its
  process group: ``cinder-api`` and ``cinder-volume`` fork workers) leaves
  nothing behind;
* ``auth_strategy = noauth_include_project_id`` (the same ``user:project``
  tokens and ``/v3/<project>`` URLs the bench gives a private
  minicinder), SQLite in a temporary directory, schema by ``cinder-manage
  db sync``;
* one backend with the fake driver the wheel ships,
  ``cinder.tests.fake_driver.FakeLoggingVolumeDriver`` (an LVM driver
  whose commands are logged instead of run: no export, no device);
* its own RabbitMQ vhost on the lab's broker, created with
  ``rabbitmqctl`` for the lab's RabbitMQ user (whose password is read
  from the lab's config and written only to the 0600 config file in a
  0700 directory, never to argv) and deleted afterwards.

Everything it creates -- processes, vhost, temporary directory -- is
removed by :meth:`UpstreamCinder.stop`, also after a failed start. The
venv is kept (created on first use, reused while it holds cinder 29.0.0).
"""

import configparser
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid

import requests

from ministack import executor

VERSION = "29.0.0"
DEFAULT_VENV = "/opt/stack/cinder-upstream-venv"
FAKE_DRIVER = "cinder.tests.fake_driver.FakeLoggingVolumeDriver"
# The fake driver lives in cinder.tests, whose package imports the
# ``fixtures`` test library (not one of cinder's run-time requirements).
PACKAGES = ("cinder==%s" % VERSION, "fixtures")
# devstack/stackrc's node name; rabbitmqctl must be told it (and epmd's
# address), as devstack/lib/rabbitmq's _rabbitmqctl does.
RABBIT_NODENAME = os.environ.get("RABBIT_NODENAME", "rabbit@localhost")
LAB_CONFIGS = ("/etc/ministack/miniapi.conf",
               "/etc/ministack/minicompute.conf")


def ensure_venv(venv=DEFAULT_VENV, log=print):
    """The venv with cinder==VERSION; created or fixed only if needed."""
    python = os.path.join(venv, "bin", "python")
    if _installed_version(python) == VERSION:
        return venv
    if not os.path.exists(python):
        log("creating %s (cinder %s from PyPI)" % (venv, VERSION))
        executor.execute(_base_python(), "-m", "venv", venv)
    log("installing %s into %s" % (" ".join(PACKAGES), venv))
    executor.execute(python, "-m", "pip", "install", "-q", *PACKAGES,
                     timeout=1800)
    if _installed_version(python) != VERSION:
        raise SystemExit("cinder %s did not install into %s"
                         % (VERSION, venv))
    return venv


def _base_python():
    """The interpreter the project's venv was made from (not the venv:
    a venv made from a venv would share nothing useful and confuse pip)."""
    return getattr(sys, "_base_executable", None) or "python3"


def _installed_version(python):
    if not os.path.exists(python):
        return None
    try:
        out, _ = executor.execute(python, "-c", "import fixtures, "
                                  "importlib.metadata as m; "
                                  "print(m.version('cinder'))")
    except Exception:   # no cinder, or a broken venv: reinstall
        return None
    return out.strip()


def lab_transport_url():
    """The lab's RabbitMQ URL (user, password, host) from its config."""
    for path in LAB_CONFIGS:
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(path)
        url = parser.get("DEFAULT", "transport_url", fallback=None)
        if url:
            return url
    raise SystemExit("no transport_url in %s" % ", ".join(LAB_CONFIGS))


def rabbitmqctl(*args, **kwargs):
    env = dict(os.environ, ERL_EPMD_ADDRESS="127.0.0.1",
               RABBITMQ_NODENAME=RABBIT_NODENAME)
    return executor.execute("rabbitmqctl", "-q", *args, env=env, **kwargs)


def free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


class UpstreamCinder:
    """cinder-api + scheduler + volume from ``venv``; see the module."""

    SERVICES = ("cinder-api", "cinder-scheduler", "cinder-volume")

    def __init__(self, venv=DEFAULT_VENV, log=print):
        self.venv = venv
        self.log = log
        self.vhost = "bench-cinder-%s" % uuid.uuid4().hex[:8]
        self.tmp = None
        self.procs = {}
        self.vhost_made = False
        self.url = None

    # --- start ---------------------------------------------------------

    def start(self, timeout=180):
        ensure_venv(self.venv, self.log)
        lab = urllib.parse.urlsplit(lab_transport_url())
        self.tmp = tempfile.mkdtemp(prefix="bench-cinder-upstream-")
        os.chmod(self.tmp, 0o700)
        rabbitmqctl("add_vhost", self.vhost)
        self.vhost_made = True
        rabbitmqctl("set_permissions", "-p", self.vhost,
                    urllib.parse.unquote(lab.username), ".*", ".*", ".*")
        transport = "%s://%s/%s" % (lab.scheme, lab.netloc,
                                    urllib.parse.quote(self.vhost, safe=""))
        port = free_port()
        conf = self._write_config(transport, port)
        self._run("cinder-manage", "--config-file", conf, "db", "sync",
                  wait=True)
        for name in self.SERVICES:
            self.procs[name] = self._run(name, "--config-file", conf)
        self.url = "http://127.0.0.1:%d" % port
        self._wait_api(timeout)
        return self.url

    def _write_config(self, transport, port):
        conf = configparser.ConfigParser(interpolation=None)
        conf["DEFAULT"] = {
            # noauth with the project in the URL, as minicinder's routes
            # and keystone's catalog have it (plain noauth drops it).
            "auth_strategy": "noauth_include_project_id",
            "transport_url": transport,
            "state_path": self.tmp,
            "log_dir": self.tmp,
            "api_paste_config": os.path.join(self.venv, "etc", "cinder",
                                             "api-paste.ini"),
            "osapi_volume_listen": "127.0.0.1",
            "osapi_volume_listen_port": str(port),
            "enabled_backends": "fake",
            "host": "bench-upstream",
            "debug": "False",
            # No periodic usage reports or image cache: nothing else runs.
            "periodic_interval": "60",
        }
        # Three processes (and the API's workers) write one SQLite file:
        # wait for its lock up to a minute, not pysqlite's 5 s, or a busy
        # box turns a wait into "database is locked" (a 500).
        conf["database"] = {"connection": "sqlite:///%s/cinder.sqlite"
                            "?timeout=60" % self.tmp}
        conf["oslo_concurrency"] = {"lock_path": os.path.join(self.tmp,
                                                              "locks")}
        conf["oslo_messaging_notifications"] = {"driver": "noop"}
        conf["coordination"] = {"backend_url": "file://%s/coordination"
                                % self.tmp}
        conf["fake"] = {"volume_driver": FAKE_DRIVER,
                        "volume_backend_name": "fake"}
        path = os.path.join(self.tmp, "cinder.conf")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            conf.write(handle)
        return path

    def _run(self, name, *args, wait=False):
        binary = os.path.join(self.venv, "bin", name)
        with open(os.path.join(self.tmp, "%s.out" % name), "ab") as out:
            proc = subprocess.Popen([binary, *args], stdout=out,
                                    stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        if wait and proc.wait(300):
            raise SystemExit("%s failed; see %s" % (name, self.tmp))
        return proc

    def _wait_api(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise SystemExit("upstream %s exited (%s); see %s"
                                     % (name, proc.returncode, self.tmp))
            try:
                requests.get(self.url + "/", timeout=2)
                return
            except requests.ConnectionError:
                time.sleep(0.3)
        raise SystemExit("upstream cinder-api did not answer; see %s"
                         % self.tmp)

    def api_pids(self):
        """The cinder-api parent and its workers (for CPU accounting)."""
        parent = self.procs["cinder-api"].pid
        out, _ = executor.execute("pgrep", "-g", str(parent),
                                  check_exit_code=[0, 1])
        return [int(p) for p in out.split()] or [parent]

    # --- stop ----------------------------------------------------------

    def stop(self, keep_tmp=False):
        """Stop the processes (by PID, their groups), delete the vhost and
        the temporary directory (kept when ``keep_tmp``: its logs)."""
        for proc in self.procs.values():
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
        for name, proc in self.procs.items():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                self.log("upstream %s ignored SIGTERM: killing" % name)
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait(10)
            # Workers a parent left behind in its group.
            _signal_group(proc.pid, signal.SIGKILL)
        self.procs = {}
        if self.vhost_made:
            rabbitmqctl("delete_vhost", self.vhost,
                        check_exit_code=[0, 2, 69, 70])
            self.vhost_made = False
        if self.tmp and not keep_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def _signal_group(pgid, signum):
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        pass
