"""Servers: create/list/show/delete/actions, views per version, errors."""

import uuid

from minicompute.db import api as db_api
from ministack import context
from tests.unit.miniapi.inprocess import IMAGE_ID


def _create(api, **server):
    body = {"server": dict({"name": "vm1", "imageRef": IMAGE_ID,
                            "flavorRef": "42", "networks": "none"},
                           **server)}
    return api.post("/v2.1/servers", body, version="2.96")


def test_create_casts_build(api, compute):
    status, body, headers = _create(api)
    assert status == 202, body
    server = body["server"]
    assert set(server) == {"id", "links", "OS-DCF:diskConfig",
                           "security_groups", "adminPass"}
    assert headers["Location"].endswith("/v2.1/servers/" + server["id"])
    (name, kwargs), = compute.wait_for_casts(1, server["id"])
    assert name == "build_and_run_instance"
    assert kwargs["instance"]["uuid"] == server["id"]
    assert kwargs["instance"]["host"] == "host1"
    assert kwargs["image"]["id"] == IMAGE_ID
    assert kwargs["flavor"]["name"] == "m1.nano"
    inst = db_api.instance_get(context.get_admin_context(), server["id"])
    assert (inst.vm_state, inst.task_state) == ("building", "scheduling")
    actions = db_api.action_get_all(context.get_admin_context(),
                                    server["id"])
    assert [a.action for a in actions] == ["create"]


def test_create_by_image_name_and_osc_bdm(api, compute):
    """OSC sends the image as a boot_index 0 image BDM (imageRef too)."""
    status, _, _ = _create(api, imageRef="cirros-guest")
    assert status == 202
    status, body, _ = _create(api, block_device_mapping_v2=[{
        "uuid": IMAGE_ID, "boot_index": 0, "source_type": "image",
        "destination_type": "local", "delete_on_termination": True}])
    assert status == 202, body
    # Without imageRef the image mapping is refused, as upstream.
    status, body, _ = _create(api, imageRef="", block_device_mapping_v2=[{
        "uuid": IMAGE_ID, "boot_index": 0, "source_type": "image",
        "destination_type": "local", "delete_on_termination": True}])
    assert status == 400, body
    assert "Mapping image to local is not supported" in \
        body["badRequest"]["message"]


def test_create_without_compute_host_is_error(api, compute, admin_ctxt):
    svc = db_api.service_get_all(admin_ctxt)[0]
    db_api.service_update(admin_ctxt, svc.uuid, {"disabled": True})
    status, body, _ = _create(api)
    assert status == 202
    _, show, _ = api.get("/v2.1/servers/" + body["server"]["id"])
    assert show["server"]["status"] == "ERROR"
    assert "No valid host" in show["server"]["fault"]["message"]


def test_create_bad_input(api, compute):
    cases = [
        ({"flavorRef": "999"}, "could not be found"),
        ({"imageRef": "no-such-image"}, "Can not find requested image"),
        ({"name": ""}, None),
        ({"name": " lead"}, None),
        ({"bogus": 1}, "Additional properties"),
        ({"networks": [{"uuid": str(uuid.uuid4())}]}, "Networks"),
        ({"key_name": "k"}, "key_name"),
        ({"max_count": 2}, "one server"),
        ({"availability_zone": "elsewhere"}, "availability zone"),
        ({"block_device_mapping_v2": [{"uuid": str(uuid.uuid4()),
                                       "source_type": "volume",
                                       "destination_type": "volume",
                                       "boot_index": 0}]},
         "could not be found"),
    ]
    for extra, fragment in cases:
        status, body, _ = _create(api, **extra)
        assert status == 400, (extra, body)
        if fragment:
            assert fragment in body["badRequest"]["message"], body
    status, body, _ = api.post("/v2.1/servers", {"server": {"name": "x"}})
    assert status == 400
    status, _, _ = api.post("/v2.1/servers", raw="nope")
    assert status == 400
    assert db_api.instance_get_all(context.get_admin_context(),
                                   {"all_tenants": True}) == []


def test_show_fields_2_96(api, make_server, volumes):
    server_id = make_server()
    status, body, _ = api.get("/v2.1/servers/" + server_id, version="2.96")
    assert status == 200
    server = body["server"]
    for key in ("id", "name", "status", "tenant_id", "user_id", "hostId",
                "image", "flavor", "created", "updated", "addresses",
                "links", "OS-EXT-STS:vm_state", "OS-EXT-STS:task_state",
                "OS-EXT-STS:power_state", "OS-EXT-AZ:availability_zone",
                "os-extended-volumes:volumes_attached", "locked",
                "description", "tags", "server_groups", "locked_reason",
                "pinned_availability_zone", "OS-EXT-SRV-ATTR:hostname",
                "OS-EXT-SRV-ATTR:host", "host_status"):
        assert key in server, key
    assert server["status"] == "ACTIVE"
    assert server["flavor"]["original_name"] == "m1.nano"
    assert server["image"]["id"] == IMAGE_ID
    assert server["host_status"] == "UP"
    assert server["OS-EXT-SRV-ATTR:host"] == "host1"


def test_show_fields_2_1_non_admin(api, make_server):
    server_id = make_server(token="u1:p1")
    _, body, _ = api.get("/v2.1/servers/" + server_id, token="u1:p1")
    server = body["server"]
    assert server["flavor"]["id"] == "42"
    assert "original_name" not in server["flavor"]
    assert "locked" not in server
    assert "OS-EXT-SRV-ATTR:host" not in server
    assert "OS-EXT-SRV-ATTR:hostname" not in server


def test_volumes_attached(api, make_server, volumes):
    server_id = make_server()
    vol = volumes.add_volume()
    api.post("/v2.1/servers/%s/os-volume_attachments" % server_id,
             {"volumeAttachment": {"volumeId": vol}})
    _, body, _ = api.get("/v2.1/servers/" + server_id, version="2.3")
    assert body["server"]["os-extended-volumes:volumes_attached"] == [
        {"id": vol, "delete_on_termination": False}]
    _, body, _ = api.get("/v2.1/servers/" + server_id, version="2.2")
    assert body["server"]["os-extended-volumes:volumes_attached"] == [
        {"id": vol}]


def test_show_unknown_and_by_name_404(api, make_server):
    make_server("byname")
    assert api.get("/v2.1/servers/" + str(uuid.uuid4()))[0] == 404
    status, body, _ = api.get("/v2.1/servers/byname")
    assert status == 404 and "itemNotFound" in body


def test_list_and_filters(api, make_server):
    a = make_server("alpha")
    b = make_server("beta")
    other = make_server("gamma", token="u2:p2")
    _, body, _ = api.get("/v2.1/servers")
    assert [s["id"] for s in body["servers"]] == [b, a]
    assert set(body["servers"][0]) == {"id", "name", "links"}
    _, body, _ = api.get("/v2.1/servers/detail?name=alp&deleted=False")
    assert [s["id"] for s in body["servers"]] == [a]
    _, body, _ = api.get("/v2.1/servers/detail?all_tenants=True")
    assert {s["id"] for s in body["servers"]} == {a, b, other}
    _, body, _ = api.get("/v2.1/servers/detail?all_tenants=False")
    assert {s["id"] for s in body["servers"]} == {a, b}
    status, _, _ = api.get("/v2.1/servers?all_tenants=1", token="u2:p2")
    assert status == 403
    _, body, _ = api.get("/v2.1/servers?limit=1")
    assert [s["id"] for s in body["servers"]] == [b]
    _, body, _ = api.get("/v2.1/servers?limit=1&marker=" + b)
    assert [s["id"] for s in body["servers"]] == [a]
    assert api.get("/v2.1/servers?marker=nope")[0] == 400
    assert api.get("/v2.1/servers?bogus=1", version="2.75")[0] == 400
    assert api.get("/v2.1/servers?bogus=1", version="2.74")[0] == 200
    _, body, _ = api.get("/v2.1/servers/detail?status=ACTIVE")
    assert len(body["servers"]) == 2


def test_stop_start(api, make_server, compute, admin_ctxt):
    server_id = make_server()
    url = "/v2.1/servers/%s/action" % server_id
    status, body, _ = api.post(url, {"os-stop": None})
    assert status == 202 and body is None
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert inst.task_state == "powering-off"
    # a second stop while one is in flight: 409
    assert api.post(url, {"os-stop": None})[0] == 409
    db_api.instance_update(admin_ctxt, server_id,
                           {"vm_state": "stopped", "task_state": None})
    status, body, _ = api.post(url, {"os-stop": None})
    assert status == 409
    assert "vm_state stopped" in body["conflictingRequest"]["message"]
    assert api.post(url, {"os-start": None})[0] == 202
    names = [c[0] for c in compute.wait_for_casts(3, server_id)]
    assert sorted(names) == ["build_and_run_instance", "start_instance",
                             "stop_instance"]
    actions = [a.action for a in db_api.action_get_all(admin_ctxt,
                                                       server_id)]
    assert set(actions) == {"create", "stop", "start"}


def test_bad_actions(api, make_server):
    server_id = make_server()
    url = "/v2.1/servers/%s/action" % server_id
    status, body, _ = api.post(url, {"os-reboot": None})
    assert status == 400
    assert "There is no such action" in body["badRequest"]["message"]
    assert api.post(url, {"os-stop": None, "os-start": None})[0] == 400
    assert api.post(url, {"os-stop": "now"})[0] == 400
    assert api.post(url, raw="")[0] == 400
    assert api.post("/v2.1/servers/%s/action" % uuid.uuid4(),
                    {"os-stop": None})[0] == 404


def test_delete_casts_terminate(api, make_server, compute, admin_ctxt):
    server_id = make_server()
    status, body, _ = api.delete("/v2.1/servers/" + server_id)
    assert status == 204
    assert db_api.instance_get(admin_ctxt, server_id).task_state == \
        "deleting"
    assert compute.wait_for_cast("terminate_instance", server_id)[
        "instance"]["uuid"] == server_id
    assert api.delete("/v2.1/servers/" + server_id)[0] == 204


def test_delete_with_host_down_is_local(api, make_server, volumes,
                                        admin_ctxt):
    """Host down: attachments released, dot volumes deleted, row gone."""
    server_id = make_server()
    keep, drop = volumes.add_volume(), volumes.add_volume()
    url = "/v2.1/servers/%s/os-volume_attachments" % server_id
    api.post(url, {"volumeAttachment": {"volumeId": keep}})
    api.post(url, {"volumeAttachment": {
        "volumeId": drop, "delete_on_termination": True}}, version="2.79")
    svc = db_api.service_get_all(admin_ctxt)[0]
    db_api.service_update(admin_ctxt, svc.uuid, {"forced_down": True})
    assert api.delete("/v2.1/servers/" + server_id)[0] == 204
    assert api.get("/v2.1/servers/" + server_id)[0] == 404
    assert volumes.status(keep) == "available"
    assert not volumes.has_volume(drop)
    assert volumes.attachment_ids() == []
    # actions stay readable after delete (2.21+)
    _, body, _ = api.get("/v2.1/servers/%s/os-instance-actions" % server_id)
    assert body["instanceActions"][0]["action"] == "delete"


def test_update_name(api, make_server):
    server_id = make_server()
    status, body, _ = api.put("/v2.1/servers/" + server_id, {
        "server": {"name": "renamed", "description": "d"}}, version="2.19")
    assert status == 200
    assert body["server"]["name"] == "renamed"
    assert body["server"]["description"] == "d"
    assert api.put("/v2.1/servers/" + server_id, {
        "server": {"description": "d"}}, version="2.18")[0] == 400


def test_metadata_over_the_quota_is_403_and_creates_nothing(api):
    """nova's metadata_items quota (128, maxServerMeta in /limits):
    tempest's test_max_metadata_exceed_limit sends 129 items."""
    def create(count):
        return api.post("/v2.1/servers", {"server": {
            "name": "meta", "imageRef": IMAGE_ID, "flavorRef": "42",
            "networks": "none",
            "metadata": {str(n): str(n) for n in range(count)}}})
    before = api.get("/v2.1/servers")[1]["servers"]
    status, body, _ = create(129)
    assert status == 403
    assert body == {"forbidden": {
        "code": 403,
        "message": "Maximum number of metadata items exceeds 128"}}
    assert api.get("/v2.1/servers")[1]["servers"] == before
    assert create(128)[0] == 202
