"""Start-up recovery and the reconciler, on the fake driver and Cinder."""

import datetime

import pytest

from minicompute import reconcile
from minicompute.db import api as db_api
from minicompute.db import models
from minicompute.db.session import scope
from ministack import context
from ministack import db
from tests.unit.minicompute.manager_flow import api_attach


def _age(bdm_id, seconds=600):
    old = db.utcnow() - datetime.timedelta(seconds=seconds)
    with scope() as session:
        session.query(models.BlockDeviceMapping).filter_by(
            id=bdm_id).update({"updated_at": old, "created_at": old})


def _wait_attached(volume_api, vid, reconciler):
    """The volume is in-use *and* the attach cast has finished: until its
    event ends, the reconciler leaves the instance alone (in flight). The
    cast was sent as a call (``tests.support.rpc``): both hold already."""
    assert volume_api.status(vid) == "in-use"
    assert not reconciler.in_flight()


@pytest.fixture
def reconciler(stack):
    svc = stack[0]
    return reconcile.Reconciler(svc.conf, svc.manager)


def test_interrupted_attach_is_rolled_back(ctxt, stack, server, reconciler):
    """A compute_attach_volume event left running by a dead process."""
    svc, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    bdm = client.reserve_block_device_name(ctxt, server, None, vid)
    att = volume_api.attachment_create(ctxt, vid, server["uuid"])
    db_api.bdm_update(ctxt, bdm["id"], {"attachment_id": att["id"]})
    volume_api.attachment_update(ctxt, att["id"], {})     # then it died
    req = context.RequestContext(user_id="u1", project_id="p1",
                                 request_id="req-dead")
    db_api.action_start(req, server["uuid"], "attach_volume")
    db_api.action_event_start(req, server["uuid"], "compute_attach_volume",
                              "h1", details="volume %s" % vid)

    reconciler.recover_interrupted()

    assert volume_api.status(vid) == "available"
    assert volume_api.attachment_ids() == []
    assert db_api.bdm_get_all_by_instance(ctxt, server["uuid"]) == []
    action = db_api.action_get_by_request_id(req, server["uuid"],
                                             "req-dead")
    [ev] = db_api.action_events_get(req, action.id)
    assert ev.result == "Error" and "interrupted" in ev.details
    assert "rolled back" in ev.details and vid in ev.details
    assert action.message == "Error"


def test_bdm_left_by_a_timed_out_reserve_is_destroyed(ctxt, stack, server,
                                                      reconciler):
    """Path 3: the host made the BDM after the API gave up on the CALL."""
    _, client, _, volume_api = stack
    vid = volume_api.add_volume()
    bdm = client.reserve_block_device_name(ctxt, server, None, vid)
    assert [d.kind for d in reconciler.run(fix=True)] == []   # in grace
    _age(bdm["id"])
    found = reconciler.run(fix=True)
    assert [(d.kind, d.fixed) for d in found] == [
        ("bdm_without_attachment", True)]
    assert db_api.bdm_get_all_by_instance(ctxt, server["uuid"]) == []


def test_orphan_attachment_and_lost_disk(ctxt, stack, server, reconciler):
    svc, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    bdm = api_attach(ctxt, client, volume_api, server, vid)
    _wait_attached(volume_api, vid, reconciler)
    _age(bdm["id"])
    assert reconciler.run() == []
    # The disk vanishes from the guest: it is plugged back.
    driver.instances[server["uuid"]]["devices"].clear()
    found = reconciler.run()
    assert [(d.kind, d.fixed) for d in found] == [("bdm_disk_missing", True)]
    assert driver.get_attached_devices(server) == ["vdb"]
    # The BDM goes behind Cinder's back: Cinder's attachment is orphaned.
    db_api.bdm_destroy(ctxt, bdm["id"])
    kinds = {d.kind: d.fixed for d in reconciler.run()}
    assert kinds == {"orphan_attachment": True, "disk_without_bdm": True}
    assert volume_api.status(vid) == "available"
    assert driver.get_attached_devices(server) == []


def test_fresh_reservation_without_bdm_waits_out_the_grace(
        ctxt, stack, server, reconciler):
    """A reservation made a moment ago (``volume attachment create``, or
    an attach between its reserve and its BDM update) is young: Cinder's
    attachment summary has no created_at, so its age is the volume's."""
    _, _, _, volume_api = stack
    vid = volume_api.add_volume()
    att = volume_api.attachment_create(ctxt, vid, server["uuid"])
    volume_api.set_volume_fields(vid, updated_at=db.utcnow().isoformat())
    assert reconciler.run(fix=True) == []
    assert volume_api.attachment_ids() == [att["id"]]
    old = db.utcnow() - datetime.timedelta(seconds=600)
    volume_api.set_volume_fields(vid, updated_at=old.isoformat() + "Z")
    found = reconciler.run(fix=True)
    assert [(d.kind, d.fixed) for d in found] == [("orphan_attachment", True)]
    assert volume_api.attachment_ids() == []
    assert volume_api.status(vid) == "available"


def test_in_use_volume_without_attachment_is_reset(ctxt, stack, server,
                                                   reconciler):
    """Cinder's attachment vanished behind nova's back: the BDM goes and
    the volume, which still says in-use, is reset to available."""
    svc, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    bdm = api_attach(ctxt, client, volume_api, server, vid)
    _wait_attached(volume_api, vid, reconciler)
    _age(bdm["id"])
    volume_api.drop_attachments()          # status left at in-use
    found = reconciler.run(fix=True)
    assert [(d.kind, d.fixed) for d in found] == [
        ("bdm_without_attachment", True),
        ("in_use_without_attachment", True)]
    assert volume_api.status(vid) == "available"
    assert db_api.bdm_get_all_by_instance(ctxt, server["uuid"]) == []
    assert driver.get_attached_devices(server) == []


def test_volume_attached_elsewhere_is_not_reset(ctxt, stack, server,
                                                reconciler):
    """A multiattach volume our BDM lost its attachment to, but another
    server still uses: only our BDM goes, the volume stays in-use."""
    svc, client, driver, volume_api = stack
    vid = volume_api.add_volume(multiattach=True)
    bdm = api_attach(ctxt, client, volume_api, server, vid)
    _wait_attached(volume_api, vid, reconciler)
    _age(bdm["id"])
    other = volume_api.attachment_create(ctxt, vid, "other-server")
    volume_api.complete_attachment(other["id"])
    volume_api.drop_attachments(server["uuid"], recompute=True)
    found = reconciler.run(fix=True)
    assert [d.kind for d in found] == ["bdm_without_attachment"]
    assert volume_api.status(vid) == "in-use"
    assert volume_api.attachment_ids() == [other["id"]]
