"""minicinder's tgtadm requests over tgtd's socket, against the real tgtd
and the real tgtadm: what one does, the other sees, and both fail alike.

minicinder sends every tgtadm request straight to tgtd's management socket
(:func:`minicinder.volume.targets.tgtd_socket.execute`, issue 16);
operators keep using ``tgtadm``. This checks that both views of one
export agree.
"""

import os
import shutil
import subprocess
import uuid

import pytest

from minicinder.volume.targets import tgt
from minicinder.volume.targets import tgtd_socket
from ministack import exception as ms_exception
from ministack import executor

pytestmark = pytest.mark.skipif(
    shutil.which("tgtadm") is None or os.geteuid() != 0
    or not os.path.exists(tgtd_socket.SOCKET_PATH % 0),
    reason="needs root and a running tgtd (devstack/stack.sh)")

SUFFIX = uuid.uuid4().hex[:8]
IQN = "iqn.2010-10.org.openstack:ftest-socket-%s" % SUFFIX
INITIATOR = "iqn.2024-01.org.ministack.ftest:socket-%s" % SUFFIX


def _tgtadm_show():
    return subprocess.run(["tgtadm", "--lld", "iscsi", "--mode", "target",
                           "--op", "show"], capture_output=True, text=True,
                          check=True, timeout=60).stdout


@pytest.fixture
def backing(tmp_path):
    path = tmp_path / "lun.img"
    with open(path, "wb") as f:
        f.truncate(8 * 1024 * 1024)
    return str(path)


def test_an_export_made_over_the_socket_is_what_tgtadm_shows(backing):
    over_socket = tgt.TgtAdm(execute=tgtd_socket.execute)
    by_process = tgt.TgtAdm(execute=executor.execute)
    user = "ftest%s" % SUFFIX
    try:
        tid = over_socket.create_target(IQN, backing, chap=(
            user, uuid.uuid4().hex), initiators=[INITIATOR])
        seen = by_process.find_target(IQN)
        assert seen["tid"] == tid
        assert seen["acls"] == [INITIATOR]
        assert seen["accounts"] == [user]
        assert [lun["backing_store"] for lun in seen["luns"]] == \
            [None, backing]
        # The show text itself, byte for byte (tgtd's NUL dropped).
        assert tgtd_socket.execute("tgtadm", "--lld", "iscsi", "--mode",
                                   "target", "--op", "show")[0] \
            == _tgtadm_show()
        # A refusal fails as tgtadm's does: exit 22, the same words.
        argv = ("tgtadm", "--lld", "iscsi", "--mode", "target", "--op",
                "new", "--tid", str(tid), "--targetname", IQN)
        with pytest.raises(ms_exception.ProcessExecutionError) as socket_err:
            tgtd_socket.execute(*argv)
        with pytest.raises(ms_exception.ProcessExecutionError) as exec_err:
            executor.execute(*argv)
        assert socket_err.value.exit_code == exec_err.value.exit_code == 22
        assert socket_err.value.stderr.strip() == \
            exec_err.value.stderr.strip()
        over_socket.unbind_initiator(IQN, INITIATOR, tid=tid)
        assert by_process.find_target(IQN)["acls"] == []
    finally:
        over_socket.delete_target(IQN)
    assert by_process.find_target(IQN) is None
    assert user not in by_process.list_accounts()
