"""os-volume_attachments: the API phase, its undo, views and errors."""

import uuid

import oslo_messaging as messaging

from minicompute import exception
from minicompute.db import api as db_api
from ministack import context
from tests.support import waiting

BASE = "/v2.1/servers/%s/os-volume_attachments"


def _attach(api, server_id, volume_id, version="2.89", **extra):
    body = {"volumeAttachment": dict(volumeId=volume_id, **extra)}
    return api.post(BASE % server_id, body, version=version)


def _bdms(server_id):
    return db_api.bdm_get_all_by_instance(context.get_admin_context(),
                                          server_id)


def test_attach_sequence(api, make_server, volumes, compute):
    """POST: reserve name (CALL), attachment_create, action, CAST."""
    server_id = make_server()
    volume_id = volumes.add_volume()
    status, body, _ = _attach(api, server_id, volume_id, tag="data",
                              delete_on_termination=True)
    assert status == 200, body
    att = body["volumeAttachment"]
    # POST is not affected by 2.89: id present, no attachment_id/bdm_uuid.
    assert att == {"id": volume_id, "volumeId": volume_id,
                   "serverId": server_id, "device": "/dev/vdb",
                   "tag": "data", "delete_on_termination": True}
    assert volumes.status(volume_id) == "reserved"
    (bdm,) = _bdms(server_id)
    assert bdm.attachment_id in volumes.attachment_ids()
    assert bdm.delete_on_termination is True
    assert bdm.connection_info is None
    cast = compute.wait_for_cast("attach_volume", server_id)
    assert cast["bdm"]["attachment_id"] == bdm.attachment_id
    assert cast["instance"]["uuid"] == server_id
    # The volume's flag as the API read it: the host need not GET it.
    assert cast["multiattach"] is False
    actions = db_api.action_get_all(context.get_admin_context(), server_id)
    assert actions[0].action == "attach_volume"


def test_attach_views_per_version(api, make_server, volumes):
    server_id = make_server()
    volume_id = volumes.add_volume()
    assert _attach(api, server_id, volume_id, tag="t1")[0] == 200
    url = BASE % server_id
    _, body, _ = api.get(url, version="2.1")
    assert body["volumeAttachments"] == [{
        "id": volume_id, "volumeId": volume_id, "serverId": server_id,
        "device": "/dev/vdb"}]
    _, body, _ = api.get(url, version="2.79")
    assert body["volumeAttachments"][0]["tag"] == "t1"
    assert body["volumeAttachments"][0]["delete_on_termination"] is False
    _, body, _ = api.get(url, version="2.89")
    item = body["volumeAttachments"][0]
    assert "id" not in item
    bdm = _bdms(server_id)[0]
    assert item["attachment_id"] == bdm.attachment_id
    assert item["bdm_uuid"] == bdm.uuid
    status, body, _ = api.get(url + "/" + volume_id, version="2.89")
    assert status == 200
    assert body["volumeAttachment"] == item


def test_post_response_in_list(api, make_server, volumes):
    """tempest: the POST response dict is `In` the GET list (2.79)."""
    server_id = make_server()
    volume_id = volumes.add_volume()
    _, posted, _ = _attach(api, server_id, volume_id, version="2.79")
    _, listed, _ = api.get(BASE % server_id, version="2.79")
    assert posted["volumeAttachment"] in listed["volumeAttachments"]


def test_2_89_hides_bdm_without_attachment(api, make_server, admin_ctxt):
    """Bug 2160224: a BDM with no attachment_id yet is hidden at 2.89."""
    server_id = make_server()
    vol = str(uuid.uuid4())
    db_api.bdm_create(admin_ctxt, {
        "instance_uuid": server_id, "volume_id": vol, "device_name":
        "/dev/vdb", "source_type": "volume", "destination_type": "volume"})
    assert api.get(BASE % server_id, version="2.89")[1] == \
        {"volumeAttachments": []}
    assert api.get(BASE % server_id + "/" + vol, version="2.89")[0] == 404
    assert len(api.get(BASE % server_id, version="2.88")[1][
        "volumeAttachments"]) == 1


def test_attach_tag_below_2_49_rejected(api, make_server, volumes):
    server_id = make_server()
    status, body, _ = _attach(api, server_id, volumes.add_volume(),
                              version="2.48", tag="x")
    assert status == 400
    assert "Additional properties" in body["badRequest"]["message"]


def test_attach_dot_below_2_79_rejected(api, make_server, volumes):
    server_id = make_server()
    status, _, _ = _attach(api, server_id, volumes.add_volume(),
                           version="2.78", delete_on_termination=True)
    assert status == 400


def test_second_attach_same_server_is_400(api, make_server, volumes):
    server_id = make_server()
    volume_id = volumes.add_volume()
    assert _attach(api, server_id, volume_id)[0] == 200
    status, body, _ = _attach(api, server_id, volume_id)
    assert status == 400
    assert "already attached" in body["badRequest"]["message"]
    assert len(_bdms(server_id)) == 1


def test_attach_to_other_server_is_400(api, make_server, volumes):
    s1, s2 = make_server("a"), make_server("b")
    volume_id = volumes.add_volume()
    assert _attach(api, s1, volume_id)[0] == 200
    status, _, _ = _attach(api, s2, volume_id)
    assert status == 400
    assert _bdms(s2) == []


def test_cinder_refusal_rolls_back(api, make_server, volumes):
    """Cinder refuses the reservation: 400, the BDM is destroyed."""
    server_id = make_server()
    volume_id = volumes.add_volume(status="error")
    status, body, _ = _attach(api, server_id, volume_id)
    assert status == 400
    assert "status must be available" in body["badRequest"]["message"]
    assert _bdms(server_id) == []
    assert volumes.attachment_ids() == []


def test_cast_failure_rolls_back_everything(api, make_server, volumes,
                                            compute, monkeypatch, app):
    """A failure after attachment_create deletes the attachment too."""
    server_id = make_server()
    volume_id = volumes.add_volume()
    rpcapi = app.config["COMPUTE_API"].compute_rpcapi

    def broken_cast(*args, **kwargs):
        raise messaging.MessageDeliveryFailure("broker went away")
    monkeypatch.setattr(rpcapi, "attach_volume", broken_cast)
    status, _, _ = _attach(api, server_id, volume_id)
    assert status == 500
    assert _bdms(server_id) == []
    assert volumes.attachment_ids() == []
    assert volumes.status(volume_id) == "available"


def test_reserve_timeout_is_409_and_leaves_nothing(api, make_server, volumes,
                                                   compute, conf, app):
    """The host does not answer the CALL in time: 409, no orphan BDM."""
    import threading
    server_id = make_server()
    volume_id = volumes.add_volume()
    rpcapi = app.config["COMPUTE_API"].compute_rpcapi
    rpcapi.client = rpcapi.client.prepare(timeout=0.5)
    gate = threading.Event()
    compute.delay_reserve = gate
    status, body, _ = _attach(api, server_id, volume_id)
    assert status == 409, body
    gate.set()  # the host now creates the BDM late...
    [late] = waiting.wait_for("the late BDM", lambda: _bdms(server_id),
                              timeout=5, interval=0.02)
    assert late.attachment_id is None
    # ...and it is not shown as an attachment: without attachment_id it is
    # hidden at 2.89.
    assert api.get(BASE % server_id, version="2.89")[1][
        "volumeAttachments"] == []
    assert volumes.attachment_ids() == []


def test_remote_exception_maps_to_http(api, make_server, volumes, compute):
    """An exception raised on the host crosses RPC and keeps its code."""
    server_id = make_server()
    compute.fail_reserve = exception.TooManyDiskDevices(maximum=2)
    status, body, _ = _attach(api, server_id, volumes.add_volume())
    assert status == 403
    assert "maximum allowed number of disk devices (2)" in \
        body["forbidden"]["message"]


def test_attach_unknown_volume_404(api, make_server):
    server_id = make_server()
    status, body, _ = _attach(api, server_id, str(uuid.uuid4()))
    assert status == 404
    assert "itemNotFound" in body


def test_attach_volume_of_other_project_404(api, make_server, volumes):
    server_id = make_server(token="u1:p1")
    volume_id = volumes.add_volume(project_id="p2")
    status, _, _ = api.post(BASE % server_id, {"volumeAttachment": {
        "volumeId": volume_id}}, token="u1:p1")
    assert status == 404


def test_attach_unknown_server_404(api, volumes):
    status, _, _ = _attach(api, str(uuid.uuid4()), volumes.add_volume())
    assert status == 404
    status, _, _ = _attach(api, "not-a-uuid", volumes.add_volume())
    assert status == 404


def test_attach_other_project_server_404(api, make_server, volumes):
    server_id = make_server(token="u1:p1")
    status, _, _ = api.post(BASE % server_id, {"volumeAttachment": {
        "volumeId": volumes.add_volume(project_id="p2")}},
        token="u2:p2")
    assert status == 404


def test_attach_wrong_state_409(api, make_server, volumes):
    server_id = make_server(vm_state="building")
    status, body, _ = _attach(api, server_id, volumes.add_volume())
    assert status == 409
    assert "vm_state building" in body["conflictingRequest"]["message"]


def test_attach_task_in_flight_409(api, make_server, volumes, admin_ctxt):
    server_id = make_server()
    db_api.instance_update(admin_ctxt, server_id,
                           {"task_state": "powering-off"})
    status, _, _ = _attach(api, server_id, volumes.add_volume())
    assert status == 409


def test_attach_compute_down_409(api, make_server, volumes, admin_ctxt):
    server_id = make_server()
    svc = db_api.service_get_all(admin_ctxt)[0]
    db_api.service_update(admin_ctxt, svc.uuid, {"forced_down": True})
    volume_id = volumes.add_volume()
    status, body, _ = _attach(api, server_id, volume_id)
    assert status == 409
    assert "unavailable" in body["conflictingRequest"]["message"]
    assert volumes.status(volume_id) == "available"


def test_bad_bodies_400(api, make_server, volumes):
    server_id = make_server()
    url = BASE % server_id
    vol = volumes.add_volume()
    cases = [
        {"volumeAttachment": {"volumeId": "not-a-uuid"}},
        {"volumeAttachment": {"volumeId": vol, "bogus": 1}},
        {"volumeAttachment": {}},
        {"volumeAttachment": {"volumeId": vol, "device": "sdb"}},
        {"volumeAttachment": {"volumeId": vol, "tag": "a/b"}},
        {"volumeAttachment": {"volumeId": vol, "tag": "x" * 61}},
        {"volumeAttachment": {"volumeId": vol,
                              "delete_on_termination": "maybe"}},
        {"volumeId": vol},
        [],
    ]
    for body in cases:
        status, resp, _ = api.post(url, body, version="2.89")
        assert status == 400, (body, resp)
        assert resp["badRequest"]["code"] == 400
    status, resp, _ = api.post(url, raw="{not json", version="2.89")
    assert status == 400
    assert resp["badRequest"]["message"] == "Malformed request body"
    assert _bdms(server_id) == []
    assert volumes.status(vol) == "available"


def test_detach_sequence(api, make_server, volumes, compute):
    server_id = make_server()
    volume_id = volumes.add_volume()
    _attach(api, server_id, volume_id)
    bdm = _bdms(server_id)[0]
    volumes.complete_attachment(bdm.attachment_id)
    status, body, _ = api.delete(BASE % server_id + "/" + volume_id)
    assert status == 202 and body is None
    assert volumes.status(volume_id) == "detaching"
    cast = compute.wait_for_cast("detach_volume", server_id)
    assert cast["attachment_id"] == bdm.attachment_id
    assert cast["volume_id"] == volume_id
    actions = db_api.action_get_all(context.get_admin_context(), server_id)
    assert actions[0].action == "detach_volume"


def test_detach_not_attached_404(api, make_server, volumes):
    server_id = make_server()
    volume_id = volumes.add_volume()
    status, body, _ = api.delete(BASE % server_id + "/" + volume_id)
    assert status == 404
    assert "is not attached to volume" in body["itemNotFound"]["message"]
    status, _, _ = api.delete(BASE % server_id + "/" + str(uuid.uuid4()))
    assert status == 404
    status, _, _ = api.delete(BASE % server_id + "/garbage")
    assert status == 404


def test_detach_while_reserved_400(api, make_server, volumes):
    """begin_detaching refuses a volume that is not in-use yet: 400."""
    server_id = make_server()
    volume_id = volumes.add_volume()
    _attach(api, server_id, volume_id)
    status, body, _ = api.delete(BASE % server_id + "/" + volume_id)
    assert status == 400
    assert volumes.status(volume_id) == "reserved"


def test_detach_cast_failure_rolls_back(api, make_server, volumes, app,
                                        monkeypatch):
    server_id = make_server()
    volume_id = volumes.add_volume()
    _attach(api, server_id, volume_id)
    volumes.complete_attachment(_bdms(server_id)[0].attachment_id)
    rpcapi = app.config["COMPUTE_API"].compute_rpcapi

    def broken_cast(*args, **kwargs):
        raise messaging.MessageDeliveryFailure("broker went away")
    monkeypatch.setattr(rpcapi, "detach_volume", broken_cast)
    status, _, _ = api.delete(BASE % server_id + "/" + volume_id)
    assert status == 500
    assert volumes.status(volume_id) == "in-use"


def test_update_delete_on_termination_2_85(api, make_server, volumes):
    server_id = make_server()
    volume_id = volumes.add_volume()
    _attach(api, server_id, volume_id)
    url = BASE % server_id + "/" + volume_id
    status, _, _ = api.put(url, {"volumeAttachment": {
        "volumeId": volume_id, "delete_on_termination": True}},
        version="2.85")
    assert status == 202
    assert _bdms(server_id)[0].delete_on_termination is True
    status, body, _ = api.put(url, {"volumeAttachment": {
        "volumeId": volume_id, "device": "/dev/vdz"}}, version="2.85")
    assert status == 400
    assert "device property is not mutable" in body["badRequest"]["message"]
    status, _, _ = api.put(url, {"volumeAttachment": {
        "volumeId": volume_id, "delete_on_termination": False}},
        version="2.84")
    assert status == 400  # below 2.85 only volumeId is allowed


def test_swap_is_refused(api, make_server, volumes):
    """Swap: 403 for users, 409 (not migrating) for the service role."""
    server_id = make_server()
    v1, v2 = volumes.add_volume(), volumes.add_volume()
    _attach(api, server_id, v1)
    url = BASE % server_id + "/" + v1
    body = {"volumeAttachment": {"volumeId": v2}}
    assert api.put(url, body, token="u2:p2")[0] == 404  # not their server
    assert api.put(url, body, token="u1:p1")[0] == 403
    assert api.put(url, body)[0] == 403
    status, resp, _ = api.put(url, body, headers={"X-Roles": "service"})
    assert status == 409
    assert "not migrating" in resp["conflictingRequest"]["message"]
    unknown = BASE % server_id + "/" + str(uuid.uuid4())
    assert api.put(unknown, body, headers={"X-Roles": "service"})[0] == 404


def test_list_paging_and_query_validation(api, make_server, volumes):
    server_id = make_server()
    vols = [volumes.add_volume() for _ in range(3)]
    for v in vols:
        _attach(api, server_id, v)
    _, body, _ = api.get(BASE % server_id + "?limit=1&offset=1",
                         version="2.79")
    assert [a["volumeId"] for a in body["volumeAttachments"]] == [vols[1]]
    assert [a["device"] for a in api.get(BASE % server_id)[1][
        "volumeAttachments"]] == ["/dev/vdb", "/dev/vdc", "/dev/vdd"]
    assert api.get(BASE % server_id + "?foo=1", version="2.74")[0] == 200
    assert api.get(BASE % server_id + "?foo=1", version="2.75")[0] == 400
    assert api.get(BASE % server_id + "?limit=x", version="2.75")[0] == 400
