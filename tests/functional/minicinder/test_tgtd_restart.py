"""A tgtd restart loses every export; minicinder rebuilds them from its
database within ``export_check_interval`` seconds.

There is one tgtd per host (it owns port 3260), so this test restarts the
*shared* one with devstack's own ``stop_tgt`` / ``start_tgt`` — which drops
every target on the host, other people's included. It therefore runs only
with ``MINISTACK_SHARED_FAULTS=1`` (set in CI, where nothing else runs).
"""

import os
import subprocess
import time
import uuid

import pytest

from minicinder.volume.targets import tgt
from tests.support import waiting
from tests.support.minicinder_daemon import NOVA
from tests.support.minicinder_daemon import Daemon
from tests.support.minicinder_daemon import Raw
from tests.support.minicinder_daemon import force_cleanup
from tests.support.minicinder_daemon import iscsi_inq

DEVSTACK = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))), "devstack")
INITIATOR = "iqn.2024-01.org.ministack.ftest:tgtd-%s" % uuid.uuid4().hex[:8]
STRANGER = "iqn.2024-01.org.ministack.ftest:stranger"

pytestmark = pytest.mark.skipif(
    os.environ.get("MINISTACK_SHARED_FAULTS") != "1",
    reason="restarts the host's shared tgtd; set MINISTACK_SHARED_FAULTS=1")


def restart_tgtd():
    """devstack's stop_tgt + start_tgt; returns (old pid, new pid)."""
    script = ('source "$TOP_DIR/functions"; source "$TOP_DIR/stackrc"; '
              'source "$TOP_DIR/lib/tgt"; old=$(read_pid tgtd); stop_tgt; '
              'start_tgt; echo "$old $(read_pid tgtd)"')
    proc = subprocess.run(["bash", "-c", script], cwd=DEVSTACK,
                          env=dict(os.environ, TOP_DIR=DEVSTACK),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    old, new = proc.stdout.split()[-2:]
    return old, new


def _wait_export(iqn, accounts, timeout=30):
    """The target back in tgtd with its LUN, CHAP account and our ACL."""
    def rebuilt(target):
        return bool(target) and INITIATOR in target["acls"] and \
            target["accounts"] == accounts and \
            1 in [lun["lun"] for lun in target["luns"]]
    return waiting.wait_for("export %s to be rebuilt" % iqn,
                            lambda: tgt.TgtAdm().find_target(iqn), rebuilt,
                            timeout=timeout, interval=0.2)


def test_attached_volume_export_survives_tgtd_restart(tmp_path,
                                                      volume_group):
    daemon = Daemon(tmp_path, volume_group, export_check_interval="2")
    daemon.start()
    raw = Raw(daemon.url)
    volume_id = None
    try:
        resp = raw("POST", "/volumes", {"volume": {"size": 1}})
        assert resp.status_code == 202, resp.text
        volume_id = resp.json()["volume"]["id"]
        raw.wait_status(volume_id, "available")
        att = raw("POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4()),
            "connector": {"initiator": INITIATOR, "host": "ftest"}}},
            version="3.54").json()["attachment"]
        assert raw("POST", "/attachments/%s/action" % att["id"],
                   {"os-complete": {}}).status_code == 204
        info = att["connection_info"]
        iqn = info["target_iqn"]
        assert iscsi_inq(info, INITIATOR)
        before = tgt.TgtAdm().find_target(iqn)
        assert before["accounts"] == [info["auth_username"]]

        old_pid, new_pid = restart_tgtd()
        restarted = time.monotonic()
        assert old_pid != new_pid, "tgtd was not restarted"

        after = _wait_export(iqn, before["accounts"])
        rebuilt_in = time.monotonic() - restarted
        print("export rebuilt %.1fs after the tgtd restart" % rebuilt_in)
        assert rebuilt_in < 15
        assert after["acls"] == [INITIATOR]       # nobody else admitted
        # The same credentials the guest already holds work again; CHAP
        # and the ACL are enforced again.
        assert iscsi_inq(info, INITIATOR)
        assert not iscsi_inq(info, INITIATOR, with_chap=False)
        assert not iscsi_inq(info, STRANGER)
        assert "was missing from the target daemon" in daemon.log()
        assert raw("DELETE", "/attachments/%s" % att["id"],
                   headers=NOVA).status_code == 200
    finally:
        if volume_id:
            force_cleanup(raw, volume_id, check=True)
        daemon.stop()
