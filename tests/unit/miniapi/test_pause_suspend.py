"""The pause, unpause, suspend and resume actions: 202, the task state
set, the action recorded and the cast sent; upstream's 409s and 404s."""

import uuid

import oslo_messaging as messaging
import pytest

from minicompute.db import api as db_api

# action -> (vm_state it starts from, task state it sets, the cast)
ACTIONS = {
    "pause": ("active", "pausing", "pause_instance"),
    "unpause": ("paused", "unpausing", "unpause_instance"),
    "suspend": ("active", "suspending", "suspend_instance"),
    "resume": ("suspended", "resuming", "resume_instance"),
}


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_action_is_202_sets_task_state_records_and_casts(
        name, api, make_server, compute, admin_ctxt):
    vm_state, task_state, cast = ACTIONS[name]
    server_id = make_server(vm_state=vm_state)
    url = "/v2.1/servers/%s/action" % server_id
    status, body, _ = api.post(url, {name: None})
    assert (status, body) == (202, None)
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert (inst.vm_state, inst.task_state) == (vm_state, task_state)
    assert compute.wait_for_cast(cast, server_id)["instance"]["uuid"] == \
        server_id
    actions = [a.action for a in db_api.action_get_all(admin_ctxt,
                                                       server_id)]
    assert set(actions) == {"create", name}
    # one in flight: a second one is a 409 naming the task state
    status, body, _ = api.post(url, {name: None})
    assert status == 409
    assert body["conflictingRequest"]["message"] == (
        "Cannot '%s' instance %s while it is in task_state %s"
        % (name, server_id, task_state))


@pytest.mark.parametrize("name,vm_state", [
    ("pause", "paused"), ("pause", "suspended"), ("pause", "stopped"),
    ("unpause", "active"), ("unpause", "suspended"),
    ("suspend", "paused"), ("suspend", "stopped"), ("suspend", "suspended"),
    ("resume", "active"), ("resume", "paused"), ("resume", "stopped"),
])
def test_wrong_vm_state_is_409_and_changes_nothing(
        name, vm_state, api, make_server, compute, admin_ctxt):
    """tempest's test_pause_paused_server, test_unpause_server_invalid_state,
    test_suspend_server_invalid_state, test_resume_server_invalid_state."""
    server_id = make_server(vm_state=vm_state)
    status, body, _ = api.post("/v2.1/servers/%s/action" % server_id,
                               {name: None})
    assert status == 409
    assert body["conflictingRequest"]["message"] == (
        "Cannot '%s' instance %s while it is in vm_state %s"
        % (name, server_id, vm_state))
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert (inst.vm_state, inst.task_state) == (vm_state, None)
    assert {a.action for a in db_api.action_get_all(
        admin_ctxt, server_id)} == {"create"}


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_unknown_server_404_and_bad_body_400(name, api, make_server):
    assert api.post("/v2.1/servers/%s/action" % uuid.uuid4(),
                    {name: None})[0] == 404
    server_id = make_server(vm_state=ACTIONS[name][0])
    assert api.post("/v2.1/servers/%s/action" % server_id,
                    {name: "now"})[0] == 400
    assert api.post("/v2.1/servers/%s/action" % server_id,
                    {name: {}})[0] == 202
    # another project's server is not found
    assert api.post("/v2.1/servers/%s/action" % server_id,
                    {name: None}, token="u2:p2")[0] == 404


def test_host_down_is_409_and_changes_nothing(api, make_server, admin_ctxt):
    server_id = make_server()
    svc = db_api.service_get_all(admin_ctxt)[0]
    db_api.service_update(admin_ctxt, svc.uuid, {"forced_down": True})
    assert api.post("/v2.1/servers/%s/action" % server_id,
                    {"pause": None})[0] == 409
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert (inst.vm_state, inst.task_state) == ("active", None)


def test_failed_cast_undoes_the_task_state(api, make_server, admin_ctxt,
                                           app, monkeypatch):
    server_id = make_server()
    rpc = app.config["COMPUTE_API"].compute_rpcapi

    def broken(ctxt, instance):
        raise messaging.MessageDeliveryFailure("broker went away")
    monkeypatch.setattr(rpc, "suspend_instance", broken)
    status, _, _ = api.post("/v2.1/servers/%s/action" % server_id,
                            {"suspend": None})
    assert status == 500
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert (inst.vm_state, inst.task_state) == ("active", None)


@pytest.mark.parametrize("vm_state,status", [("paused", "PAUSED"),
                                             ("suspended", "SUSPENDED")])
def test_status_shown(vm_state, status, api, make_server):
    server_id = make_server(vm_state=vm_state)
    assert api.get("/v2.1/servers/" + server_id)[1]["server"][
        "status"] == status
    listed = api.get("/v2.1/servers/detail?status=" + status)[1]
    assert [s["id"] for s in listed["servers"]] == [server_id]
