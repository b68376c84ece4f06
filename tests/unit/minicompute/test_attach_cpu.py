"""What an attach and a detach cost the compute host, pinned by
behaviour and counts: the number of SQL statements each runs on the nova
database, the guests' XML a detach does not need, and one read path for
BDM rows.

Counts, never timings and never the statements' text: how a read is
written may change; that an attach stays within its budget may not.
"""

import pytest
import sqlalchemy as sa

from minicompute import exception
from minicompute.db import api as db_api
from minicompute.db import models
from minicompute.virt.libvirt import driver as libvirt_driver
from ministack import context
from tests.support import sql_statements
from tests.unit.minicompute.manager_flow import action_events

# Statements the host runs on the nova database for one attach, and the
# same for one detach: the instance, the event's start (the request's
# action, the event, the action's updated_at), the BDM, its write, the
# event's finish (by the row its start returned).
HOST_STATEMENTS = 8


def test_attach_and_detach_statements(ctxt, stack, server, nova_db):
    """The attach: the instance, the event's start (the request's action,
    the event, the action's updated_at), the BDM, its connection_info,
    the event's finish by the row its start returned (no second look-up
    of the action and the event). The detach likewise, its BDM
    soft-deleted in one UPDATE (no load first): at most
    ``HOST_STATEMENTS`` statements each."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    vol = volume_api.get(ctxt, vid)
    bdm = client.reserve_block_device_name(
        ctxt, server, None, vid, multiattach=vol["multiattach"])
    att = volume_api.attachment_create(ctxt, vid, server["uuid"])
    bdm = db_api.to_dict(db_api.bdm_update(ctxt, bdm["id"], {
        "attachment_id": att["id"]}))
    db_api.action_start(ctxt, server["uuid"], "attach_volume")
    with sql_statements.recorded_on([nova_db]) as attach:
        client.attach_volume(ctxt, server, bdm)
    assert volume_api.status(vid) == "in-use"
    assert 0 < len(attach) <= HOST_STATEMENTS, attach

    volume_api.begin_detaching(ctxt, vid)
    dctxt = context.RequestContext(user_id="u1", project_id="p1")
    db_api.action_start(dctxt, server["uuid"], "detach_volume")
    with sql_statements.recorded_on([nova_db]) as detach:
        client.detach_volume(dctxt, server, vid, bdm["attachment_id"])
    assert volume_api.status(vid) == "available"
    assert 0 < len(detach) <= HOST_STATEMENTS, detach
    # What the statements wrote reads back as before.
    events = {e.event: e for e in action_events(ctxt, server)}
    for name in ("compute_attach_volume", "compute_detach_volume"):
        assert events[name].result == "Success"
        assert events[name].finish_time >= events[name].start_time
        assert events[name].details is None
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert connection_info_written(nova_db, bdm["id"])


def connection_info_written(engine, bdm_id):
    with engine.connect() as conn:
        row = conn.execute(sa.text(
            "SELECT connection_info, deleted, deleted_at FROM "
            "block_device_mapping WHERE id = :id"), {"id": bdm_id}).one()
    return row.connection_info and row.deleted == bdm_id and \
        row.deleted_at is not None


def test_event_finish_without_the_started_row_looks_it_up(ctxt, instance):
    """The reconciler finishes an event it did not start: by request id
    and name, as before; an Error also marks the action."""
    db_api.action_start(ctxt, instance.uuid, "attach_volume")
    started = db_api.action_event_start(ctxt, instance.uuid,
                                        "compute_attach_volume", "h1",
                                        details="volume v1")
    finished = db_api.action_event_finish(
        ctxt, instance.uuid, "compute_attach_volume", "h1", result="Error",
        details="volume v1: interrupted")
    assert (finished.id, finished.action_id) == (started.id,
                                                 started.action_id)
    action = db_api.action_get_by_request_id(ctxt, instance.uuid,
                                             ctxt.request_id)
    assert action.message == "Error" and action.updated_at is not None
    [event] = db_api.action_events_get(ctxt, action.id)
    assert (event.result, event.details, event.host) == (
        "Error", "volume v1: interrupted", "h1")


class _NoScanHost:
    def list_guests(self):
        raise AssertionError("a detach of a volume that is not "
                             "multiattach fetched every guest's XML")


class _Guest:
    def __init__(self, uuid, xml):
        self.uuid = uuid
        self._xml = xml

    def get_disks(self, inactive=False):
        import xml.etree.ElementTree as ET
        root = ET.fromstring(self._xml)
        return {d.find("target").get("dev"): d
                for d in root.findall("./devices/disk")}


class _VolDriver:
    def source_key(self, connection_info):
        return "iqn.t/0"


_SHARED = ("<domain><devices><disk><source name='iqn.t/0'/>"
           "<target dev='vdb'/></disk></devices></domain>")


def test_still_used_scans_guests_only_for_multiattach(conf):
    """A volume that is not multiattach has a target of its own: no
    other guest's XML is read (before: every guest's, every detach)."""
    drv = libvirt_driver.LibvirtDriver(conf, host=_NoScanHost())
    me = _Guest("me", "<domain/>")
    info = {"driver_volume_type": "iscsi", "data": {}}
    assert drv._still_used(_VolDriver(), info, me.uuid) is False

    class Host:
        def list_guests(self):
            return [me, _Guest("other", _SHARED)]

    drv = libvirt_driver.LibvirtDriver(conf, host=Host())
    assert drv._still_used(_VolDriver(), dict(info, multiattach=True),
                           me.uuid) is True


def test_core_reads_of_an_instance_match_the_orm(ctxt, admin_ctxt,
                                                instance):
    """The compute host's Core read of an instance gives what the ORM
    read gives: its dict as it crosses RPC, the same project scoping and
    not-found error."""
    assert db_api.instance_get_dict(ctxt, instance.uuid) == \
        db_api.to_dict(db_api.instance_get(ctxt, instance.uuid))
    assert db_api.instance_get_dict(admin_ctxt, instance.uuid)["name"] == \
        "instance-%08x" % instance.id
    other = context.RequestContext(user_id="u2", project_id="p2")
    with pytest.raises(exception.InstanceNotFound):
        db_api.instance_get_dict(other, instance.uuid)


def test_every_bdm_read_gives_the_same_row(ctxt, instance, nova_db):
    """Each way to find a BDM (by id, uuid, volume and instance, volume,
    instance, every volume's) gives the same columns, in no session, in
    one statement; a soft-deleted BDM is found by none of them."""
    bdm = db_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "volume_id": "v1",
        "device_name": "/dev/vdb", "connection_info": {"serial": "v1"},
        "source_type": "volume", "destination_type": "volume"})
    expected = _columns(bdm)
    reads = [
        lambda: db_api.bdm_get(ctxt, bdm.id),
        lambda: db_api.bdm_get_by_uuid(ctxt, bdm.uuid),
        lambda: db_api.bdm_get_by_volume_and_instance(ctxt, "v1",
                                                      instance.uuid),
        lambda: db_api.bdm_get_by_volume(ctxt, "v1")[0],
        lambda: db_api.bdm_get_all_by_instance(ctxt, instance.uuid)[0],
        lambda: db_api.bdm_get_all_volumes(ctxt)[0],
    ]
    for read in reads:
        with sql_statements.recorded_on([nova_db]) as seen:
            row = read()
        assert len(seen) == 1, seen
        assert _columns(row) == expected
        assert sa.inspect(row).session is None
    db_api.bdm_destroy(ctxt, bdm.id)
    with pytest.raises(exception.BDMNotFound):
        db_api.bdm_get(ctxt, bdm.id)
    with pytest.raises(exception.BDMNotFound):
        db_api.bdm_get_by_uuid(ctxt, bdm.uuid)
    with pytest.raises(exception.VolumeBDMNotFound):
        db_api.bdm_get_by_volume_and_instance(ctxt, "v1", instance.uuid)
    assert db_api.bdm_get_by_volume(ctxt, "v1") == []
    assert db_api.bdm_get_all_by_instance(ctxt, instance.uuid) == []
    assert db_api.bdm_get_all_volumes(ctxt) == []


def _columns(row):
    return {c.name: getattr(row, c.name)
            for c in models.BlockDeviceMapping.__table__.columns}


def test_bdm_writes_match_what_a_read_gives(ctxt, instance):
    """The BDM a Core INSERT creates (the model's defaults filled in
    without reading it back) and the BDM an update reloads are what
    bdm_get reads; an update that does not reload returns the columns
    it wrote, which complete the row the caller holds."""
    bdm = db_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "volume_id": "v1",
        "device_name": "/dev/vdb", "tag": "t"})
    assert _columns(bdm) == _columns(db_api.bdm_get(ctxt, bdm.id))
    assert bdm.deleted == 0 and bdm.delete_on_termination is False
    assert bdm.created_at is not None and bdm.updated_at is None
    second = db_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                                      "volume_id": "v2"})
    assert [_columns(b) for b in db_api.bdm_get_all_by_instance(
        ctxt, instance.uuid)] == [_columns(db_api.bdm_get(ctxt, b.id))
                                  for b in (bdm, second)]
    held = db_api.to_dict(bdm)
    written = db_api.bdm_update(ctxt, bdm.id, {"attachment_id": "a1"},
                                reload=False)
    assert dict(held, **written) == db_api.to_dict(
        db_api.bdm_get(ctxt, bdm.id))
    reloaded = db_api.bdm_update(ctxt, second.id,
                                 {"delete_on_termination": True})
    assert _columns(reloaded) == _columns(db_api.bdm_get(ctxt, second.id))
    assert reloaded.delete_on_termination is True
    assert db_api.to_dict(db_api.instance_get(ctxt, instance.uuid))[
        "name"] == "instance-%08x" % instance.id
    with pytest.raises(exception.BDMNotFound):
        db_api.bdm_update(ctxt, 999999, {"tag": "x"}, reload=False)


def test_instances_of_volume_match_its_bdms(ctxt, instance):
    """The API's already-attached check reads the instance uuids of the
    volume's live BDMs, as bdm_get_by_volume lists them."""
    assert db_api.bdm_instances_of_volume(ctxt, "v1") == []
    other, third = (db_api.instance_create(ctxt, {"display_name": name})
                    for name in ("other", "third"))
    first = db_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                                     "volume_id": "v1"})
    db_api.bdm_create(ctxt, {"instance_uuid": other.uuid,
                             "volume_id": "v1"})
    db_api.bdm_create(ctxt, {"instance_uuid": third.uuid,
                             "volume_id": "v2"})
    db_api.bdm_destroy(ctxt, first.id)
    db_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                             "volume_id": "v1"})
    assert db_api.bdm_instances_of_volume(ctxt, "v1") == [
        b.instance_uuid for b in db_api.bdm_get_by_volume(ctxt, "v1")] == [
        other.uuid, instance.uuid]
