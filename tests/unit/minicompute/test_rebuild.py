"""The rebuild on the compute host (``minicompute.rebuild``): the
attachment swap around the respawn, the volume-backed reimage and its
event, and the failures (ERROR, one attachment per volume).

The manager runs on the fake:/ stack (conftest) with the fake driver and
the fake Cinder; the API phase is played as miniapi does it (task state
``rebuilding``, the ``rebuild`` action, the cast).
"""

import threading

from minicompute import exception
from minicompute.db import api as db_api
from tests.unit.minicompute import manager_flow

IMAGE = {"id": "6a1e0a38-6f1f-4a9e-9d32-1d4b3f7f0b11", "virtual_size": 1}
FLAVOR = {"memory_mb": 128, "vcpus": 1}


def _rebuild(ctxt, stack, server, reimage=False, image=IMAGE):
    """The API phase and the cast (a call here); the row afterwards."""
    _, client, _, _ = stack
    db_api.instance_update(ctxt, server["uuid"],
                           {"task_state": "rebuilding"})
    db_api.action_start(ctxt, server["uuid"], "rebuild")
    client.rebuild_instance(ctxt, db_api.instance_get(ctxt, server["uuid"]),
                            image=image, flavor=FLAVOR,
                            reimage_boot_volume=reimage)
    return db_api.instance_get(ctxt, server["uuid"])


def _attached(ctxt, stack, server):
    _, client, _, volume_api = stack
    vid = volume_api.add_volume()
    manager_flow.api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    [bdm] = db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    return vid, bdm


def _volume_backed(ctxt, stack):
    """A server booted from a volume the user brought, ACTIVE."""
    svc, _, _, volume_api = stack
    inst = db_api.instance_create(ctxt, {
        "display_name": "bfv", "host": "h1", "vm_state": "building",
        "memory_mb": 128, "vcpus": 1, "image_ref": ""})
    db_api.action_start(ctxt, inst.uuid, "create")
    vid = volume_api.add_volume()
    att = volume_api.attachment_create(ctxt, vid, inst.uuid)
    db_api.bdm_create(ctxt, {
        "instance_uuid": inst.uuid, "destination_type": "volume",
        "source_type": "volume", "device_name": "/dev/vda",
        "boot_index": 0, "device_type": "disk", "volume_id": vid,
        "attachment_id": att["id"], "delete_on_termination": False})
    svc.manager.build_and_run_instance(ctxt, db_api.to_dict(inst),
                                       image=IMAGE, flavor=FLAVOR)
    server = db_api.to_dict(db_api.instance_get(ctxt, inst.uuid))
    assert server["vm_state"] == "active"
    return server, vid


def _send_reimaged(ctxt, svc, server, status="completed"):
    """What Cinder's event does when it reaches the host."""
    def deliver(volume_id, image_id):
        svc.manager.external_instance_event(
            ctxt, [server], [{"name": "volume-reimaged",
                              "server_uuid": server["uuid"],
                              "tag": volume_id, "status": status}])
    return deliver


def test_rebuild_with_volume_swaps_the_attachment(ctxt, stack, server):
    _, _, driver, volume_api = stack
    vid, old = _attached(ctxt, stack, server)
    volume_api.calls.clear()
    row = _rebuild(ctxt, stack, server)
    assert (row.vm_state, row.task_state) == ("active", None)
    [bdm] = db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert bdm.attachment_id != old.attachment_id
    assert volume_api.attachment_ids(vid) == [bdm.attachment_id]
    assert volume_api.status(vid) == "in-use"
    assert bdm.connection_info
    # The new attachment first, so the volume is never available.
    calls = volume_api.calls
    assert calls.index("attachment_create") < \
        calls.index("attachment_delete") < \
        calls.index("attachment_update") < calls.index("attachment_complete")
    assert "vdb" in driver.instances[server["uuid"]]["devices"]
    assert ("detach_volume", server["uuid"], "/dev/vdb") in driver.calls
    events = [e.event for e in manager_flow.action_events(ctxt, server)]
    assert "compute_rebuild_instance" in events


def test_rebuild_of_a_stopped_server_stays_stopped(ctxt, stack, server):
    svc, _, driver, _ = stack
    svc.manager.stop_instance(ctxt, server)
    row = _rebuild(ctxt, stack, db_api.to_dict(
        db_api.instance_get(ctxt, server["uuid"])))
    assert (row.vm_state, row.task_state) == ("stopped", None)
    assert driver.get_power_state(server) == 4   # SHUTDOWN


def test_rebuild_of_an_error_server_without_domain(ctxt, stack, server):
    _, _, driver, _ = stack
    driver.instances.pop(server["uuid"])
    db_api.instance_update(ctxt, server["uuid"], {"vm_state": "error"})
    row = _rebuild(ctxt, stack, server)
    assert row.vm_state == "active"
    assert server["uuid"] in driver.instances


def test_spawn_failure_errors_and_keeps_one_attachment(ctxt, stack,
                                                       server):
    _, _, driver, volume_api = stack
    vid, _ = _attached(ctxt, stack, server)
    driver.fail_spawn = exception.InstanceBuildFailed(
        instance_uuid=server["uuid"], reason="no boot")
    row = _rebuild(ctxt, stack, server)
    assert (row.vm_state, row.task_state) == ("error", None)
    assert "no boot" in row.fault
    [bdm] = db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert volume_api.attachment_ids(vid) == [bdm.attachment_id]
    # The failed spawn's connections are undone.
    assert driver.calls[-1][0] == "disconnect"


def test_failed_swap_deletes_the_new_attachment(ctxt, stack, server):
    _, _, _, volume_api = stack
    vid, old = _attached(ctxt, stack, server)
    volume_api.fail_next("attachment_delete",
                         exception.CinderConnectionFailed(reason="down"))
    row = _rebuild(ctxt, stack, server)
    assert row.vm_state == "error"
    [bdm] = db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert bdm.attachment_id == old.attachment_id
    assert volume_api.attachment_ids(vid) == [old.attachment_id]


def test_volume_backed_reimage_waits_for_the_event(ctxt, stack):
    svc, _, driver, volume_api = stack
    server, vid = _volume_backed(ctxt, stack)
    [old] = db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    statuses = []

    def deliver(volume_id, image_id):
        statuses.append(volume_api.status(volume_id))
        _send_reimaged(ctxt, svc, server)(volume_id, image_id)
    volume_api.on_reimage = deliver
    row = _rebuild(ctxt, stack, server, reimage=True)
    assert (row.vm_state, row.task_state, row.image_ref) == \
        ("active", None, "")
    # Re-imaged while reserved (the old attachment gone, the new one
    # without a connector), then attached again.
    assert statuses == ["reserved"]
    [bdm] = db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert bdm.attachment_id != old.attachment_id
    assert volume_api.attachment_ids(vid) == [bdm.attachment_id]
    assert volume_api.status(vid) == "in-use"
    assert volume_api.get(ctxt, vid)["volume_image_metadata"] == \
        {"image_id": IMAGE["id"]}
    assert driver.instances[server["uuid"]]["devices"]["vda"]["serial"] \
        == vid


def test_volume_backed_below_2_93_is_reattached_unchanged(ctxt, stack):
    _, _, _, volume_api = stack
    server, vid = _volume_backed(ctxt, stack)
    row = _rebuild(ctxt, stack, server, reimage=False)
    assert row.vm_state == "active"
    assert "reimage_volume" not in volume_api.calls
    assert volume_api.status(vid) == "in-use"
    assert len(volume_api.attachment_ids(vid)) == 1


def test_reimage_timeout_errors(ctxt, stack, conf):
    _, _, _, volume_api = stack
    conf.set_override("reimage_timeout_per_gb", 1)
    server, vid = _volume_backed(ctxt, stack)
    row = _rebuild(ctxt, stack, server, reimage=True)
    assert (row.vm_state, row.task_state) == ("error", None)
    assert "Timeout waiting for volume-reimaged" in row.fault
    [bdm] = db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert volume_api.attachment_ids(vid) == [bdm.attachment_id]


def test_reimage_failed_event_errors(ctxt, stack):
    svc, _, _, volume_api = stack
    server, _ = _volume_backed(ctxt, stack)
    volume_api.on_reimage = _send_reimaged(ctxt, svc, server, "failed")
    row = _rebuild(ctxt, stack, server, reimage=True)
    assert row.vm_state == "error"
    assert "Reimaging volume failed." in row.fault


def test_reimage_refused_by_cinder_errors(ctxt, stack):
    _, _, _, volume_api = stack
    server, _ = _volume_backed(ctxt, stack)
    volume_api.fail_next("reimage_volume",
                         exception.InvalidVolume(reason="bad image"))
    row = _rebuild(ctxt, stack, server, reimage=True)
    assert row.vm_state == "error"
    assert "Failed to rebuild volume backed instance" in row.fault


def test_event_nobody_waits_for_is_dropped(ctxt, stack, server):
    svc, _, _, _ = stack
    svc.manager.external_instance_event(
        ctxt, [server], [{"name": "volume-reimaged", "tag": "v",
                          "server_uuid": server["uuid"]}])
    row = db_api.instance_get(ctxt, server["uuid"])
    assert row.vm_state == "active"


def test_waiter_wakes_from_another_thread(stack):
    svc, _, _, _ = stack
    events = svc.manager.external_events
    waiter = events.prepare("u", "volume-reimaged", "v")
    threading.Timer(0.05, events.handle, args=(None, [], [{
        "name": "volume-reimaged", "server_uuid": "u", "tag": "v",
        "status": "completed"}])).start()
    assert waiter.wait(5) == "completed"
    events.forget(waiter)
