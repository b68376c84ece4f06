"""The audit's cross-checks on hand-made snapshots (no I/O)."""

import datetime

from ministack.ledgers import checks
from ministack.ledgers import snapshot

NOW = datetime.datetime(2024, 1, 1, 12, 0, 0)
OLD = NOW - datetime.timedelta(hours=1)
INST = "11111111-1111-1111-1111-111111111111"
VOL = "22222222-2222-2222-2222-222222222222"
ATT = "33333333-3333-3333-3333-333333333333"
IQN = "iqn.2004-10.org.ministack:host"


def snap(**kw):
    base = dict(
        instances={INST: {"uuid": INST, "host": "h", "domain": "dom",
                          "deleted": False}},
        bdms=[{"id": 1, "instance_uuid": INST, "volume_id": VOL,
               "attachment_id": ATT, "connection_info": {"serial": VOL},
               "device_name": "/dev/vdb", "updated_at": OLD}],
        volumes={VOL: {"id": VOL, "status": "in-use", "deleted": False,
                       "updated_at": OLD}},
        attachments=[{"id": ATT, "volume_id": VOL, "instance_uuid": INST,
                      "attach_status": "attached", "initiator": IQN,
                      "updated_at": OLD}],
        domains={"dom": {"instance_uuid": INST, "active": True, "disks": {
            "vda": {"serial": None, "live": True, "config": True},
            "vdb": {"serial": VOL, "live": True, "config": True}}}},
        targets=[{"tid": 1, "iqn": "iqn.x:volume-" + VOL, "volume_id": VOL,
                  "acls": [IQN], "backing": "/dev/loop5"}],
        lvs={"volume-" + VOL: {"volume_id": VOL,
                               "range": ("/dev/loop1", 1048576, 1 << 30)}},
        loops=[{"name": "/dev/loop5", "backing": "/dev/loop1",
                "offset": 1048576, "size": 1 << 30}],
        now=NOW, grace=60)
    base.update(kw)
    return snapshot.Snapshot(**base)


def kinds(s):
    return [d.kind for d in checks.run(s)]


def test_consistent_attach_has_no_divergence():
    assert kinds(snap()) == []


def test_attachment_deleted_behind_novas_back():
    found = checks.run(snap(attachments=[]))
    assert [d.kind for d in found] == ["bdm_without_attachment",
                                       "in_use_without_attachment",
                                       "export_without_attachment"]
    assert found[0].data["bdm_id"] == 1


def test_orphan_attachment_and_grace():
    s = snap(bdms=[], domains={})
    assert kinds(s) == ["orphan_attachment"]
    s.attachments[0]["updated_at"] = NOW - datetime.timedelta(seconds=5)
    assert kinds(s) == []            # still young: an attach in flight


def test_in_flight_instance_is_left_alone():
    assert kinds(snap(bdms=[], domains={}, in_flight={INST})) == []


def test_disk_without_bdm_and_bdm_disk_missing():
    s = snap(bdms=[])
    assert "disk_without_bdm" in kinds(s)
    s = snap()
    del s.domains["dom"]["disks"]["vdb"]
    assert kinds(s) == ["bdm_disk_missing"]


def test_detach_the_guest_finished_is_completed_not_rolled_back():
    s = snap()
    s.volumes[VOL]["status"] = "detaching"
    del s.domains["dom"]["disks"]["vdb"]
    assert kinds(s) == ["detach_unfinished"]
    s = snap()
    s.volumes[VOL]["status"] = "detaching"
    assert kinds(s) == ["stuck_detaching"]


def test_domain_of_deleted_instance():
    s = snap()
    s.instances[INST]["deleted"] = True
    assert "domain_without_instance" in kinds(s)


def test_exports():
    s = snap(volumes={})
    found = {d.kind: d for d in checks.run(s)}
    assert not found["export_without_volume"].safe   # unknown: keep
    s = snap()
    s.volumes[VOL]["deleted"] = True
    assert "export_without_volume" in kinds(s)
    assert kinds(snap(targets=[])) == ["missing_export"]


def test_lvm_and_loops():
    s = snap()
    s.volumes[VOL]["deleted"] = True
    s.volumes[VOL]["status"] = "deleted"
    assert "lv_without_volume" in kinds(s)
    [lost] = checks.run(snap(lvs={}, loops=[]))
    assert lost.kind == "volume_without_lv" and not lost.safe  # attached
    [lost] = checks.run(snap(lvs={}, loops=[], bdms=[], attachments=[],
                             domains={}, targets=[],
                             volumes={VOL: {"id": VOL, "status": "available",
                                            "deleted": False,
                                            "updated_at": OLD}}))
    assert lost.kind == "volume_without_lv" and lost.safe
    assert "error" in lost.fix
    extra = {"name": "/dev/loop9", "backing": "/dev/loop1",
             "offset": 1048576, "size": 1 << 30}
    s = snap()
    s.loops.append(extra)
    found = checks.run(s)
    assert [(d.kind, d.data["loop"]) for d in found] == [
        ("duplicate_loop", "/dev/loop9")]      # not the one tgt uses
    s = snap()
    s.loops.append(dict(extra, offset=0))
    assert kinds(s) == ["leftover_loop"]
    s.all_loops = False
    assert kinds(s) == []


def test_partial_snapshot_skips_unread_ledgers():
    assert kinds(snap(targets=None, lvs=None, loops=None,
                      volumes=None)) == []
