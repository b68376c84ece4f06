"""minicompute.db.api: the data access both nova daemons share."""

import pytest

from minicompute import exception
from minicompute.db import api as db_api
from ministack import context


def test_instance_get_is_project_scoped(ctxt, admin_ctxt, instance):
    """Another project's non-admin context cannot see the instance."""
    other = context.RequestContext(user_id="u2", project_id="p2")
    with pytest.raises(exception.InstanceNotFound):
        db_api.instance_get(other, instance.uuid)
    assert db_api.instance_get(admin_ctxt, instance.uuid).id == instance.id
    assert db_api.instance_get(ctxt, instance.uuid).name == \
        "instance-%08x" % instance.id


def test_instance_get_all_filters(ctxt, admin_ctxt, instance):
    """name is a regex on display_name; all_tenants only for admins."""
    other = context.RequestContext(user_id="u2", project_id="p2")
    db_api.instance_create(other, {"display_name": "other", "host": "h2"})
    assert [i.uuid for i in db_api.instance_get_all(ctxt, {"name": "^vm"})] \
        == [instance.uuid]
    assert db_api.instance_get_all(ctxt, {"name": "zzz"}) == []
    assert len(db_api.instance_get_all(ctxt, {"all_tenants": True})) == 1
    assert len(db_api.instance_get_all(admin_ctxt,
                                       {"all_tenants": True})) == 2
    assert len(db_api.instance_get_all(admin_ctxt, {"host": "h2",
                                                    "all_tenants": 1})) == 1


def test_instance_update_compare_and_swap(ctxt, instance):
    """Only one of two writers expecting task_state None wins."""
    row = db_api.instance_update(ctxt, instance.uuid,
                                 {"task_state": "powering-off"},
                                 expected_task_state=[None])
    assert row.task_state == "powering-off"
    with pytest.raises(exception.UnexpectedTaskStateError):
        db_api.instance_update(ctxt, instance.uuid,
                               {"task_state": "deleting"},
                               expected_task_state=[None])
    with pytest.raises(exception.UnexpectedVMStateError):
        db_api.instance_update(ctxt, instance.uuid, {"vm_state": "stopped"},
                               expected_vm_state="stopped")
    row = db_api.instance_update(ctxt, instance.uuid,
                                 {"task_state": None, "vm_state": "stopped"},
                                 expected_task_state="powering-off",
                                 expected_vm_state=["active"])
    assert (row.vm_state, row.task_state) == ("stopped", None)


def test_instance_destroy_soft_deletes_with_bdms(ctxt, instance):
    bdm = db_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                                   "volume_id": "v1"})
    db_api.instance_destroy(ctxt, instance.uuid)
    with pytest.raises(exception.InstanceNotFound):
        db_api.instance_get(ctxt, instance.uuid)
    with pytest.raises(exception.BDMNotFound):
        db_api.bdm_get(ctxt, bdm.id)


def test_bdm_lifecycle(ctxt, instance):
    bdm = db_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "volume_id": "v1",
        "device_name": "/dev/vdb", "source_type": "volume",
        "destination_type": "volume"})
    assert bdm.uuid and bdm.connection_info is None
    assert db_api.bdm_get_by_uuid(ctxt, bdm.uuid).id == bdm.id
    got = db_api.bdm_get_by_volume_and_instance(ctxt, "v1", instance.uuid)
    assert got.device_name == "/dev/vdb"
    row = db_api.bdm_update(ctxt, bdm.id, {"connection_info": {"a": 1}})
    assert row.connection_info == '{"a": 1}'
    assert [b.id for b in db_api.bdm_get_by_volume(ctxt, "v1")] == [bdm.id]
    assert len(db_api.bdm_get_all_by_instance(ctxt, instance.uuid)) == 1
    db_api.bdm_destroy(ctxt, bdm.id)
    db_api.bdm_destroy(ctxt, bdm.id)  # idempotent
    with pytest.raises(exception.VolumeBDMNotFound):
        db_api.bdm_get_by_volume_and_instance(ctxt, "v1", instance.uuid)
    assert db_api.bdm_get_by_volume(ctxt, "v1") == []


def test_actions_and_events(ctxt, instance):
    """Events attach to the action of the same request id; Error marks it."""
    db_api.action_start(ctxt, instance.uuid, "attach_volume")
    db_api.action_event_start(ctxt, instance.uuid, "compute_attach_volume",
                              "h1")
    db_api.action_event_finish(ctxt, instance.uuid, "compute_attach_volume",
                               "h1", result="Error", details="boom")
    action = db_api.action_get_by_request_id(ctxt, instance.uuid,
                                             ctxt.request_id)
    assert action.message == "Error" and action.user_id == "u1"
    events = db_api.action_events_get(ctxt, action.id)
    assert [(e.event, e.result, e.details) for e in events] == [
        ("compute_attach_volume", "Error", "boom")]
    db_api.action_finish(ctxt, instance.uuid)
    assert len(db_api.action_get_all(ctxt, instance.uuid)) == 1
    other = context.RequestContext(user_id="u1", project_id="p1")
    with pytest.raises(exception.InstanceActionNotFound):
        db_api.action_event_start(other, instance.uuid, "x", "h1")


def test_service_heartbeat(ctxt, nova_db):
    db_api.service_heartbeat(ctxt, "h1", "minicompute", "compute")
    svc = db_api.service_heartbeat(ctxt, "h1", "minicompute", "compute")
    assert svc.report_count == 2
    [svc] = db_api.service_get_all(ctxt)
    assert db_api.service_is_up(svc)
    assert db_api.service_get_by_host_and_binary(
        ctxt, "h1", "minicompute").id == svc.id


def test_flavors(ctxt, nova_db):
    db_api.flavor_create(ctxt, {"flavorid": "1", "name": "m1.tiny",
                                "memory_mb": 128, "vcpus": 1, "root_gb": 1})
    assert db_api.flavor_get(ctxt, "1").name == "m1.tiny"
    assert [f.flavorid for f in db_api.flavor_get_all(ctxt)] == ["1"]
    with pytest.raises(exception.FlavorNotFound):
        db_api.flavor_get(ctxt, "nope")
