"""The attach/detach journey on live guests, end to end and for real.

Each test drives miniapi's REST API (``os-volume_attachments``) exactly as
``openstack server add volume`` does, then checks every layer the seed
journey names: Cinder's volume status, nova's ``block_device_mapping``
row, ``virsh domblklist``, and the disk inside the guest (by its serial,
through the guest agent). Guests are shared by the module (``guests``);
every test detaches what it attached.
"""

import concurrent.futures
import os
import threading
import time

import pytest

from tests.support import journey
from tests.support import private_stack
from tests.support import waiting

pytestmark = pytest.mark.slow

VG = private_stack.VG
ORDER = ["available", "reserved", "attaching", "in-use", "detaching"]


class StatusRecorder:
    """Polls a volume's status in the background; the distinct sequence."""

    def __init__(self, cinder, volume_id, interval=0.02):
        self.cinder, self.volume_id, self.interval = cinder, volume_id, \
            interval
        self.seen = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self):
        status = self.cinder.status(self.volume_id)
        if not self.seen or self.seen[-1] != status:
            self.seen.append(status)

    def _run(self):
        while not self._stop.is_set():
            self._sample()
            # A sampler, not a wait: the pace of its samples.
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)
        # The state the block ended in: the thread may have slept through
        # it (a detach that ends within one interval of the block's end
        # was seen as [in-use, detaching] in a dry run).
        self._sample()


def _attach_ok(stack, server, volume_id, **kwargs):
    resp = stack["nova"].attach(server, volume_id, **kwargs)
    assert resp.status_code == 200, resp.text
    return resp.json()["volumeAttachment"]


def _wait_attached(stack, server, volume_id):
    probe = stack["probe"]
    stack["cinder"].wait_status(volume_id, "in-use")
    dom = probe.domain_name(server)
    return waiting.wait_for(
        "volume %s visible in %s" % (volume_id, dom),
        lambda: probe.guest_dev_for(dom, volume_id), timeout=30)


def _detach_ok(stack, server, volume_id, final="available"):
    resp = stack["nova"].detach(server, volume_id)
    assert resp.status_code == 202, resp.text
    stack["cinder"].wait_status(volume_id, final)
    waiting.wait_for("BDM of %s gone" % volume_id,
                     lambda: stack["probe"].bdm(server, volume_id) is None,
                     timeout=30)


def test_attach_detach_on_running_guest(stack, guests, volumes):
    """available→reserved→in-use→detaching→available, on every layer."""
    cinder, probe, nova = stack["cinder"], stack["probe"], stack["nova"]
    server = guests[0]
    dom = probe.domain_name(server)
    vid = volumes("journey")
    before = probe.domblklist(dom)

    with StatusRecorder(cinder, vid) as rec:
        att = _attach_ok(stack, server, vid)
        # The API phase is over: the BDM exists and Cinder reserved it.
        bdm = probe.bdm(server, vid)
        assert bdm is not None and bdm["attachment_id"]
        dev_in_guest = _wait_attached(stack, server, vid)
    assert att["device"] == bdm["device_name"] == "/dev/vdb"
    assert rec.seen[0] == "available" and rec.seen[-1] == "in-use", rec.seen
    assert [ORDER.index(s) for s in rec.seen] == sorted(
        ORDER.index(s) for s in rec.seen), rec.seen

    bdm = probe.bdm(server, vid)
    info = journey.json.loads(bdm["connection_info"])
    assert info["serial"] == vid
    assert info["driver_volume_type"] == "iscsi"
    assert "vdb" in probe.domblklist(dom) and "vdb" not in before
    assert dev_in_guest == "vdb"
    vol = cinder.show(vid)
    assert [a["server_id"] for a in vol["attachments"]] == [server]
    assert [a["volumeId"] for a in nova.attachments(server)] == [vid]

    with StatusRecorder(cinder, vid) as rec:
        _detach_ok(stack, server, vid)
    # in-use until DELETE's begin_detaching, then detaching until the
    # compute host deleted the attachment.
    assert rec.seen == ["in-use", "detaching", "available"], rec.seen
    assert "vdb" not in probe.domblklist(dom)
    assert probe.guest_dev_for(dom, vid) is None
    assert nova.attachments(server) == []
    assert cinder.attachments(vid) == []

    for name in ("attach_volume", "detach_volume"):
        detail = nova.finished_action(server, name)
        events = {e["event"]: e["result"] for e in detail["events"]}
        assert events == {"compute_%s" % name: "Success"}, detail


def test_data_moves_between_guests(stack, guests, volumes):
    """Bytes written in guest A are read back identically in guest B."""
    probe = stack["probe"]
    a, b = guests
    vid = volumes("data")
    payload = os.urandom(4096)

    _attach_ok(stack, a, vid)
    dev = _wait_attached(stack, a, vid)
    probe.write_block(probe.domain_name(a), dev, payload)
    _detach_ok(stack, a, vid)

    _attach_ok(stack, b, vid)
    dev = _wait_attached(stack, b, vid)
    assert probe.read_block(probe.domain_name(b), dev, 4096) == payload
    _detach_ok(stack, b, vid)


def test_eight_volumes_at_once(stack, guests, volumes):
    """8 parallel attaches: 8 distinct device names, all in-use."""
    probe = stack["probe"]
    server = guests[1]
    dom = probe.domain_name(server)
    journey.wait_for_vg_space(VG, 8)
    vids = [volumes("many%d" % i) for i in range(8)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(
            lambda v: stack["nova"].attach(server, v), vids))
    assert [r.status_code for r in results] == [200] * 8, \
        [r.text for r in results]
    devices = [r.json()["volumeAttachment"]["device"] for r in results]
    assert len(set(devices)) == 8, devices
    for vid in vids:
        stack["cinder"].wait_status(vid, "in-use")
    serials = waiting.wait_for(
        "8 volumes in the guest",
        lambda: (lambda s: s if len(s) >= 9 else None)(
            probe.guest_serials(dom)), timeout=60)
    for vid in vids:
        assert any(s and vid.startswith(s) for s in serials.values()), vid
    assert len(probe.domblklist(dom)) == 9
    for vid in vids:
        _detach_ok(stack, server, vid)
    assert list(probe.domblklist(dom)) == ["vda"]


def test_race_for_one_volume(stack, guests, volumes):
    """Two guests race for a non-multiattach volume: exactly one wins."""
    probe = stack["probe"]
    vid = volumes("race")
    barrier = threading.Barrier(2)

    def attach(server):
        barrier.wait()
        return server, stack["nova"].attach(server, vid)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(attach, guests))
    codes = sorted(r.status_code for _, r in results)
    assert codes == [200, 400], [r.text for _, r in results]
    winner = next(s for s, r in results if r.status_code == 200)
    loser = next(s for s, r in results if r.status_code != 200)
    loser_body = next(r for _, r in results if r.status_code != 200).json()
    assert loser_body["badRequest"]["code"] == 400
    _wait_attached(stack, winner, vid)
    assert probe.bdm(loser, vid) is None
    assert [a["server_id"] for a in stack["cinder"].show(vid)
            ["attachments"]] == [winner]
    assert len(stack["cinder"].attachments(vid)) == 1
    _detach_ok(stack, winner, vid)


def test_multiattach_two_guests_share_data(stack, guests, volumes,
                                          multiattach_type):
    """A multiattach volume in both guests: both see the same bytes."""
    cinder, probe = stack["cinder"], stack["probe"]
    vid = volumes("multi", volume_type=multiattach_type)
    a, b = guests
    _attach_ok(stack, a, vid)
    dev_a = _wait_attached(stack, a, vid)
    _attach_ok(stack, b, vid)
    dev_b = _wait_attached(stack, b, vid)
    assert sorted(x["server_id"] for x in cinder.show(vid)
                  ["attachments"]) == sorted([a, b])
    payload = os.urandom(4096)
    probe.write_block(probe.domain_name(a), dev_a, payload)
    assert probe.read_block(probe.domain_name(b), dev_b, 4096) == payload
    _detach_ok(stack, a, vid, final="in-use")
    _detach_ok(stack, b, vid)


def test_device_name_is_ignored_and_bad_one_rejected(stack, guests,
                                                     volumes):
    """libvirt ignores a supplied name; a malformed one is a clean 400."""
    server = guests[0]
    vid = volumes("named")
    bad = stack["nova"].attach(server, vid, device="/dev/1bad")
    assert bad.status_code == 400, bad.text
    assert stack["probe"].bdm(server, vid) is None
    assert stack["cinder"].status(vid) == "available"
    att = _attach_ok(stack, server, vid, device="/dev/vdz")
    assert att["device"] == "/dev/vdb"
    _wait_attached(stack, server, vid)
    _detach_ok(stack, server, vid)


def test_volume_survives_stop_start(stack, guests, volumes):
    """Attached, stopped, started: the disk is back in the guest."""
    nova, probe = stack["nova"], stack["probe"]
    server = guests[1]
    dom = probe.domain_name(server)
    vid = volumes("power")
    _attach_ok(stack, server, vid)
    _wait_attached(stack, server, vid)
    for action, status in (("os-stop", "SHUTOFF"), ("os-start", "ACTIVE")):
        resp = nova.req("POST", "/servers/%s/action" % server,
                        json={action: None})
        assert resp.status_code == 202, resp.text
        nova.wait_server(server, status, timeout=120)
    waiting.wait_for("volume back in %s" % dom,
                     lambda: probe.guest_dev_for(dom, vid), timeout=60)
    assert stack["cinder"].status(vid) == "in-use"
    _detach_ok(stack, server, vid)
