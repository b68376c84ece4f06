"""The rebuild server action at the API (``miniapi.api.rebuild``,
``miniapi.compute.rebuild``) through the real app (fake:/ RPC).

Upstream's answers: 202 with the server (status REBUILD) and its
adminPass; 409 for a state or task in flight; 400 for a bad body, an
unknown image, a volume-backed server asked for another image below
2.93, a volume not in-use; nothing changed by a refusal.
"""

import pytest

from minicompute.db import api as db_api
from ministack import context
from tests.unit.miniapi import inprocess
from tests.unit.miniapi.inprocess import IMAGE_ID

ALT_IMAGE_ID = "0b5d8c2e-54c5-4a57-9a55-6d0f3c1a7e21"


@pytest.fixture(autouse=True)
def _two_images(monkeypatch):
    monkeypatch.setattr(inprocess.FakeImages, "list_images", staticmethod(
        lambda root=None: [
            {"id": IMAGE_ID, "name": "cirros-guest", "size": 1024},
            {"id": ALT_IMAGE_ID, "name": "alt-guest", "size": 1024}]))


def _rebuild(api, server_id, version="2.93", **args):
    body = {"rebuild": dict({"imageRef": ALT_IMAGE_ID}, **args)}
    return api.post("/v2.1/servers/%s/action" % server_id, body,
                    version=version)


def _row(server_id):
    return db_api.instance_get(context.get_admin_context(), server_id)


def _volume_backed(api, volumes):
    vid = volumes.add_volume()
    volumes.set_volume_fields(vid, bootable="true",
                              volume_image_metadata={"image_id": IMAGE_ID})
    status, body, _ = api.post("/v2.1/servers", {"server": {
        "name": "bfv", "flavorRef": "42", "networks": "none",
        "imageRef": "", "block_device_mapping_v2": [{
            "uuid": vid, "source_type": "volume",
            "destination_type": "volume", "boot_index": 0}]}},
        version="2.93")
    assert status == 202, body
    server_id = body["server"]["id"]
    [bdm] = db_api.bdm_get_all_by_instance(context.get_admin_context(),
                                           server_id)
    volumes.complete_attachment(bdm.attachment_id)
    db_api.instance_update(context.get_admin_context(), server_id,
                           {"vm_state": "active", "task_state": None})
    return server_id, vid


def test_rebuild_casts_and_answers_the_server(api, make_server, compute):
    server_id = make_server()
    status, body, _ = _rebuild(api, server_id, name="renamed",
                               adminPass="s3cret", metadata={"k": "v"},
                               accessIPv4="192.0.2.1")
    assert status == 202, body
    server = body["server"]
    assert (server["id"], server["status"], server["name"],
            server["adminPass"]) == (server_id, "REBUILD", "renamed",
                                     "s3cret")
    assert server["image"]["id"] == ALT_IMAGE_ID
    assert server["user_data"] is None
    # the metadata replaces the server's; the access IP is kept
    assert (server["metadata"], server["accessIPv4"]) == \
        ({"k": "v"}, "192.0.2.1")
    assert db_api.instance_metadata_get(context.get_admin_context(),
                                        server_id) == {"k": "v"}
    cast = compute.wait_for_cast("rebuild_instance", server_id)
    assert cast["image"]["id"] == ALT_IMAGE_ID
    assert cast["reimage_boot_volume"] is False
    row = _row(server_id)
    assert (row.task_state, row.image_ref) == ("rebuilding", ALT_IMAGE_ID)
    actions = db_api.action_get_all(context.get_admin_context(), server_id)
    assert actions[0].action == "rebuild"


def test_rebuild_generates_an_admin_pass(api, make_server, compute):
    server_id = make_server()
    status, body, _ = _rebuild(api, server_id, version="2.1")
    assert status == 202
    assert body["server"]["adminPass"]
    assert "user_data" not in body["server"]


@pytest.mark.parametrize("vm_state", ["active", "stopped", "error"])
def test_rebuild_allowed_states(api, make_server, compute, vm_state):
    server_id = make_server(vm_state=vm_state)
    assert _rebuild(api, server_id)[0] == 202


@pytest.mark.parametrize("vm_state,task_state", [
    ("paused", None), ("building", None), ("active", "rebooting"),
    ("active", "rebuilding")])
def test_rebuild_refused_in_state(api, make_server, vm_state, task_state):
    server_id = make_server()
    db_api.instance_update(context.get_admin_context(), server_id,
                           {"vm_state": vm_state, "task_state": task_state})
    status, body, _ = _rebuild(api, server_id)
    assert status == 409
    assert "Cannot 'rebuild' instance" in \
        body["conflictingRequest"]["message"]
    assert _row(server_id).image_ref == IMAGE_ID


@pytest.mark.parametrize("args,version", [
    ({"imageRef": None}, "2.93"), ({"imageRef": "not-a-uuid"}, "2.93"),
    ({"name": ""}, "2.93"), ({"accessIPv4": "1.2.3"}, "2.93"),
    ({"metadata": {"k": 1}}, "2.93"), ({"bogus": 1}, "2.93"),
    ({"description": "d"}, "2.18"), ({"user_data": "x"}, "2.56"),
    ({"personality": []}, "2.57"), ({"hostname": "h"}, "2.89")])
def test_rebuild_bad_body(api, make_server, args, version):
    server_id = make_server()
    assert _rebuild(api, server_id, version=version, **args)[0] == 400
    assert _row(server_id).task_state is None


def test_rebuild_without_image_ref(api, make_server):
    server_id = make_server()
    status, _, _ = api.post("/v2.1/servers/%s/action" % server_id,
                            {"rebuild": {"name": "x"}})
    assert status == 400


def test_rebuild_unknown_image(api, make_server):
    server_id = make_server()
    status, body, _ = _rebuild(
        api, server_id, imageRef="11111111-2222-3333-4444-555555555555")
    assert status == 400
    assert body["badRequest"]["message"] == "Cannot find image for rebuild"
    assert _row(server_id).task_state is None


def test_rebuild_key_name_refused(api, make_server):
    server_id = make_server()
    assert _rebuild(api, server_id, version="2.54", key_name="k")[0] == 400


def test_rebuild_unknown_server(api):
    assert _rebuild(api, "11111111-2222-3333-4444-555555555555")[0] == 404


def test_volume_backed_different_image_below_2_93(api, compute, volumes):
    server_id, _ = _volume_backed(api, volumes)
    status, body, _ = _rebuild(api, server_id, version="2.92")
    assert status == 400
    assert body["badRequest"]["message"] == (
        "Image %s is unacceptable: Unable to rebuild with a different "
        "image for a volume-backed server." % ALT_IMAGE_ID)
    assert _row(server_id).task_state is None


def test_volume_backed_same_image_below_2_93(api, compute, volumes):
    server_id, _ = _volume_backed(api, volumes)
    status, _, _ = _rebuild(api, server_id, version="2.92",
                            imageRef=IMAGE_ID)
    assert status == 202
    cast = compute.wait_for_cast("rebuild_instance", server_id)
    assert cast["reimage_boot_volume"] is False


def test_volume_backed_at_2_93_reimages(api, compute, volumes):
    server_id, _ = _volume_backed(api, volumes)
    status, body, _ = _rebuild(api, server_id, version="2.93")
    assert status == 202
    assert body["server"]["image"] == ""
    cast = compute.wait_for_cast("rebuild_instance", server_id)
    assert cast["reimage_boot_volume"] is True
    assert _row(server_id).image_ref == ""


def test_volume_backed_trusted_certs_refused(api, compute, volumes):
    server_id, _ = _volume_backed(api, volumes)
    status, _, _ = _rebuild(api, server_id,
                            trusted_image_certificates=["cert"])
    assert status == 400


def test_volume_not_in_use_is_400(api, compute, volumes):
    server_id, vid = _volume_backed(api, volumes)
    volumes.set_volume_fields(vid, status="detaching")
    status, body, _ = _rebuild(api, server_id)
    assert status == 400
    assert "status must be 'in-use'" in body["badRequest"]["message"]
    assert _row(server_id).task_state is None


def test_failed_cast_leaves_the_server_as_it_was(api, make_server, app,
                                                 monkeypatch):
    server_id = make_server()
    rpcapi = app.config["COMPUTE_API"].compute_rpcapi

    def refuse(*args, **kwargs):
        raise RuntimeError("broker down")
    monkeypatch.setattr(rpcapi, "rebuild_instance", refuse)
    db_api.instance_metadata_update(context.get_admin_context(), server_id,
                                    {"old": "1"})
    status, _, _ = _rebuild(api, server_id, name="other",
                            metadata={"new": "2"}, accessIPv4="192.0.2.9")
    assert status == 500
    row = _row(server_id)
    assert (row.task_state, row.image_ref, row.display_name,
            row.access_ip_v4) == (None, IMAGE_ID, "vm1", None)
    assert db_api.instance_metadata_get(context.get_admin_context(),
                                        server_id) == {"old": "1"}


@pytest.mark.parametrize("version", ["2.1", "2.74"])
def test_answer_below_2_75_has_no_extended_attributes(api, make_server,
                                                      compute, version):
    server_id = make_server()
    status, body, _ = _rebuild(api, server_id, version=version)
    assert status == 202
    keys = set(body["server"])
    assert not [k for k in keys if k.startswith(("OS-EXT-", "OS-SRV-"))]
    assert not keys & {"config_drive",
                       "os-extended-volumes:volumes_attached"}
    # key_name from 2.54, as upstream
    assert ("key_name" in keys) == (version == "2.74")
    assert {"id", "name", "status", "image", "flavor", "adminPass"} <= keys


def test_answer_from_2_75_is_the_full_view(api, make_server, compute):
    server_id = make_server()
    status, body, _ = _rebuild(api, server_id, version="2.75")
    assert status == 202
    server = body["server"]
    assert server["OS-EXT-STS:task_state"] == "rebuilding"
    assert "os-extended-volumes:volumes_attached" in server
    assert "OS-EXT-SRV-ATTR:user_data" not in server
    assert server["user_data"] is None


REBUILD_VERSIONS = ["2.1", "2.19", "2.26", "2.47", "2.54", "2.57", "2.63",
                    "2.71", "2.73", "2.75", "2.79", "2.89", "2.90", "2.93",
                    "2.96"]


@pytest.mark.parametrize("version", REBUILD_VERSIONS)
@pytest.mark.parametrize("token", ["admin:p1", "u1:p1"])
def test_answer_matches_tempests_schema(api, make_server, compute, version,
                                        token):
    """As tempest's servers_client.rebuild_server checks it (with an
    adminPass given, the schema that requires it)."""
    from tests.unit.miniapi import tempest_schemas as ts
    ts.require_tempest()
    server_id = make_server(token=token)
    status, body, _ = api.post(
        "/v2.1/servers/%s/action" % server_id,
        {"rebuild": {"imageRef": ALT_IMAGE_ID, "adminPass": "pw"}},
        token=token, version=version)
    ts.check_client("servers_client", "rebuild_server_with_admin_pass",
                    version, status, body)
