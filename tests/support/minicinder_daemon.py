"""A real minicinder daemon on real LVM and tgt, and the probes of its
exports, for functional tests (the fixtures that use them are in
``tests/functional/minicinder/conftest.py``).

The daemon is the installed ``minicinder`` console script, started as a
subprocess with a temporary config, a temporary SQLite database and a free
port. ``Raw`` speaks raw HTTP to it as a user of a project; the probes
read LVM, tgt and libiscsi's ``iscsi-inq`` directly.
"""

import configparser
import os
import signal
import subprocess
import sys
import uuid

import requests

from ministack import executor
from tests.support import daemons
from tests.support import waiting

LAB_VG = "stack-volumes-lvmdriver-1"
NO_DM = ("--config", "global{activation=0}")
PROJECT = "f0c1d2e3a4b5c6d7e8f9a0b1c2d3e4f5"
# Sent by Nova (minicompute's adapter) with every call: in noauth mode its
# presence marks the caller as a service, which alone may tear down an
# attachment Nova is using (OSSA-2023-003).
NOVA = {"X-Service-Token": "nova"}


def run(*argv, check=True):
    """Run a storage command as root (ministack's executor): (out, err)."""
    return executor.execute(*argv, check_exit_code=check)


def vg_exists(name):
    """Whether LVM has a volume group called ``name``."""
    out, _ = run("vgs", "--noheadings", "-o", "vg_name", check=False)
    return name in out.split()


class Daemon:
    """A running minicinder subprocess."""

    def __init__(self, tmp_path, volume_group, **extra):
        self.port = daemons.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.conf_path = tmp_path / "minicinder.conf"
        self.log_path = tmp_path / "minicinder.log"
        self.db_path = tmp_path / "cinder.sqlite"
        parser = configparser.RawConfigParser()
        parser.optionxform = str
        defaults = {
            "host": "ftest-%s" % uuid.uuid4().hex[:8],
            "state_path": str(tmp_path),
            "my_ip": "127.0.0.1",
            "target_ip_address": daemons.PORTAL_IP,
            "osapi_volume_listen": "127.0.0.1",
            "osapi_volume_listen_port": str(self.port),
            "volume_group": volume_group,
            "log_file": str(self.log_path),
            "debug": "false",
        }
        defaults.update(extra)
        for key, value in defaults.items():
            parser.set("DEFAULT", key, value)
        parser.add_section("database")
        parser.set("database", "connection", "sqlite:///%s" % self.db_path)
        with open(self.conf_path, "w") as handle:
            parser.write(handle)
        self.proc = None

    def start(self, timeout=30, env=None):
        binary = os.path.join(os.path.dirname(sys.executable), "minicinder")
        self.proc = subprocess.Popen(
            [binary, "--config-file", str(self.conf_path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True, env=env)

        def answers():
            if self.proc.poll() is not None:
                out, err = self.proc.communicate()
                raise RuntimeError("minicinder exited %s: %s %s"
                                   % (self.proc.returncode, out, err))
            return requests.get(self.url + "/", timeout=1).status_code == 300
        try:
            waiting.wait_for("minicinder to answer on %s" % self.url,
                             answers, timeout=timeout, interval=0.2,
                             ignoring=requests.ConnectionError)
        except waiting.WaitTimeout:
            self.stop()
            raise RuntimeError("minicinder did not answer on %s" % self.url)
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self):
        return self.log_path.read_text() if self.log_path.exists() else ""


class Raw:
    """requests against the daemon as ``user`` of ``project``."""

    def __init__(self, base, project=PROJECT, user="admin", version="3.44"):
        self.base = base
        self.project = project
        self.user = user
        self.version = version

    def __call__(self, method, path, body=None, version="default", **kw):
        headers = {"X-Auth-Token": "%s:%s" % (self.user, self.project)}
        version = self.version if version == "default" else version
        if version:
            headers["OpenStack-API-Version"] = "volume %s" % version
        headers.update(kw.pop("headers", {}))
        url = path if path.startswith("http") else \
            "%s/v3/%s%s" % (self.base, self.project, path)
        return requests.request(method, url, json=body, headers=headers,
                                timeout=60, **kw)

    def wait_status(self, volume_id, wanted, timeout=60):
        """Poll the volume until ``wanted``; fail fast on error states."""
        def get():
            resp = self("GET", "/volumes/%s" % volume_id)
            if resp.status_code == 404:
                return "deleted", None
            volume = resp.json()["volume"]
            return volume["status"], volume
        return waiting.wait_for(
            "volume %s to be %s" % (volume_id, wanted), get,
            lambda got: got[0] == wanted,
            lambda got: got[0].startswith("error"), timeout=timeout,
            interval=0.1)[1]


def force_cleanup(raw, volume_id, check=False):
    """Reset the volume to available/detached and delete it.

    :param check: fail (AssertionError) if it is not gone in time;
        otherwise a fixture's cleanup goes on regardless.
    """
    resp = raw("GET", "/volumes/%s" % volume_id)
    if resp.status_code == 404:
        return
    raw("POST", "/volumes/%s/action" % volume_id,
        {"os-reset_status": {"status": "available",
                             "attach_status": "detached"}})
    raw("DELETE", "/volumes/%s" % volume_id)
    try:
        raw.wait_status(volume_id, "deleted")
    except AssertionError:
        if check:
            raise


def lv_names(volume_group):
    out, _ = run("lvs", *NO_DM, "--noheadings", "-o", "lv_name",
                  volume_group, check=False)
    return out.split()


def target_names():
    out, _ = run("tgtadm", "--lld", "iscsi", "--mode", "target", "--op",
                  "show")
    return [line.split(": ", 1)[1] for line in out.splitlines()
            if line.startswith("Target ")]


def iscsi_inq(connection_info, initiator, with_chap=True):
    """Log in with libiscsi's iscsi-inq; True when the LUN answers."""
    auth = ""
    if with_chap:
        auth = "%s%%%s@" % (connection_info["auth_username"],
                            connection_info["auth_password"])
    url = "iscsi://%s%s/%s/%s" % (auth, connection_info["target_portal"],
                                 connection_info["target_iqn"],
                                 connection_info["target_lun"])
    out, _ = run("iscsi-inq", "-i", initiator, url, check=False)
    return "DIRECT_ACCESS" in out
