"""minicinder with two API worker processes (``osapi_volume_workers = 2``),
on real LVM and tgt: requests of one volume land on both workers, the
handshakes of several volumes run at once across them, every export
answers over iSCSI, and the volume locks are file locks between them.
"""

import concurrent.futures
import os
import re
import signal
import uuid

import pytest

from tests.functional.minicinder.test_handshake import connector
from tests.support import processes
from tests.support import waiting
from tests.support.minicinder_daemon import NOVA
from tests.support.minicinder_daemon import Daemon
from tests.support.minicinder_daemon import Raw
from tests.support.minicinder_daemon import force_cleanup
from tests.support.minicinder_daemon import iscsi_inq
from tests.support.minicinder_daemon import target_names


@pytest.fixture
def workers_daemon(tmp_path, volume_group):
    d = Daemon(tmp_path, volume_group, osapi_volume_workers="2",
               osapi_volume_threads="4")
    d.start()
    yield d
    d.stop()
    assert d.proc.returncode == 0, d.log()


@pytest.fixture
def workers_raw(workers_daemon):
    return Raw(workers_daemon.url)


@pytest.fixture
def make_volumes(workers_raw):
    created = []

    def _make(count):
        for _ in range(count):
            resp = workers_raw("POST", "/volumes", {"volume": {
                "size": 1, "name": "ftest-workers"}})
            assert resp.status_code == 202, resp.text
            created.append(resp.json()["volume"]["id"])
        for volume_id in created[-count:]:
            workers_raw.wait_status(volume_id, "available")
        return created[-count:]

    yield _make
    for volume_id in created:
        force_cleanup(workers_raw, volume_id)


def _handshake(raw, volume_id, initiator):
    """reserve -> connect -> complete; the connection info."""
    att = raw("POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4())}},
        headers=NOVA)
    assert att.status_code == 200, att.text
    att_id = att.json()["attachment"]["id"]
    resp = raw("PUT", "/attachments/%s" % att_id, {"attachment": {
        "connector": connector(initiator)}}, headers=NOVA)
    assert resp.status_code == 200, resp.text
    info = resp.json()["attachment"]["connection_info"]
    resp = raw("POST", "/attachments/%s/action" % att_id,
               {"os-complete": None}, headers=NOVA)
    assert resp.status_code == 204, resp.text
    return att_id, info


def test_two_workers_serve_and_the_parent_does_not(workers_daemon,
                                                   workers_raw,
                                                   make_volumes):
    workers = processes.children(workers_daemon.proc.pid)
    assert len(workers) == 2
    [volume_id] = make_volumes(1)
    for _ in range(40):
        # A new connection each time: either worker may accept it.
        assert workers_raw("GET", "/volumes/%s" % volume_id).ok
    served = {int(pid) for pid in re.findall(
        r"^\S+ \S+ (\d+) INFO minicinder\.api\.app ", workers_daemon.log(),
        re.MULTILINE)}
    assert served == set(workers)


def test_handshakes_at_once_across_workers(workers_daemon, workers_raw,
                                           make_volumes, tmp_path):
    volumes = make_volumes(4)
    initiators = {volume_id: "iqn.2024-01.org.ministack.ftest:w%d-%s" % (
        n, uuid.uuid4().hex[:6]) for n, volume_id in enumerate(volumes)}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = dict(zip(volumes, pool.map(
            lambda v: _handshake(workers_raw, v, initiators[v]), volumes),
            strict=True))
    iqns = set()
    for volume_id, (att_id, info) in done.items():
        volume = workers_raw.wait_status(volume_id, "in-use")
        assert volume["attachments"][0]["attachment_id"] == att_id
        # Each export is its own target, reachable by its initiator only.
        assert info["target_iqn"] in target_names()
        assert iscsi_inq(info, initiators[volume_id])
        iqns.add(info["target_iqn"])
    assert len(iqns) == 4
    lock_dir = tmp_path / "lock"
    assert {"minicinder-volume-%s" % v for v in volumes} <= set(
        os.listdir(lock_dir))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda att: workers_raw(
            "DELETE", "/attachments/%s" % att, headers=NOVA).status_code,
            [att for att, _ in done.values()]))
    assert codes == [200] * 4
    for volume_id in volumes:
        workers_raw.wait_status(volume_id, "available")
        assert workers_raw("DELETE", "/volumes/%s" % volume_id).status_code \
            == 202
    for volume_id in volumes:
        workers_raw.wait_status(volume_id, "deleted")
        assert "iqn.2010-10.org.openstack:volume-%s" % volume_id \
            not in target_names()
    # A deleted volume's lock file goes with it.
    assert not {"minicinder-volume-%s" % v for v in volumes} & set(
        os.listdir(lock_dir))


def test_concurrent_reserve_one_wins_across_workers(workers_raw,
                                                    make_volumes):
    [volume_id] = make_volumes(1)

    def reserve(_):
        return workers_raw("POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id,
            "instance_uuid": str(uuid.uuid4())}}).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = sorted(pool.map(reserve, range(8)))
    assert codes == [200] + [400] * 7
    [att] = workers_raw("GET", "/attachments?volume_id=%s"
                        % volume_id).json()["attachments"]
    assert workers_raw("DELETE", "/attachments/%s" % att["id"]).ok


def test_a_dead_worker_stops_the_daemon(tmp_path, volume_group):
    """The supervisor restarts a daemon that exits; a daemon limping on
    with one worker would not be restarted."""
    d = Daemon(tmp_path, volume_group, osapi_volume_workers="2")
    d.start()
    try:
        victim, survivor = processes.children(d.proc.pid)
        os.kill(victim, signal.SIGKILL)
        assert d.proc.wait(timeout=60) == 1
        waiting.wait_for("the other worker to stop",
                         lambda: processes.gone(survivor), timeout=60)
        assert "API worker %d exited (signal SIGKILL)" % victim in d.log()
    finally:
        d.stop()
