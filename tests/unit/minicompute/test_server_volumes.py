"""Boot from volume on the compute host: the build's volumes, their
rollback when the build fails, and the server's delete.

The manager runs on the fake:/ stack (conftest) with the fake driver and
the fake Cinder; the BDM rows are written as miniapi writes them.
"""

import pytest

from minicompute import exception
from minicompute import server_volumes
from minicompute.db import api as db_api
from minicompute.virt.libvirt import config

IMAGE = "6a1e0a38-6f1f-4a9e-9d32-1d4b3f7f0b11"
FLAVOR = {"memory_mb": 128, "vcpus": 1}


def _instance(ctxt):
    inst = db_api.instance_create(ctxt, {
        "display_name": "bfv", "host": "h1", "vm_state": "building",
        "memory_mb": 128, "vcpus": 1, "image_ref": ""})
    db_api.action_start(ctxt, inst.uuid, "create")
    return inst


def _bdm(ctxt, inst, device, boot_index=None, **values):
    return db_api.bdm_create(ctxt, dict({
        "instance_uuid": inst.uuid, "destination_type": "volume",
        "device_name": device, "boot_index": boot_index,
        "device_type": "disk", "delete_on_termination": False}, **values))


def _user_volume(ctxt, inst, volume_api, device="/dev/vda", boot_index=0,
                 **values):
    """A volume the user brought, reserved as the API reserves it."""
    vid = volume_api.add_volume()
    att = volume_api.attachment_create(ctxt, vid, inst.uuid)
    _bdm(ctxt, inst, device, boot_index, source_type="volume",
         volume_id=vid, attachment_id=att["id"], **values)
    return vid


def _build(stack, ctxt, inst):
    """The build cast (sent as a call: returns when done, raises what
    the manager raised)."""
    stack[1].build_and_run_instance(ctxt, db_api.to_dict(inst),
                                    image={"id": IMAGE}, flavor=FLAVOR)
    return db_api.instance_get(ctxt, inst.uuid)


def test_build_from_user_volume(ctxt, stack):
    _, _, driver, volume_api = stack
    inst = _instance(ctxt)
    vid = _user_volume(ctxt, inst, volume_api)
    row = _build(stack, ctxt, inst)
    assert (row.vm_state, row.task_state) == ("active", None)
    assert volume_api.status(vid) == "in-use"
    # Updated with the connector before spawn, completed after.
    calls = volume_api.calls
    assert calls.index("attachment_update") < \
        calls.index("attachment_complete")
    ci = driver.instances[inst.uuid]["devices"]["vda"]
    assert ci["serial"] == vid
    [bdm] = db_api.bdm_get_all_by_instance(ctxt, inst.uuid)
    assert bdm.connection_info   # saved for the delete


def test_build_creates_image_and_blank_volumes(ctxt, stack):
    _, _, driver, volume_api = stack
    inst = _instance(ctxt)
    _bdm(ctxt, inst, "/dev/vda", 0, source_type="image", image_id=IMAGE,
         volume_size=1, delete_on_termination=True)
    _bdm(ctxt, inst, "/dev/vdb", source_type="blank", volume_size=2)
    row = _build(stack, ctxt, inst)
    assert row.vm_state == "active"
    root, blank = sorted(db_api.bdm_get_all_by_instance(ctxt, inst.uuid),
                         key=lambda b: b.device_name)
    for bdm in (root, blank):
        assert bdm.volume_id and bdm.attachment_id
        assert volume_api.status(bdm.volume_id) == "in-use"
    root_volume = volume_api.get(ctxt, root.volume_id)
    assert root_volume["volume_image_metadata"]["image_id"] == IMAGE
    assert volume_api.get(ctxt, blank.volume_id)["size"] == 2
    assert sorted(driver.instances[inst.uuid]["devices"]) == ["vda", "vdb"]


def test_failed_spawn_rolls_back(ctxt, stack):
    """The spawn fails after the volumes were created and attached: the
    created volume is deleted, the user's is available, no BDM, ERROR."""
    _, _, driver, volume_api = stack
    inst = _instance(ctxt)
    _bdm(ctxt, inst, "/dev/vda", 0, source_type="image", image_id=IMAGE,
         volume_size=1)
    user = _user_volume(ctxt, inst, volume_api, "/dev/vdb", None)
    driver.fail_spawn = exception.InstanceBuildFailed(
        instance_uuid=inst.uuid, reason="QEMU refused the vcpus")
    _build(stack, ctxt, inst)   # ERROR, not raised back to a cast
    row = db_api.instance_get(ctxt, inst.uuid)
    assert (row.vm_state, row.task_state) == ("error", None)
    assert "QEMU refused" in row.fault
    assert volume_api.volume_ids() == [user]
    assert volume_api.status(user) == "available"
    assert volume_api.attachment_ids() == []
    assert db_api.bdm_get_all_by_instance(ctxt, inst.uuid) == []
    # The driver was asked to disconnect both volumes it was given.
    [(_, _, disconnected)] = [c for c in driver.calls
                              if c[0] == "disconnect"]
    assert user in disconnected and len(disconnected) == 2


def test_volume_never_available_fails_the_build(ctxt, stack, conf):
    conf.set_override("block_device_allocate_retries", 2, "compute")
    conf.set_override("block_device_allocate_retries_interval", 0,
                      "compute")
    _, _, driver, volume_api = stack
    inst = _instance(ctxt)
    _bdm(ctxt, inst, "/dev/vda", 0, source_type="blank", volume_size=1)
    volume_api.create_status = "creating"
    _build(stack, ctxt, inst)   # ERROR, not raised back to a cast
    # (the fake's create reads the volume back once itself)
    assert volume_api.calls.count("get") == 1 + 3   # retries + 1
    row = db_api.instance_get(ctxt, inst.uuid)
    assert row.vm_state == "error"
    assert "did not finish being created" in row.fault
    assert volume_api.volume_ids() == []
    assert inst.uuid not in driver.instances


def test_volume_in_error_fails_at_once(ctxt, stack):
    _, _, _, volume_api = stack
    inst = _instance(ctxt)
    _bdm(ctxt, inst, "/dev/vda", 0, source_type="image", image_id=IMAGE,
         volume_size=1)
    volume_api.create_status = "error"
    _build(stack, ctxt, inst)   # ERROR, not raised back to a cast
    assert volume_api.calls.count("get") == 1 + 1


@pytest.mark.parametrize("delete_on_termination", [True, False])
def test_delete_releases_the_root_volume(ctxt, stack,
                                         delete_on_termination):
    _, client, driver, volume_api = stack
    inst = _instance(ctxt)
    vid = _user_volume(ctxt, inst, volume_api,
                       delete_on_termination=delete_on_termination)
    data = _user_volume(ctxt, inst, volume_api, "/dev/vdb", None)
    _build(stack, ctxt, inst)
    client.terminate_instance(ctxt, db_api.to_dict(
        db_api.instance_get(ctxt, inst.uuid)))
    with pytest.raises(exception.InstanceNotFound):
        db_api.instance_get(ctxt, inst.uuid)
    # The data volume is hot-unplugged; the root goes with the guest.
    assert ("detach_volume", inst.uuid, "/dev/vdb") in driver.calls
    assert ("detach_volume", inst.uuid, "/dev/vda") not in driver.calls
    assert ("disconnect", inst.uuid, [vid]) in driver.calls
    assert volume_api.attachment_ids() == []
    assert volume_api.has_volume(vid) is not delete_on_termination
    if not delete_on_termination:
        assert volume_api.status(vid) == "available"
    assert volume_api.status(data) == "available"


def test_block_device_info_only_wired_rows(ctxt, nova_db, instance):
    wired = db_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "destination_type": "volume",
        "volume_id": "v1", "device_name": "/dev/vda", "boot_index": 0,
        "connection_info": '{"driver_volume_type": "iscsi", "data": {}}'})
    db_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "destination_type": "volume",
        "volume_id": "v2", "device_name": "/dev/vdb"})
    rows = server_volumes.volume_rows(ctxt, instance.uuid)
    assert rows[0].id == wired.id
    [info] = server_volumes.block_device_info(rows)
    assert (info["mount_device"], info["volume_id"]) == ("/dev/vda", "v1")


def test_domain_with_volume_root():
    disk = config.iscsi_disk("vda", iqn="iqn.x:v1", lun=1,
                             host="192.0.2.1", serial="v1")
    xml = config.domain_xml("instance-00000001", "u1", kernel="/k",
                            initrd="/i", cmdline="console=ttyS0",
                            root_disk=None, disks=[disk])
    assert config.disk_target_devs(xml) == ["vda"]
    assert "<serial>v1</serial>" in xml and 'type="file"' not in xml
