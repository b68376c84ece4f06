"""``volume-extended`` on the compute host: the guest's disk is resized
to Cinder's size, and the instance action records it (or its fault)."""

from minicompute import exception
from minicompute.db import api as db_api
from ministack import context
from tests.unit.minicompute.manager_flow import action_events
from tests.unit.minicompute.manager_flow import api_attach

GiB = 1024 ** 3


def _event(client, server, volume_id, request="req-extend"):
    ectxt = context.RequestContext(user_id="cinder", project_id="service",
                                   roles=["admin", "service"], is_admin=True,
                                   request_id=request)
    db_api.action_start(ectxt, server["uuid"], "extend_volume")
    client.external_instance_event(
        ectxt, [server], [{"name": "volume-extended", "tag": volume_id,
                           "server_uuid": server["uuid"],
                           "status": "completed"}], host="h1")


def test_volume_extended_resizes_the_guest_disk(ctxt, stack, server):
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    bdm = api_attach(ctxt, client, volume_api, server, vid)
    volume_api._volumes[vid]["size"] = 3     # Cinder grew it
    _event(client, server, vid)
    assert ("extend_volume", server["uuid"], bdm["device_name"],
            3 * GiB) in driver.calls
    assert db_api.bdm_get(ctxt, bdm["id"]).volume_size == 3
    assert ("compute_extend_volume", "Success") in {
        (e.event, e.result) for e in action_events(ctxt, server)}


def test_failed_resize_is_the_events_fault(ctxt, stack, server):
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    api_attach(ctxt, client, volume_api, server, vid)
    driver.fail_extend = exception.InternalError(
        err="block resize of vdb failed: Cannot grow iSCSI devices")
    _event(client, server, vid)
    [event] = [e for e in action_events(ctxt, server)
               if e.event == "compute_extend_volume"]
    assert event.result == "Error"
    assert "Cannot grow iSCSI devices" in (event.details or "") + \
        (event.traceback or "")


def test_event_for_a_volume_not_attached_is_a_no_op(ctxt, stack, server):
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    _event(client, server, vid)
    assert not [c for c in driver.calls if c[0] == "extend_volume"]
