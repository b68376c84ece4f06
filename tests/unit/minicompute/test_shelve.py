"""Shelve, offload and unshelve on the compute host (minicompute.shelve).

The endpoint is served next to the manager on the fake:/ stack
(conftest), reached through the real ComputeAPI 1.6 casts (sent as
calls), with the fake driver and the fake Cinder. The snapshot images
are registered for real in a temporary images directory.
"""

import json
import os

import pytest

from minicompute import exception
from minicompute.db import api as db_api
from ministack import image_store
from ministack import images
from tests.unit.minicompute import test_server_volumes as bfv

IMAGE = bfv.IMAGE


@pytest.fixture
def conf(conf, tmp_path):
    conf.set_override("state_path", str(tmp_path))
    return conf


def _images_root(conf):
    return os.path.join(conf.state_path, "images")


def _server(ctxt, stack, volume_backed=True, image_ref=IMAGE):
    """A server built by the manager: a root volume (volume-backed) or
    an image root, and one data volume; returns (row, volume ids)."""
    _, _, _, volume_api = stack
    inst = bfv._instance(ctxt)
    volumes = []
    if volume_backed:
        volumes.append(bfv._user_volume(ctxt, inst, volume_api))
    else:
        db_api.instance_update(ctxt, inst.uuid, {"image_ref": image_ref})
    volumes.append(bfv._user_volume(ctxt, inst, volume_api, "/dev/vdb",
                                    None))
    db_api.instance_update(ctxt, inst.uuid, {
        "flavor": json.dumps(bfv.FLAVOR)})
    row = bfv._build(stack, ctxt, inst)
    assert row.vm_state == "active"
    return row, volumes


def _parked(ctxt, volume_api, inst_uuid, volumes):
    """Each volume reserved by exactly one attachment without a
    connector, which its BDM names, with no connection_info."""
    for vid in volumes:
        assert volume_api.status(vid) == "reserved"
        [att] = volume_api.attachment_ids(volume_id=vid)
        assert volume_api.attachment_get(ctxt, att)["connection_info"] == {}
        bdm = db_api.bdm_get_by_volume_and_instance(ctxt, vid, inst_uuid)
        assert bdm.attachment_id == att and bdm.connection_info is None


def _snapshot_record(inst, conf):
    """The queued snapshot image, created as the API creates it."""
    return image_store.create(
        {"id": "0b5c3f3e-8f7a-4c47-a3b1-6f0c1d4e5a01",
         "name": "%s-shelved" % inst.display_name, "image_type": "snapshot",
         "instance_uuid": inst.uuid, "owner": "p1",
         "cmdline": "console=ttyS0", "created_at": "2026-12-07T18:00:00Z"},
        _images_root(conf))


def _state(ctxt, inst):
    row = db_api.instance_get(ctxt, inst.uuid)
    return row.vm_state, row.task_state, row.host


def test_offload_parks_volumes_and_unshelve_connects_them(ctxt, stack):
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack)
    old = set(volume_api.attachment_ids())
    db_api.action_start(ctxt, inst.uuid, "shelve")
    client.shelve_offload_instance(ctxt, db_api.to_dict(inst))
    assert _state(ctxt, inst) == ("shelved_offloaded", None, None)
    assert inst.uuid not in driver.instances
    [(_, _, disconnected)] = [c for c in driver.calls
                              if c[0] == "disconnect"]
    assert sorted(disconnected) == sorted(volumes)
    _parked(ctxt, volume_api, inst.uuid, volumes)
    parked = set(volume_api.attachment_ids())
    assert not parked & old
    # The API scheduled h1 and wrote it before the cast.
    db_api.instance_update(ctxt, inst.uuid, {"host": "h1",
                                             "task_state": "unshelving"})
    db_api.action_start(ctxt, inst.uuid, "unshelve")
    client.unshelve_instance(ctxt, db_api.to_dict(
        db_api.instance_get(ctxt, inst.uuid)), image={"id": IMAGE})
    assert _state(ctxt, inst) == ("active", None, "h1")
    assert set(volume_api.attachment_ids()) == parked   # updated, kept
    for vid in volumes:
        assert volume_api.status(vid) == "in-use"
    assert sorted(driver.instances[inst.uuid]["devices"]) == ["vda", "vdb"]
    for bdm in db_api.bdm_get_all_by_instance(ctxt, inst.uuid):
        assert bdm.connection_info


def test_image_backed_shelve_snapshots_then_offloads(ctxt, stack, conf):
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack, volume_backed=False)
    record = _snapshot_record(inst, conf)
    client.shelve_instance(ctxt, db_api.to_dict(inst), image=record)
    assert _state(ctxt, inst) == ("shelved_offloaded", None, None)
    [snapshot] = images.snapshots_of(inst.uuid, _images_root(conf))
    assert snapshot["id"] == record["id"]
    assert snapshot["image_type"] == "snapshot"
    assert snapshot["name"] == "bfv-shelved"
    # Uploaded by the host: active, with its data's size and checksum.
    assert (snapshot["status"], snapshot["size"]) == ("active", 0)
    assert snapshot["checksum"] == "d41d8cd98f00b204e9800998ecf8427e"
    assert os.path.isfile(snapshot["kernel"])
    _parked(ctxt, volume_api, inst.uuid, volumes)
    db_api.instance_update(ctxt, inst.uuid, {"host": "h1"})
    client.unshelve_instance(ctxt, db_api.to_dict(
        db_api.instance_get(ctxt, inst.uuid)), image=snapshot)
    assert _state(ctxt, inst) == ("active", None, "h1")
    assert volume_api.status(volumes[0]) == "in-use"
    # The snapshot image is deleted once the server runs again.
    assert images.snapshots_of(inst.uuid, _images_root(conf)) == []
    assert ("spawn", inst.uuid) in driver.calls


def test_shelve_without_offload_keeps_the_guest(ctxt, stack, conf):
    conf.set_override("shelved_offload_time", -1)
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack, volume_backed=False)
    attachments = set(volume_api.attachment_ids())
    client.shelve_instance(ctxt, db_api.to_dict(inst),
                           image=_snapshot_record(inst, conf))
    assert _state(ctxt, inst) == ("shelved", None, "h1")
    assert driver.get_power_state(db_api.to_dict(inst)) == 4  # shutdown
    assert set(volume_api.attachment_ids()) == attachments
    assert volume_api.status(volumes[0]) == "in-use"
    client.unshelve_instance(ctxt, db_api.to_dict(inst))
    assert _state(ctxt, inst) == ("active", None, "h1")
    assert ("power_on", inst.uuid) in driver.calls
    assert images.snapshots_of(inst.uuid, _images_root(conf)) == []


def test_failed_unshelve_parks_the_volumes_again(ctxt, stack):
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack)
    client.shelve_offload_instance(ctxt, db_api.to_dict(inst))
    db_api.instance_update(ctxt, inst.uuid, {"host": "h1",
                                             "task_state": "unshelving"})
    driver.fail_spawn = exception.InstanceBuildFailed(
        instance_uuid=inst.uuid, reason="no room for the guest")
    client.unshelve_instance(ctxt, db_api.to_dict(   # fails, not raised
        db_api.instance_get(ctxt, inst.uuid)), image={"id": IMAGE})
    assert _state(ctxt, inst) == ("shelved_offloaded", None, None)
    _parked(ctxt, volume_api, inst.uuid, volumes)
    assert inst.uuid not in driver.instances
    # The volumes were updated (attaching) before the spawn failed, and
    # disconnected by the destroy of the failed guest.
    assert volume_api.calls.count("attachment_update") == 2 + 2
    assert [c for c in driver.calls if c[0] == "disconnect"][-1][2]


def test_failed_snapshot_leaves_the_server_stopped(ctxt, stack, conf,
                                                   monkeypatch):
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack, volume_backed=False)

    def broken(*args, **kwargs):
        raise exception.InstanceNotFound(instance_id=inst.uuid)
    monkeypatch.setattr(driver, "snapshot", broken)
    client.shelve_instance(ctxt, db_api.to_dict(inst),   # not raised
                           image=_snapshot_record(inst, conf))
    assert _state(ctxt, inst) == ("stopped", None, "h1")
    assert images.snapshots_of(inst.uuid, _images_root(conf)) == []
    assert volume_api.status(volumes[0]) == "in-use"


def test_snapshot_registry_never_deletes_a_base_image(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "image.json").write_text(json.dumps({"id": "base"}))
    assert images.delete_snapshot("base", str(tmp_path)) is False
    assert images.delete_snapshot("../etc", str(tmp_path)) is False
    assert base.exists()


def test_unshelve_names_a_volume_attached_while_offloaded(ctxt, stack):
    """The API wrote its BDM with no device name and completed its
    attachment without a connector: the unshelve names it, connects it
    and completes it again."""
    _, client, driver, volume_api = stack
    inst, volumes = _server(ctxt, stack)
    client.shelve_offload_instance(ctxt, db_api.to_dict(inst))
    vid = volume_api.add_volume()
    att = volume_api.attachment_create(ctxt, vid, inst.uuid)
    volume_api.attachment_complete(ctxt, att["id"])
    bfv._bdm(ctxt, inst, None, source_type="volume", volume_id=vid,
             attachment_id=att["id"])
    db_api.instance_update(ctxt, inst.uuid, {"host": "h1"})
    client.unshelve_instance(ctxt, db_api.to_dict(
        db_api.instance_get(ctxt, inst.uuid)), image={"id": IMAGE})
    assert _state(ctxt, inst) == ("active", None, "h1")
    bdm = db_api.bdm_get_by_volume_and_instance(ctxt, vid, inst.uuid)
    assert bdm.device_name == "/dev/vdc" and bdm.connection_info
    assert volume_api.status(vid) == "in-use"
    assert sorted(driver.instances[inst.uuid]["devices"]) == [
        "vda", "vdb", "vdc"]
