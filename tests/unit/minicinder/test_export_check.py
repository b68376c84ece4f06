"""The periodic export check: exports a restarted tgtd lost are rebuilt
from the database (fake driver; the real tgtd restart is in
tests/functional/minicinder/test_tgtd_restart.py)."""

import threading

from minicinder.volume.drivers import lvm_devices
from minicinder.volume.drivers import lvm_driver
from tests.support.fake_storage import FakeTgtadm
from tests.support.minicinder_inprocess import connector
from tests.support.minicinder_inprocess import make_conf

INSTANCES = ("61c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b01",
             "61c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b02")


def _connect(cinder, vol, instance, initiator):
    att = cinder.reserve(vol, instance)
    resp = cinder.put("/attachments/%s" % att["id"], {"attachment": {
        "connector": connector(initiator)}})
    assert resp.status_code == 200, resp.body
    assert cinder.post("/attachments/%s/action" % att["id"],
                       {"os-complete": {}}).status_code == 204
    return att["id"]


def test_lost_exports_are_rebuilt_with_their_acls(stack, multiattach_type):
    cinder, driver, svc = stack
    shared = cinder.create_volume(volume_type=multiattach_type)
    _connect(cinder, shared, INSTANCES[0], "iqn.2024-01.test:a")
    _connect(cinder, shared, INSTANCES[1], "iqn.2024-01.test:b")
    single = cinder.create_volume()
    _connect(cinder, single, INSTANCES[0], "iqn.2024-01.test:a")
    idle = cinder.create_volume()              # never exported
    assert svc.manager.check_exports() == []   # nothing lost yet

    driver.exports.clear()                     # "tgtd restarted"
    rebuilt = svc.manager.check_exports()
    assert sorted(rebuilt) == sorted([shared, single])
    assert driver.exports == {
        shared: {"iqn.2024-01.test:a", "iqn.2024-01.test:b"},
        single: {"iqn.2024-01.test:a"}}
    assert idle not in driver.exports

    driver.exports[shared].discard("iqn.2024-01.test:b")   # one ACL lost
    assert svc.manager.check_exports() == [shared]
    assert "iqn.2024-01.test:b" in driver.exports[shared]
    assert svc.manager.check_exports() == []


def test_check_skips_volumes_being_deleted(stack):
    cinder, driver, svc = stack
    vol = cinder.create_volume()
    _connect(cinder, vol, INSTANCES[0], "iqn.2024-01.test:a")
    with svc.database.write() as session:
        from minicinder.db import models
        session.get(models.Volume, vol).status = "deleting"
    driver.exports.clear()
    assert svc.manager.check_exports() == []
    assert vol not in driver.exports


def test_the_periodic_loop_runs_until_stopped(stack):
    cinder, driver, svc = stack
    vol = cinder.create_volume()
    _connect(cinder, vol, INSTANCES[0], "iqn.2024-01.test:a")
    driver.exports.clear()
    stop = threading.Event()
    thread = svc.manager.start_export_check(0.05, stop)
    try:
        for _ in range(100):
            if vol in driver.exports:
                break
            stop.wait(0.05)
        assert driver.exports[vol] == {"iqn.2024-01.test:a"}
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()
    assert svc.manager.start_export_check(0, stop) is None


def test_lvm_driver_reports_what_tgtd_lacks_and_keeps_bound_chap():
    """missing_exports compares one ``tgtadm show`` with the DB, and
    ensure_export does not churn a CHAP account still bound (a target
    with no account bound would admit anyone meanwhile)."""
    from minicinder.volume import driver as volume_driver
    conf = make_conf(volume_driver="lvm")
    tgtadm = FakeTgtadm()
    drv = lvm_driver.LVMTgtDriver(conf, execute=tgtadm,
                                   new_account=tgtadm.new_account,
                                   tgtadm=tgtadm)
    drv.devices = lvm_devices.DeviceCache(lambda name: "/dev/loop9")
    known = {t["iqn"]: t for t in drv.tgt.show_targets()}
    iqn = next(iqn for iqn, t in known.items() if t["accounts"])
    target = known[iqn]
    volume_id = iqn[len(conf.target_prefix) + len("volume-"):]
    ref = volume_driver.VolumeRef(
        id=volume_id, size=1,
        provider_auth="CHAP %s secret" % target["accounts"][0],
        provider_location="127.0.0.1:3260,%d %s 1" % (target["tid"], iqn))
    gone = volume_driver.VolumeRef(id="gone", size=1,
                                   provider_auth="CHAP u p",
                                   provider_location="x")
    expected = [(ref, list(target["acls"])), (gone, [])]
    assert drv.missing_exports(expected) == [gone]
    assert drv.missing_exports([(ref, ["iqn.2024-01.test:new"])]) == [ref]
    tgtadm.calls.clear()
    drv.ensure_export(ref, ["iqn.2024-01.test:new"])
    ops = [argv for argv in tgtadm.calls if "--op" in argv]
    assert not [argv for argv in ops if "account" in argv]
    assert [argv for argv in ops if "bind" in argv and
            "iqn.2024-01.test:new" in argv]


def test_a_forged_initiator_on_record_is_never_bound_again(stack):
    """An attachment stored before the API checked connectors may record
    a name with a newline in it: the rebuild admits the good names only."""
    import json

    from minicinder.db import models
    cinder, driver, svc = stack
    vol = cinder.create_volume()
    attachment_id = _connect(cinder, vol, INSTANCES[0], "iqn.2024-01.test:a")
    forged = "iqn.2024-01.test:x\nTarget 1: iqn.2024-01.test:victim"
    with svc.database.write() as session:
        row = session.get(models.VolumeAttachment, attachment_id)
        row.connector = json.dumps(connector(forged))
    driver.exports.clear()
    assert svc.manager.check_exports() == [vol]
    assert driver.exports[vol] == set()
