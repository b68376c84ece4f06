"""Flavors, os-services and os-instance-actions."""

from minicompute.db import api as db_api
from ministack import context


def test_flavors(api):
    _, body, _ = api.get("/v2.1/flavors")
    names = [f["name"] for f in body["flavors"]]
    assert names == ["m1.nano", "m1.micro", "m1.tiny", "m1.small"]
    _, body, _ = api.get("/v2.1/flavors/detail?is_public=None",
                         version="2.61")
    nano = body["flavors"][0]
    assert nano["ram"] == 128 and nano["vcpus"] == 1 and nano["disk"] == 1
    assert nano["extra_specs"] == {} and nano["description"] is None
    assert nano["swap"] == ""
    _, body, _ = api.get("/v2.1/flavors/42", version="2.75")
    assert body["flavor"]["swap"] == 0
    assert api.get("/v2.1/flavors/m1.tiny")[0] == 404


def test_services(api, compute):
    _, body, _ = api.get("/v2.1/os-services", version="2.53")
    (svc,) = body["services"]
    assert svc["host"] == "host1" and svc["state"] == "up"
    assert svc["status"] == "enabled"
    assert api.get("/v2.1/os-services", token="u1:p1")[0] == 403
    url = "/v2.1/os-services/" + svc["id"]
    status, body, _ = api.put(url, {"forced_down": True}, version="2.53")
    assert status == 200
    assert body["service"]["state"] == "down"
    assert api.put(url, {"bogus": 1}, version="2.53")[0] == 400
    assert api.put(url, {}, version="2.53")[0] == 400


def test_instance_actions(api, make_server, volumes, admin_ctxt):
    server_id = make_server()
    vol = volumes.add_volume()
    api.post("/v2.1/servers/%s/os-volume_attachments" % server_id,
             {"volumeAttachment": {"volumeId": vol}})
    actions = db_api.action_get_all(admin_ctxt, server_id)
    attach = actions[0]
    ctxt = context.RequestContext(request_id=attach.request_id,
                                  user_id="admin", project_id="p1",
                                  roles=["admin"])
    db_api.action_event_start(ctxt, server_id, "compute_attach_volume",
                              "host1")
    db_api.action_event_finish(ctxt, server_id, "compute_attach_volume",
                               "host1", result="Success")
    url = "/v2.1/servers/%s/os-instance-actions" % server_id
    _, body, _ = api.get(url, version="2.84")
    listed = body["instanceActions"]
    assert [a["action"] for a in listed] == ["attach_volume", "create"]
    assert "updated_at" in listed[0]
    _, body, _ = api.get(url + "/" + attach.request_id, version="2.84")
    action = body["instanceAction"]
    (event,) = action["events"]
    assert event["event"] == "compute_attach_volume"
    assert event["result"] == "Success"
    assert event["host"] == "host1" and event["hostId"]
    assert "details" in event and "traceback" in event
    # a non-admin owner: events from 2.51, without host/traceback
    server2 = make_server(token="u1:p1")
    _, body, _ = api.get("/v2.1/servers/%s/os-instance-actions" % server2,
                         token="u1:p1")
    req = body["instanceActions"][0]["request_id"]
    _, body, _ = api.get("/v2.1/servers/%s/os-instance-actions/%s"
                         % (server2, req), token="u1:p1", version="2.50")
    assert "events" not in body["instanceAction"]
    _, body, _ = api.get("/v2.1/servers/%s/os-instance-actions/%s"
                         % (server2, req), token="u1:p1", version="2.62")
    assert body["instanceAction"]["events"] == []
    assert api.get(url + "/req-nope")[0] == 404
    assert api.get(url + "?limit=1", version="2.58")[1][
        "instanceActions"][0]["action"] == "attach_volume"
    assert api.get(url + "?bogus=1", version="2.58")[0] == 400
    assert api.get(url + "?marker=req-nope", version="2.58")[0] == 400


def _service_of(api, host):
    _, body, _ = api.get("/v2.1/os-services?binary=nova-compute",
                         version="2.53")
    return {s["host"]: s for s in body["services"]}.get(host)


def test_delete_a_retired_hosts_service_and_node(api, compute, compute2,
                                                 admin_ctxt):
    """``openstack compute service delete``: host2 (a subnode taken away)
    goes from os-services and os-hypervisors; host1 stays."""
    service = _service_of(api, "host2")
    status, _, _ = api.delete("/v2.1/os-services/%s" % service["id"],
                              version="2.53")
    assert status == 204
    assert _service_of(api, "host2") is None
    assert _service_of(api, "host1")["state"] == "up"
    _, body, _ = api.get("/v2.1/os-hypervisors", version="2.53")
    assert [h["hypervisor_hostname"] for h in body["hypervisors"]] == \
        ["host1"]
    assert api.delete("/v2.1/os-services/%s" % service["id"],
                      version="2.53")[0] == 404


def test_delete_a_service_by_id_before_2_53_and_bad_ids(api, compute,
                                                       compute2):
    ids = {s["host"]: s["id"] for s in api.get(
        "/v2.1/os-services", version="2.52")[1]["services"]}
    assert api.delete("/v2.1/os-services/%s" % ids["host2"],
                      version="2.52")[0] == 204
    assert api.delete("/v2.1/os-services/999999", version="2.52")[0] == 404
    status, body, _ = api.delete("/v2.1/os-services/not-a-uuid",
                                 version="2.53")
    assert status == 400, body
    assert api.delete("/v2.1/os-services/%s" % ids["host1"],
                      token="u1:p1")[0] == 403


def test_a_host_with_instances_cannot_be_deleted(api, compute, make_server):
    make_server()
    service = _service_of(api, "host1")
    status, body, _ = api.delete("/v2.1/os-services/%s" % service["id"],
                                 version="2.53")
    assert status == 409, body
    assert body["conflictingRequest"]["message"] == (
        "Unable to delete compute service that is hosting instances. "
        "Migrate or delete the instances first.")
    assert _service_of(api, "host1")["state"] == "up"
