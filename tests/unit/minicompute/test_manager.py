"""The compute manager over a fake:/ RPC transport, fake driver and Cinder.

The RPC path is real oslo.messaging (client from minicompute.rpcapi, the
ComputeService's server; the ``stack`` and ``server`` fixtures are in
conftest); only the hypervisor and Cinder are fakes, which is what lets
every undo path be reached.
"""

import json

import pytest

from minicompute import exception
from minicompute import power_state
from minicompute.db import api as db_api
from ministack import context
from ministack import exception as ms_exception
from tests.unit.minicompute.manager_flow import action_events
from tests.unit.minicompute.manager_flow import api_attach


def test_build_makes_instance_active(ctxt, server, stack):
    assert server["vm_state"] == "active"
    assert server["root_device_name"] == "/dev/vda"
    assert stack[0].driver.instance_exists(server)


def test_heartbeat_registers_service(stack, ctxt):
    [svc] = db_api.service_get_all(ctxt)
    assert (svc.host, svc.binary, svc.topic) == ("h1", "nova-compute",
                                                 "compute")


def test_attach_then_detach(ctxt, stack, server):
    """The whole journey: reserved -> in-use -> available, BDM gone."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    bdm = api_attach(ctxt, client, volume_api, server, vid, "/dev/vdq")
    assert bdm["device_name"] == "/dev/vdb"   # supplied name ignored
    assert volume_api.status(vid) == "in-use"
    row = db_api.bdm_get(ctxt, bdm["id"])
    info = json.loads(row.connection_info)
    assert info["serial"] == vid
    assert driver.get_attached_devices(server) == ["vdb"]
    assert volume_api.calls.index("attachment_update") < \
        volume_api.calls.index("attachment_complete")

    volume_api.begin_detaching(ctxt, vid)
    dctxt = context.RequestContext(user_id="u1", project_id="p1")
    db_api.action_start(dctxt, server["uuid"], "detach_volume")
    client.detach_volume(dctxt, server, vid, bdm["attachment_id"])
    assert volume_api.status(vid) == "available"
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert driver.get_attached_devices(server) == []
    assert {(e.event, e.result) for e in action_events(ctxt, server)} >= {
        ("compute_attach_volume", "Success"),
        ("compute_detach_volume", "Success")}


@pytest.mark.parametrize("multiattach", [False, True])
def test_attach_takes_the_flag_the_api_read(ctxt, stack, server,
                                            multiattach):
    """RPC 1.2: the cast carries the volume's multiattach flag, so the
    host's attach makes no GET of the volume (the API's was the last)."""
    _, client, _, volume_api = stack
    vid = volume_api.add_volume(multiattach=multiattach)
    bdm = api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    after_api = volume_api.calls[volume_api.calls.index(
        "attachment_create") + 1:]
    assert "get" not in after_api
    assert after_api[:1] == ["attachment_update"]
    info = json.loads(db_api.bdm_get(ctxt, bdm["id"]).connection_info)
    assert info.get("multiattach", False) is multiattach


def test_attach_reads_the_volume_when_the_cast_has_no_flag(ctxt, stack,
                                                           server):
    """A cast as an API older than RPC 1.2 sent it: the host GETs."""
    _, client, _, volume_api = stack
    vid = volume_api.add_volume(multiattach=True)
    bdm = api_attach(ctxt, client, volume_api, server, vid,
                     send_multiattach=False)
    after_api = volume_api.calls[volume_api.calls.index(
        "attachment_create") + 1:]
    assert after_api[:2] == ["get", "attachment_update"]
    info = json.loads(db_api.bdm_get(ctxt, bdm["id"]).connection_info)
    assert info["multiattach"] is True


def test_reserve_rejects_same_volume_twice(ctxt, stack, server):
    _, client, _, volume_api = stack
    vid = volume_api.add_volume()
    client.reserve_block_device_name(ctxt, server, None, vid)
    with pytest.raises(exception.InvalidVolume):
        client.reserve_block_device_name(ctxt, server, None, vid)


def test_reserve_bad_device_and_limit(ctxt, conf, stack, server):
    _, client, _, _ = stack
    with pytest.raises(exception.InvalidDevicePath):
        client.reserve_block_device_name(ctxt, server, "/dev/1x", "v")
    conf.set_override("max_disk_devices_to_attach", 2, group="compute")
    client.reserve_block_device_name(ctxt, server, None, "v1")
    with pytest.raises(exception.TooManyDiskDevices) as err:
        client.reserve_block_device_name(ctxt, server, None, "v2")
    assert err.value.code == 403


def test_names_are_distinct(ctxt, stack, server):
    _, client, _, _ = stack
    names = [client.reserve_block_device_name(
        ctxt, server, None, "vol%d" % i)["device_name"] for i in range(8)]
    assert names == ["/dev/vd%s" % c for c in "bcdefghi"]


def test_driver_attach_failure_undoes_everything(ctxt, stack, server):
    """Driver fails: attachment deleted, BDM destroyed, event Error."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    driver.fail_attach = exception.InternalError(err="qemu said no")
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "available"
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert volume_api.attachment_ids() == []
    action = db_api.action_get_by_request_id(ctxt, server["uuid"],
                                             ctxt.request_id)
    assert db_api.action_events_get(ctxt, action.id)[0].result == "Error"
    event = db_api.action_events_get(ctxt, action.id)[0]
    assert "qemu said no" in event.details


def test_update_failure_releases_the_reservation(ctxt, stack, server):
    """attachment_update fails before anything was wired: the attach flow
    itself deletes the attachment the API created; the BDM goes."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    volume_api.fail_next("attachment_update",
                         ms_exception.Conflict(reason="x"))
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "available"
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert volume_api.attachment_ids() == []
    assert driver.get_attached_devices(server) == []


def test_complete_failure_detaches_from_driver(ctxt, stack, server):
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    volume_api.fail_next("attachment_complete",
                         ms_exception.Conflict(reason="x"))
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "available"
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert driver.get_attached_devices(server) == []
    assert ("detach_volume", server["uuid"], "/dev/vdb") in driver.calls


def test_detach_refused_rolls_back(ctxt, stack, server):
    """DeviceDetachFailed: volume back to in-use, BDM kept."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    bdm = api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    volume_api.begin_detaching(ctxt, vid)
    driver.fail_detach = exception.DeviceDetachFailed(device="vdb",
                                                      reason="busy")
    client.detach_volume(ctxt, server, vid, bdm["attachment_id"])
    assert "roll_detaching" in volume_api.calls
    assert volume_api.status(vid) == "in-use"
    assert db_api.bdm_get(ctxt, bdm["id"])
    assert driver.get_attached_devices(server) == ["vdb"]


def test_legacy_flow(ctxt, stack, server):
    """A BDM without attachment_id: initialize_connection/attach/detach."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    bdm = client.reserve_block_device_name(ctxt, server, None, vid)
    volume_api.reserve_volume(ctxt, vid)
    client.attach_volume(ctxt, server, bdm)
    assert volume_api.status(vid) == "in-use"
    assert "initialize_connection" in volume_api.calls
    client.detach_volume(ctxt, server, vid)
    assert volume_api.status(vid) == "available"
    assert {"terminate_connection", "detach"} <= set(volume_api.calls)


def test_terminate_detaches_and_deletes(ctxt, stack, server):
    _, client, driver, volume_api = stack
    keep, drop = volume_api.add_volume(), volume_api.add_volume()
    for vid in (keep, drop):
        bdm = api_attach(ctxt, client, volume_api, server, vid)
        assert volume_api.status(vid) == "in-use"
        if vid == drop:
            db_api.bdm_update(ctxt, bdm["id"],
                              {"delete_on_termination": True})
    client.terminate_instance(ctxt, server)
    assert not volume_api.has_volume(drop)
    assert volume_api.status(keep) == "available"
    with pytest.raises(exception.InstanceNotFound):
        db_api.instance_get(ctxt, server["uuid"])
    assert not driver.instance_exists(server)


def test_resume_guests_starts_a_shut_off_active_guest(stack, server,
                                                     admin_ctxt):
    """After a host restart an ACTIVE guest that is shut off boots again."""
    svc, _, driver, _ = stack
    driver.instances[server["uuid"]]["power"] = power_state.SHUTDOWN
    svc.manager.resume_guests_state(admin_ctxt, "h1")
    assert driver.instances[server["uuid"]]["power"] == power_state.RUNNING
    row = db_api.instance_get(admin_ctxt, server["uuid"])
    assert row.vm_state == "active" and row.power_state == \
        power_state.RUNNING


def test_resume_guests_marks_a_lost_domain_error(stack, server, admin_ctxt):
    """An ACTIVE instance whose domain is gone says so, in ERROR."""
    svc, _, driver, _ = stack
    del driver.instances[server["uuid"]]
    svc.manager.resume_guests_state(admin_ctxt, "h1")
    row = db_api.instance_get(admin_ctxt, server["uuid"])
    assert row.vm_state == "error" and "is gone" in row.fault
