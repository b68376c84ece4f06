"""Start-up: one clear line for each missing prerequisite, and exports
rebuilt from the database after a restart."""

import os
import subprocess
import uuid

import pytest

from ministack import executor
from tests.support.minicinder_daemon import NOVA
from tests.support.minicinder_daemon import Daemon
from tests.support.minicinder_daemon import Raw
from tests.support.minicinder_daemon import force_cleanup
from tests.support.minicinder_daemon import iscsi_inq


def _start_fails(daemon, env=None):
    with pytest.raises(RuntimeError) as info:
        daemon.start(timeout=20, env=env)
    assert "exited 1" in str(info.value)
    lines = [line for line in str(info.value).splitlines()
             if line.startswith("minicinder:") or " minicinder: " in line]
    assert lines, str(info.value)
    assert "Traceback" not in str(info.value)
    return lines[-1]


def test_missing_volume_group(tmp_path, volume_group):
    line = _start_fails(Daemon(tmp_path, "no-such-vg-%d" % os.getpid()))
    assert "Volume group no-such-vg" in line and "volume_group" in line


def test_unreachable_database(tmp_path, volume_group):
    d = Daemon(tmp_path, volume_group)
    text = d.conf_path.read_text().replace(
        "sqlite:///%s" % d.db_path,
        "postgresql+psycopg://u:p@127.0.0.1:9/cinder")
    d.conf_path.write_text(text)
    line = _start_fails(d)
    assert "[database] connection" in line


def test_missing_tool(tmp_path, volume_group):
    env = dict(os.environ, PATH="/usr/bin:/bin")   # no /usr/sbin
    line = _start_fails(Daemon(tmp_path, volume_group), env=env)
    assert "lvcreate" in line


def test_restart_rebuilds_exports(tmp_path, volume_group):
    """tgt forgets targets when it restarts; the daemon re-creates the
    target, CHAP account and ACL from the database when it starts."""
    daemon = Daemon(tmp_path, volume_group).start()
    raw = Raw(daemon.url)
    initiator = "iqn.2024-01.org.ministack.ftest:restart"
    volume_id = None
    try:
        volume_id = raw("POST", "/volumes", {"volume": {"size": 1}}).json()[
            "volume"]["id"]
        raw.wait_status(volume_id, "available")
        att = raw("POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4()),
            "connector": {"initiator": initiator, "host": "h"}}}).json()[
            "attachment"]
        info = att["connection_info"]
        daemon.stop()
        tid = info and executor.execute(
            "tgtadm", "--lld", "iscsi", "--mode", "target", "--op",
            "show")[0]
        assert info["target_iqn"] in tid
        _delete_target(info["target_iqn"])
        assert not iscsi_inq(info, initiator)
        daemon.start()
        assert iscsi_inq(info, initiator)
        assert not iscsi_inq(info, "iqn.2024-01.org.ministack.ftest:other")
        assert raw("DELETE", "/attachments/%s" % att["id"],
                   headers=NOVA).status_code == 200
    finally:
        if volume_id:
            force_cleanup(raw, volume_id, check=True)
        daemon.stop()


def _delete_target(iqn):
    out, _ = executor.execute("tgtadm", "--lld", "iscsi", "--mode",
                              "target", "--op", "show")
    for line in out.splitlines():
        if line.startswith("Target ") and line.endswith(": " + iqn):
            tid = line.split()[1].rstrip(":")
            subprocess.run(["tgtadm", "--lld", "iscsi", "--mode", "target",
                            "--op", "delete", "--force", "--tid", tid],
                           check=True)
