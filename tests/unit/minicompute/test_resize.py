"""Resize, confirm and revert on the compute host (minicompute.resize).

The endpoint is served next to the manager on the fake:/ stack (one
host, h1: a same-host resize, as the API schedules one when the cloud
has one host or ``allow_resize_to_same_host``), with the fake driver and
the fake Cinder. The test plays the API: the task, the new flavor and
the migration record, then the real ComputeAPI 1.10 cast of
``prep_resize``; the steps after it are cast by the hosts themselves, so
the test waits for the states they leave.
"""

import json

import pytest

from minicompute import resize_flavors
from minicompute.db import api as db_api
from tests.support import waiting
from tests.unit.minicompute import test_server_volumes as bfv

OLD = {"id": 1, "flavorid": "42", "name": "m1.nano", "memory_mb": 128,
       "vcpus": 1, "root_gb": 1, "ephemeral_gb": 0, "swap": 0,
       "extra_specs": {}}
NEW = dict(OLD, id=2, flavorid="84", name="m1.micro", memory_mb=192,
           vcpus=2)


def _server(ctxt, stack, volume_backed=True, root_gb=1):
    """A server built by the manager with a root volume (or an image
    root) and a data volume; returns (row, volume ids)."""
    _, _, _, volume_api = stack
    inst = bfv._instance(ctxt)
    volumes = []
    if volume_backed:
        volumes.append(bfv._user_volume(ctxt, inst, volume_api))
    volumes.append(bfv._user_volume(ctxt, inst, volume_api, "/dev/vdb",
                                    None))
    flavor = dict(OLD, root_gb=root_gb)
    db_api.instance_update(ctxt, inst.uuid, dict(
        resize_flavors.columns(flavor), flavor=json.dumps(flavor),
        image_ref="" if volume_backed else bfv.IMAGE))
    row = bfv._build(stack, ctxt, inst)
    assert row.vm_state == "active"
    return row, volumes


def _start(ctxt, stack, inst, flavor=NEW):
    """What the API does, then the prep_resize cast; returns the
    migration."""
    _, client, _, _ = stack
    inst = db_api.instance_get(ctxt, inst.uuid)
    db_api.instance_update(ctxt, inst.uuid, dict(
        resize_flavors.start(inst, flavor, inst.vm_state),
        task_state="resize_prep"))
    migration = db_api.migration_create(ctxt, {
        "instance_uuid": inst.uuid, "migration_type": "resize",
        "status": "pre-migrating", "source_compute": "h1",
        "source_node": "h1", "dest_compute": "h1", "dest_node": "h1",
        "old_instance_type_id": OLD["id"],
        "new_instance_type_id": flavor["id"]})
    db_api.action_start(ctxt, inst.uuid, "resize")
    client.prep_resize(ctxt, db_api.to_dict(
        db_api.instance_get(ctxt, inst.uuid)), migration,
        {"id": bfv.IMAGE}, flavor, host="h1")
    return migration


def _wait_migration(ctxt, migration, *statuses):
    return waiting.wait_for(
        "migration %s in %s" % (migration["id"], statuses),
        lambda: db_api.migration_get(ctxt, migration["id"]),
        lambda m: m["status"] in statuses, timeout=10, interval=0.02)


def _wait_state(ctxt, inst, vm_state, task_state=None):
    return waiting.wait_for(
        "instance %s %s/%s" % (inst.uuid, vm_state, task_state),
        lambda: db_api.instance_get(ctxt, inst.uuid),
        lambda r: (r.vm_state, r.task_state) == (vm_state, task_state),
        timeout=10, interval=0.02)


def _one_attachment_in_use(ctxt, volume_api, inst, volumes):
    for vid in volumes:
        assert volume_api.status(vid) == "in-use"
        [att] = volume_api.attachment_ids(volume_id=vid)
        bdm = db_api.bdm_get_by_volume_and_instance(ctxt, vid, inst.uuid)
        assert bdm.attachment_id == att and bdm.connection_info


def _resized(ctxt, stack, inst, volumes):
    _, _, driver, volume_api = stack
    before = set(volume_api.attachment_ids())
    migration = _start(ctxt, stack, inst)
    assert _wait_migration(ctxt, migration, "finished", "error")[
        "status"] == "finished"
    row = _wait_state(ctxt, inst, "resized")
    assert (row.memory_mb, row.vcpus, row.instance_type_id) == (192, 2, 2)
    assert resize_flavors.old(row)["flavorid"] == "42"
    assert driver.instances[inst.uuid]["flavor"] == (192, 2)
    _one_attachment_in_use(ctxt, volume_api, inst, volumes)
    # Each volume was parked on a new attachment, then updated with this
    # host's connector and completed.
    assert not set(volume_api.attachment_ids()) & before
    names = [c[0] for c in driver.calls]
    assert names.index("migrate_disk") < names.index("finish_migration")
    return migration


def test_resize_then_confirm_with_volumes(ctxt, stack):
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack)
    migration = _resized(ctxt, stack, inst, volumes)
    calls = len(volume_api.calls)
    db_api.migration_update(ctxt, migration["id"], {"status": "confirming"})
    client.confirm_resize(ctxt, db_api.to_dict(inst), migration, host="h1")
    row = _wait_state(ctxt, inst, "active")
    assert db_api.migration_get(ctxt, migration["id"])["status"] == \
        "confirmed"
    assert len(volume_api.calls) == calls   # no Cinder call at confirm
    assert resize_flavors.old(row) is None and row.memory_mb == 192
    assert json.loads(row.flavor)["flavorid"] == "84"
    assert inst.uuid not in driver.kept
    _one_attachment_in_use(ctxt, volume_api, inst, volumes)


def test_resize_then_revert_with_volumes(ctxt, stack):
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack, volume_backed=False)
    migration = _resized(ctxt, stack, inst, volumes)
    db_api.instance_update(ctxt, inst.uuid,
                           {"task_state": "resize_reverting"})
    migration = db_api.migration_update(ctxt, migration["id"],
                                        {"status": "reverting"})
    client.revert_resize(ctxt, db_api.to_dict(
        db_api.instance_get(ctxt, inst.uuid)), migration,
        {"id": bfv.IMAGE})
    row = _wait_state(ctxt, inst, "active")
    assert db_api.migration_get(ctxt, migration["id"])["status"] == \
        "reverted"
    assert (row.memory_mb, row.vcpus, row.host) == (128, 1, "h1")
    assert json.loads(row.flavor) == OLD
    assert driver.instances[inst.uuid]["flavor"] == (128, 1)
    assert ("finish_revert_migration", inst.uuid, 128, 1) in driver.calls
    assert inst.uuid not in driver.kept
    _one_attachment_in_use(ctxt, volume_api, inst, volumes)


def test_resize_of_a_stopped_server_stays_stopped(ctxt, stack):
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack)
    db_api.instance_update(ctxt, inst.uuid, {"vm_state": "stopped",
                                             "power_state": 4})
    driver.power_off(db_api.to_dict(inst))
    migration = _start(ctxt, stack, inst)
    _wait_migration(ctxt, migration, "finished")
    row = _wait_state(ctxt, inst, "resized")
    assert row.power_state == 4
    client.confirm_resize(ctxt, db_api.to_dict(inst), migration, host="h1")
    _wait_state(ctxt, inst, "stopped")


def test_shrinking_a_local_disk_is_refused_before_anything(ctxt, stack):
    _, _, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack, volume_backed=False, root_gb=2)
    attachments = set(volume_api.attachment_ids())
    migration = _start(ctxt, stack, inst, dict(NEW, root_gb=1))
    assert _wait_migration(ctxt, migration, "error")["status"] == "error"
    row = _wait_state(ctxt, inst, "active")
    assert resize_flavors.new(row) is None and row.memory_mb == 128
    assert "migrate_disk" not in [c[0] for c in driver.calls]
    assert set(volume_api.attachment_ids()) == attachments
    events = db_api.action_events_get(
        ctxt, db_api.action_get_all(ctxt, inst.uuid)[0].id)
    [event] = [e for e in events if e.event == "compute_resize_instance"]
    assert event.result == "Error"


@pytest.mark.parametrize("volume_backed", [True, False])
def test_failed_finish_leaves_nothing_connected(ctxt, stack, volume_backed):
    """The destination fails to start the guest: ERROR, the migration in
    error, the guest gone, every volume parked (reserved, one attachment
    with no connector, exported nowhere)."""
    _, _, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack, volume_backed=volume_backed)
    driver.fail_spawn = RuntimeError("no room for the guest")
    migration = _start(ctxt, stack, inst)
    assert _wait_migration(ctxt, migration, "error")["status"] == "error"
    row = _wait_state(ctxt, inst, "error")
    assert "no room for the guest" in row.fault
    assert inst.uuid not in driver.instances
    for vid in volumes:
        assert volume_api.status(vid) == "reserved"
        [att] = volume_api.attachment_ids(volume_id=vid)
        assert volume_api.attachment_get(ctxt, att)["connection_info"] == {}
        bdm = db_api.bdm_get_by_volume_and_instance(ctxt, vid, inst.uuid)
        assert bdm.attachment_id == att and bdm.connection_info is None
