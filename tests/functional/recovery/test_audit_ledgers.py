"""Corrupt each ledger in turn: ``ministack-audit`` finds it, ``--fix``
repairs it, and a second ``--fix`` finds nothing (idempotent).

The compute's own reconciler would repair most of these too, after its
10 s grace; the audit runs with no grace and is called at once, so what
is checked here is the audit. Each case starts from one attached volume.
"""

import os
import shutil
import tempfile
import uuid

import pytest
import requests
import sqlalchemy as sa

from ministack import executor
from tests.functional.recovery import checks
from tests.support import journey
from tests.support import private_stack
from tests.support import waiting

pytestmark = pytest.mark.slow

VIRSH = ("virsh", "-c", "qemu:///system")


def _cinder(stack, method, path, **kw):
    """Raw Cinder calls acting as a service: the corruption tests go behind
    Nova's back on purpose, which Cinder refuses to plain users (409)."""
    return requests.request(
        method, "%s/v3/%s%s" % (stack["cinder"].url, journey.PROJECT, path),
        headers=dict(journey.HEADERS, **{
            "OpenStack-API-Version": "volume 3.44",
            "X-Service-Token": "fault-test"}),
        timeout=60, **kw)


def _find_and_fix(stack, kind):
    rc, report = stack.audit()
    assert rc == 1, report
    assert kind in [d["kind"] for d in report["found"]], report
    rc, report = stack.audit("--fix")
    # 1: found and all repaired; 0: the host's reconciler (which runs
    # every 3 s) repaired it between the two audits.
    assert rc in (0, 1), journey.dumps(report)
    assert report["remaining"] == [], journey.dumps(report)
    assert all(d["fixed"] for d in report["found"]), journey.dumps(report)
    rc, report = stack.audit("--fix")
    assert (rc, report["found"]) == (0, []), journey.dumps(report)


def _detach(stack, server, vid):
    if stack["probe"].bdm(server, vid) is not None:
        assert stack["nova"].detach(server, vid).status_code == 202
    stack["cinder_api"].wait_status(vid, "available", timeout=60)


def test_attachment_deleted_behind_novas_back(stack, guest, volumes):
    vid = volumes("corrupt-att")
    checks.attach_ok(stack, guest, vid)
    [att] = stack["cinder_api"].attachments(vid)
    assert _cinder(stack, "DELETE", "/attachments/%s" % att["id"]
                   ).status_code == 200
    _find_and_fix(stack, "bdm_without_attachment")
    checks.assert_clean(stack, guest, [vid])


def test_disk_removed_with_virsh(stack, guest, volumes):
    vid = volumes("corrupt-disk")
    checks.attach_ok(stack, guest, vid)
    dom = stack["probe"].domain_name(guest)
    executor.execute(*VIRSH, "detach-disk", dom, "vdb", "--live",
                     "--config")
    waiting.wait_for("disk gone", lambda: "vdb" not in
                     stack["probe"].domblklist(dom), timeout=30)
    _find_and_fix(stack, "bdm_disk_missing")
    waiting.wait_for("disk back in the guest",
                     lambda: stack["probe"].guest_dev_for(dom, vid),
                     timeout=30)
    _detach(stack, guest, vid)
    checks.assert_clean(stack, guest, [vid])


def test_disk_added_with_virsh(stack, guest, volumes, tmp_path):
    """A disk whose serial is a volume id nova knows nothing about."""
    dom = stack["probe"].domain_name(guest)
    # QEMU runs as libvirt-qemu: the image must sit where it can reach it
    # (the lab's tmp directory), not in pytest's private tmp_path.
    lab_tmp = os.path.join(private_stack.LAB_DATA_DIR, "tmp")
    os.makedirs(lab_tmp, exist_ok=True)
    stray_dir = tempfile.mkdtemp(prefix="stray-", dir=lab_tmp)
    os.chown(stray_dir, -1, os.stat(private_stack.LAB_DATA_DIR).st_gid)
    os.chmod(stray_dir, 0o750)
    backing = os.path.join(stray_dir, "stray.img")
    with open(backing, "wb") as f:
        f.write(b"\0" * (1 << 20))
    xml = tmp_path / "disk.xml"
    xml.write_text(
        "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
        "<source file='%s'/><target dev='vdc' bus='virtio'/>"
        "<serial>%s</serial></disk>" % (backing, uuid.uuid4()))
    # The host's reconciler unplugs such disks within seconds; hold it so
    # this checks the audit's own finding and repair.
    checks.signal_daemon(stack["compute"], checks.SIGSTOP)
    try:
        executor.execute(*VIRSH, "attach-device", dom, str(xml), "--live",
                         "--config")
        _find_and_fix(stack, "disk_without_bdm")
    finally:
        checks.signal_daemon(stack["compute"], checks.SIGCONT)
        shutil.rmtree(stray_dir, ignore_errors=True)
    checks.assert_clean(stack, guest, [])


def test_orphan_attachment_and_extra_acl(stack, guest, volumes):
    vid = volumes("corrupt-orphan")
    # The host's reconciler repairs orphan attachments of its instances
    # within seconds; hold it so this checks the audit's own repair.
    checks.signal_daemon(stack["compute"], checks.SIGSTOP)
    try:
        _orphan_and_acl(stack, guest, vid)
    finally:
        checks.signal_daemon(stack["compute"], checks.SIGCONT)
    checks.assert_clean(stack, guest, [vid])


def _orphan_and_acl(stack, guest, vid):
    resp = _cinder(stack, "POST", "/attachments", json={"attachment": {
        "volume_uuid": vid, "instance_uuid": guest, "connector": {
            "initiator": "iqn.1994-05.com.example:intruder",
            "host": "elsewhere", "ip": "192.0.2.1"}}})
    assert resp.status_code == 200, resp.text
    _find_and_fix(stack, "orphan_attachment")
    # An ACL entry nobody's attachment accounts for.
    from minicinder.volume.targets import tgt
    target = next(t for t in tgt.TgtAdm().show_targets()
                  if t["iqn"].endswith(vid))
    tgt.TgtAdm().bind_initiator(target["tid"], "iqn.1994-05.com.x:stray")
    _find_and_fix(stack, "export_without_attachment")


def test_volume_status_and_loop_device(stack, guest, volumes):
    vid = volumes("corrupt-status")
    engine = sa.create_engine(stack["cinder_db"])
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE volumes SET status='in-use', "
                             "attach_status='attached' WHERE id=:v"),
                     {"v": vid})
    engine.dispose()
    _find_and_fix(stack, "in_use_without_attachment")
    # A second loop device over the volume's LV.
    from minicinder.volume.drivers import lvm
    vg = lvm.LVM(private_stack.VG)
    name = "volume-%s-%s" % (stack["tag"], vid)
    pv, offset, size = vg.extent_range(name)
    out, _ = executor.execute("losetup", "--show", "-f", "-o", offset,
                              "--sizelimit", size, pv)
    try:
        if len(vg.find_loops(pv, offset, size)) > 1:
            _find_and_fix(stack, "duplicate_loop")
    finally:
        if out.strip() in vg.find_loops(pv, offset, size)[1:]:
            executor.execute("losetup", "-d", out.strip())
    checks.assert_clean(stack, guest, [vid])


def test_lv_removed_behind_cinders_back(stack, guest, volumes):
    """The LVM ledger loses a volume: its data is gone, so the repair is
    to mark the volume ``error`` (nobody can attach it), after which it
    can be deleted as usual."""
    from minicinder.volume.drivers import lvm
    cinder = stack["cinder_api"]
    vid = volumes("corrupt-lv")
    lvm.LVM(private_stack.VG).delete_volume(
        "volume-%s-%s" % (stack["tag"], vid))
    _find_and_fix(stack, "volume_without_lv")
    assert cinder.status(vid) == "error"
    assert stack["nova"].attach(guest, vid).status_code == 400
    cinder.force_cleanup(vid)
    assert cinder.show(vid) is None
    checks.assert_clean(stack, guest, [])
