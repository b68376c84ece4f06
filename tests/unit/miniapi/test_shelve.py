"""shelve, shelveOffload and unshelve through the real app (fake:/ RPC):
upstream's states, policies, bodies per microversion and casts."""

import json

import pytest

from minicompute.db import api as db_api
from ministack import context
from ministack import image_store
from ministack import images
from tests.unit.miniapi.conftest import HOST
from tests.unit.miniapi.conftest import HOST2
from tests.unit.miniapi.inprocess import IMAGE_ID

ADMIN = context.get_admin_context()


@pytest.fixture
def conf(conf, tmp_path):
    conf.set_override("image_dir", str(tmp_path / "images"), "api")
    return conf


def _action(api, server_id, body, **kw):
    return api.post("/v2.1/servers/%s/action" % server_id, body, **kw)


def _server(server_id):
    return db_api.instance_get(ADMIN, server_id)


def _set(server_id, **values):
    db_api.instance_update(ADMIN, server_id, values)


def _snapshot(conf, server_id, tmp_path):
    """A snapshot of the server in the registry, as its host made it."""
    disk = tmp_path / "disk"
    disk.write_bytes(b"qcow")
    return images.register_snapshot(
        {"id": "5d9b7c0e-3c1b-4b7e-9d59-0f3c1c2a4b10",
         "name": "vm1-shelved", "instance_uuid": server_id, "owner": "p1",
         "visibility": "private"}, {"disk": str(disk)},
        root=conf.api.image_dir)


def _offloaded(server_id):
    _set(server_id, vm_state="shelved_offloaded", host=None, node=None)


def test_shelve_image_backed_casts_with_its_snapshot_record(api,
                                                            make_server,
                                                            compute, conf):
    server_id = make_server(token="u1:p1")
    assert _action(api, server_id, {"shelve": None},
                   token="u1:p1")[:2] == (202, None)
    cast = compute.wait_for_cast("shelve_instance", server_id)
    image = cast["image"]
    assert image["name"] == "vm1-shelved"
    assert (image["instance_uuid"], image["owner"]) == (server_id, "p1")
    assert image["visibility"] == "private"
    # The API created the record, queued for the host's upload.
    [record] = images.snapshots_of(server_id, conf.api.image_dir)
    assert (record["id"], record["status"]) == (image["id"], "queued")
    assert record["image_type"] == "snapshot"
    assert _server(server_id).task_state == "shelving"
    actions = db_api.action_get_all(ADMIN, server_id)
    assert actions[0].action == "shelve"


def test_shelve_volume_backed_offloads_without_a_snapshot(api, make_server,
                                                          compute):
    server_id = make_server()
    _set(server_id, image_ref="")
    assert _action(api, server_id, {"shelve": {}})[0] == 202
    compute.wait_for_cast("shelve_offload_instance", server_id)
    assert not [c for c, _ in compute._casts_for(server_id)
                if c == "shelve_instance"]


@pytest.mark.parametrize("vm_state", ["stopped", "paused", "suspended"])
def test_shelve_from_other_allowed_states(api, make_server, compute,
                                          vm_state):
    server_id = make_server(vm_state=vm_state)
    assert _action(api, server_id, {"shelve": None})[0] == 202


def test_shelve_refusals(api, make_server, compute, conf):
    server_id = make_server()
    assert _action(api, server_id, {"shelve": {"x": 1}})[0] == 400
    assert _action(api, server_id, {"shelve": None})[0] == 202
    code, body, _ = _action(api, server_id, {"shelve": None})
    assert code == 409
    assert "task_state shelving" in body["conflictingRequest"]["message"]
    # The refused shelve's image record was not left behind.
    assert len(images.snapshots_of(server_id, conf.api.image_dir)) == 1
    _set(server_id, vm_state="shelved", task_state=None)
    code, body, _ = _action(api, server_id, {"shelve": None})
    assert code == 409
    assert "vm_state shelved" in body["conflictingRequest"]["message"]
    assert _action(api, "f" * 8, {"shelve": None})[0] == 404


def test_shelve_offload_is_admin_only_and_needs_shelved(api, make_server,
                                                        compute):
    server_id = make_server(token="u1:p1")
    assert _action(api, server_id, {"shelveOffload": None},
                   token="u1:p1")[0] == 403
    assert _action(api, server_id, {"shelveOffload": None})[0] == 409
    _set(server_id, vm_state="shelved")
    assert _action(api, server_id, {"shelveOffload": None})[0] == 202
    compute.wait_for_cast("shelve_offload_instance", server_id)
    assert _server(server_id).task_state == "shelving_offloading"
    shown = api.get("/v2.1/servers/%s" % server_id)[1]["server"]
    assert shown["status"] == "SHELVED"


def test_unshelve_of_a_shelved_server_goes_to_its_host(api, make_server,
                                                       compute):
    server_id = make_server()
    assert _action(api, server_id, {"unshelve": None})[0] == 409
    _set(server_id, vm_state="shelved")
    # A zone or a host only for an offloaded server (409), from 2.77.
    code, body, _ = _action(api, server_id, {"unshelve": {
        "availability_zone": "nova"}}, version="2.77")
    assert code == 409
    assert "SHELVED_OFFLOADED" in body["conflictingRequest"]["message"]
    assert _action(api, server_id, {"unshelve": None})[0] == 202
    cast = compute.wait_for_cast("unshelve_instance", server_id)
    assert cast["image"] is None
    row = _server(server_id)
    assert (row.task_state, row.host) == ("unshelving", HOST)


def test_unshelve_offloaded_image_backed_boots_its_snapshot(
        api, make_server, compute, conf, tmp_path):
    server_id = make_server()
    _offloaded(server_id)
    shown = api.get("/v2.1/servers/%s" % server_id)[1]["server"]
    assert shown["status"] == "SHELVED_OFFLOADED"
    snapshot = _snapshot(conf, server_id, tmp_path)
    assert _action(api, server_id, {"unshelve": None})[0] == 202
    cast = compute.wait_for_cast("unshelve_instance", server_id)
    assert cast["image"]["id"] == snapshot["id"]
    row = _server(server_id)
    assert (row.task_state, row.host) == ("unshelving", HOST)
    assert db_api.action_get_all(ADMIN, server_id)[0].action == "unshelve"


def test_unshelve_offloaded_without_its_snapshot_is_an_error(
        api, make_server, compute, conf):
    server_id = make_server()
    _offloaded(server_id)
    # A snapshot whose upload never finished is not one to boot.
    image_store.create({"id": "6d9b7c0e-3c1b-4b7e-9d59-0f3c1c2a4b10",
                        "image_type": "snapshot",
                        "instance_uuid": server_id}, conf.api.image_dir)
    assert _action(api, server_id, {"unshelve": None})[0] == 202
    row = _server(server_id)
    assert row.vm_state == "error"
    assert "cannot be found" in json.loads(row.fault)["message"]


def test_unshelve_volume_backed_boots_its_root_volume_image(
        api, make_server, compute, volumes):
    server_id = make_server()
    _set(server_id, image_ref="")
    vid = volumes.add_volume()
    volumes.set_volume_fields(vid, bootable="true", volume_image_metadata={
        "image_id": IMAGE_ID})
    db_api.bdm_create(ADMIN, {
        "instance_uuid": server_id, "source_type": "volume",
        "destination_type": "volume", "volume_id": vid, "boot_index": 0,
        "device_name": "/dev/vda"})
    _offloaded(server_id)
    assert _action(api, server_id, {"unshelve": None})[0] == 202
    cast = compute.wait_for_cast("unshelve_instance", server_id)
    assert cast["image"]["id"] == IMAGE_ID


@pytest.mark.parametrize("version,body", [
    ("2.77", {"unshelve": {}}),
    ("2.77", {"unshelve": {"availability_zone": "nova", "host": HOST}}),
    ("2.77", {"unshelve": {"availability_zone": " nova"}}),
    ("2.91", {"unshelve": {"host": 1}}),
    ("2.91", {"unshelve": {"extra": "x"}}),
    ("2.77", {"unshelve": {"availability_zone": "elsewhere"}}),
    ("2.91", {"unshelve": {"host": "no-such-host"}}),
])
def test_unshelve_bad_bodies_are_400(api, make_server, compute, version,
                                     body):
    server_id = make_server()
    _offloaded(server_id)
    assert _action(api, server_id, body, version=version)[0] == 400
    row = _server(server_id)
    assert (row.vm_state, row.task_state) == ("shelved_offloaded", None)


def test_unshelve_body_is_not_read_below_2_77(api, make_server, compute,
                                              conf, tmp_path):
    server_id = make_server()
    _offloaded(server_id)
    _snapshot(conf, server_id, tmp_path)
    assert _action(api, server_id, {"unshelve": {
        "availability_zone": "elsewhere"}}, version="2.76")[0] == 202


def test_unshelve_to_a_host_at_2_91(api, make_server, compute, compute2,
                                    conf, tmp_path):
    server_id = make_server(token="u1:p1")
    _offloaded(server_id)
    _snapshot(conf, server_id, tmp_path)
    body = {"unshelve": {"host": HOST2, "availability_zone": None}}
    assert _action(api, server_id, body, version="2.91",
                   token="u1:p1")[0] == 403
    assert _action(api, server_id, body, version="2.91")[0] == 202
    compute2.wait_for_cast("unshelve_instance", server_id)
    assert _server(server_id).host == HOST2


def test_delete_of_an_offloaded_server_deletes_its_snapshot(
        api, make_server, compute, conf, tmp_path):
    server_id = make_server()
    _offloaded(server_id)
    _snapshot(conf, server_id, tmp_path)
    assert api.delete("/v2.1/servers/%s" % server_id)[0] == 204
    assert images.snapshots_of(server_id, conf.api.image_dir) == []


def _attach(api, server_id, volume_id, version="2.20", **extra):
    return api.post("/v2.1/servers/%s/os-volume_attachments" % server_id,
                    {"volumeAttachment": dict(volumeId=volume_id, **extra)},
                    version=version)


def test_attach_and_detach_while_offloaded(api, make_server, compute,
                                           volumes):
    """No RPC: the volume is reserved and completed without a connector
    (in-use), the BDM has no device; the detach deletes the attachment
    and the BDM, and the volume too with delete_on_termination."""
    server_id = make_server()
    _offloaded(server_id)
    vid = volumes.add_volume()
    code, body, _ = _attach(api, server_id, vid)
    assert code == 200, body
    assert body["volumeAttachment"]["device"] is None
    assert volumes.status(vid) == "in-use"
    [att] = volumes.attachment_ids(volume_id=vid)
    assert volumes.attachment_status(att) == "attached"
    bdm = db_api.bdm_get_by_volume_and_instance(ADMIN, vid, server_id)
    assert (bdm.device_name, bdm.attachment_id) == (None, att)
    assert not [c for c, _ in compute._casts_for(server_id)
                if c in ("attach_volume", "reserve_block_device_name")]
    assert db_api.action_get_all(ADMIN, server_id)[0].action == \
        "attach_volume"
    path = "/v2.1/servers/%s/os-volume_attachments/%s" % (server_id, vid)
    assert api.delete(path, version="2.20")[0] == 202
    assert volumes.status(vid) == "available"
    assert volumes.attachment_ids(volume_id=vid) == []
    assert db_api.bdm_get_all_by_instance(ADMIN, server_id) == []
    # delete_on_termination (2.79): the detach deletes the volume.
    assert _attach(api, server_id, vid, version="2.79",
                   delete_on_termination=True)[0] == 200
    assert api.delete(path, version="2.79")[0] == 202
    assert not volumes.has_volume(vid)


def test_attach_while_offloaded_refusals(api, make_server, compute,
                                         volumes):
    server_id = make_server()
    _offloaded(server_id)
    vid = volumes.add_volume()
    code, body, _ = _attach(api, server_id, vid, version="2.19")
    assert code == 409
    assert "vm_state shelved_offloaded" in \
        body["conflictingRequest"]["message"]
    code, body, _ = _attach(api, server_id, vid, version="2.49", tag="t")
    assert code == 400
    assert "Tagged volume attachment" in body["badRequest"]["message"]
    multi = volumes.add_volume(multiattach=True)
    code, body, _ = _attach(api, server_id, multi, version="2.60")
    assert code == 400
    assert "multiattach" in body["badRequest"]["message"]
    for volume_id in (vid, multi):
        assert volumes.status(volume_id) == "available"
    assert db_api.bdm_get_all_by_instance(ADMIN, server_id) == []
