"""resize, confirmResize, revertResize and migrate through the real app
(fake:/ RPC): upstream's checks and errors, states, migration records
and the casts to the right host."""

import json

import pytest

from minicompute.db import api as db_api
from ministack import context
from tests.unit.miniapi.conftest import HOST
from tests.unit.miniapi.conftest import HOST2

ADMIN = context.get_admin_context()


def _action(api, server_id, body, **kw):
    return api.post("/v2.1/servers/%s/action" % server_id, body, **kw)


def _server(server_id):
    return db_api.instance_get(ADMIN, server_id)


def _set(server_id, **values):
    db_api.instance_update(ADMIN, server_id, values)


def _migrations(server_id):
    return db_api.migration_get_all(ADMIN, {"instance_uuid": server_id})


def _status(api, server_id):
    return api.get("/v2.1/servers/%s" % server_id)[1]["server"]["status"]


def _message(body):
    return next(iter(body.values()))["message"]


def test_resize_to_another_host_records_and_casts(api, make_server, compute,
                                                  compute2):
    server_id = make_server(token="u1:p1")
    assert _action(api, server_id, {"resize": {"flavorRef": "84"}},
                   token="u1:p1")[:2] == (202, None)
    cast = compute2.wait_for_cast("prep_resize", server_id)
    assert cast["host"] == HOST2
    assert cast["flavor"]["flavorid"] == "84"
    assert cast["image"]["id"]
    [migration] = _migrations(server_id)
    assert migration["status"] == "pre-migrating"
    assert migration["migration_type"] == "resize"
    assert (migration["source_compute"], migration["dest_compute"]) == \
        (HOST, HOST2)
    assert migration["old_instance_type_id"] != \
        migration["new_instance_type_id"]
    row = _server(server_id)
    assert row.task_state == "resize_prep"
    assert json.loads(row.flavor)["new"]["flavorid"] == "84"
    assert _status(api, server_id) == "RESIZE"
    assert db_api.action_get_all(ADMIN, server_id)[0].action == "resize"


def test_resize_stays_on_a_one_host_cloud(api, make_server, compute):
    server_id = make_server()
    assert _action(api, server_id, {"resize": {"flavorRef": 84}})[0] == 202
    assert compute.wait_for_cast("prep_resize", server_id)["host"] == HOST


def test_resize_same_host_when_allowed(conf, api, app, make_server, compute,
                                       compute2):
    app.config["COMPUTE_API"].allow_resize_to_same_host = True
    server_id = make_server()
    for name in ("other1", "other2"):   # host2 is the busier host now
        _set(make_server(name=name), host=HOST2)
    assert _action(api, server_id, {"resize": {"flavorRef": "84"}})[0] == 202
    assert compute.wait_for_cast("prep_resize", server_id)["host"] == HOST


@pytest.mark.parametrize("body, message", [
    ({"resize": {"flavorRef": "42"}},
     "When resizing, instances must change flavor!"),
    ({"resize": {"flavorRef": "999"}}, "Unable to locate requested flavor."),
    ({"resize": {}}, None),
    ({"resize": {"flavorRef": "84", "OS-DCF:diskConfig": "X"}}, None),
    ({"resize": {"flavorRef": "84", "other": 1}}, None),
])
def test_resize_refusals_are_400(api, make_server, compute, body, message):
    server_id = make_server()
    code, answer, _ = _action(api, server_id, body)
    assert code == 400, answer
    if message:
        assert _message(answer) == message
    assert _server(server_id).task_state is None
    assert _migrations(server_id) == []


def test_resize_to_a_zero_disk_flavor_is_400(api, make_server, compute):
    assert api.post("/v2.1/flavors", {"flavor": {
        "name": "zero", "ram": 192, "vcpus": 1, "disk": 0,
        "id": "zero"}})[0] == 200
    server_id = make_server()
    code, body, _ = _action(api, server_id, {"resize": {"flavorRef": "zero"}})
    assert code == 400
    assert _message(body) == ("Server disk was unable to be resized "
                              "because: Resize to zero disk flavor is not "
                              "allowed.")


def test_resize_state_and_host_conflicts(api, make_server, compute):
    server_id = make_server()
    _set(server_id, vm_state="paused")
    code, body, _ = _action(api, server_id, {"resize": {"flavorRef": "84"}})
    assert code == 409
    assert "Cannot 'resize'" in _message(body)
    _set(server_id, vm_state="active", task_state="rebooting")
    assert _action(api, server_id, {"resize": {"flavorRef": "84"}})[0] == 409
    _set(server_id, task_state=None, host="gone")
    assert _action(api, server_id, {"resize": {"flavorRef": "84"}})[0] == 409
    _set(server_id, host=HOST, locked=True)
    code, body, _ = _action(api, server_id, {"resize": {"flavorRef": "84"}},
                            token="u1:p1")
    assert (code, _message(body)) == (409, "Instance %s is locked"
                                      % server_id)
    assert _migrations(server_id) == []


def test_resize_from_stopped_keeps_the_state_to_return_to(api, make_server,
                                                          compute):
    server_id = make_server(vm_state="stopped")
    assert _action(api, server_id, {"resize": {"flavorRef": "84"}})[0] == 202
    assert json.loads(_server(server_id).flavor)["old_vm_state"] == "stopped"
    assert _status(api, server_id) == "RESIZE"


def _resized(server_id, status="finished"):
    _set(server_id, vm_state="resized", task_state=None)
    return db_api.migration_create(ADMIN, {
        "instance_uuid": server_id, "migration_type": "resize",
        "status": status, "source_compute": HOST, "source_node": HOST,
        "dest_compute": HOST2, "dest_node": HOST2})


def test_confirm_casts_to_the_source(api, make_server, compute, compute2):
    server_id = make_server(token="u1:p1")
    assert _action(api, server_id, {"confirmResize": None},
                   token="u1:p1")[0] == 409
    migration = _resized(server_id, status="migrating")
    code, body, _ = _action(api, server_id, {"confirmResize": None})
    assert (code, _message(body)) == (400, "Instance has not been resized.")
    db_api.migration_update(ADMIN, migration["id"], {"status": "finished"})
    _set(server_id, host=HOST2)
    assert _status(api, server_id) == "VERIFY_RESIZE"
    assert _action(api, server_id, {"confirmResize": None},
                   token="u1:p1")[:2] == (204, None)
    cast = compute.wait_for_cast("confirm_resize", server_id)
    assert cast["host"] == HOST
    assert db_api.migration_get(ADMIN, migration["id"])["status"] == \
        "confirming"
    assert db_api.action_get_all(ADMIN, server_id)[0].action == \
        "confirmResize"


def test_revert_casts_to_the_destination(api, make_server, compute,
                                         compute2):
    server_id = make_server()
    assert _action(api, server_id, {"revertResize": None})[0] == 409
    migration = _resized(server_id)
    _set(server_id, host=HOST2)
    assert _action(api, server_id, {"revertResize": None})[:2] == (202, None)
    cast = compute2.wait_for_cast("revert_resize", server_id)
    assert cast["host"] == HOST2 and cast["image"]["id"]
    assert db_api.migration_get(ADMIN, migration["id"])["status"] == \
        "reverting"
    assert _server(server_id).task_state == "resize_reverting"
    assert _status(api, server_id) == "REVERT_RESIZE"
    assert _action(api, server_id, {"revertResize": None})[0] == 409


def test_migrate_is_admin_only_and_goes_elsewhere(api, make_server, compute,
                                                  compute2):
    server_id = make_server(token="u1:p1")
    assert _action(api, server_id, {"migrate": None},
                   token="u1:p1")[0] == 403
    assert _action(api, server_id, {"migrate": None})[0] == 202
    cast = compute2.wait_for_cast("prep_resize", server_id)
    assert cast["host"] == HOST2
    [migration] = _migrations(server_id)
    assert migration["migration_type"] == "migration"
    assert migration["old_instance_type_id"] == \
        migration["new_instance_type_id"]
    assert db_api.action_get_all(ADMIN, server_id)[0].action == "migrate"


def test_migrate_to_a_host(api, make_server, compute, compute2):
    server_id = make_server()
    code, body, _ = _action(api, server_id, {"migrate": {"host": HOST}},
                            version="2.56")
    assert (code, _message(body)) == (
        400, "Cannot migrate to the host where the server exists.")
    code, body, _ = _action(api, server_id, {"migrate": {"host": "nowhere"}},
                            version="2.56")
    assert code == 400 and "nowhere" in _message(body)
    assert _action(api, server_id, {"migrate": {"bad": 1}},
                   version="2.56")[0] == 400
    assert _migrations(server_id) == []
    assert _action(api, server_id, {"migrate": {"host": HOST2}},
                   version="2.56")[0] == 202
    assert compute2.wait_for_cast("prep_resize", server_id)["host"] == HOST2


def test_migrate_with_no_other_host_is_no_valid_host(api, make_server,
                                                     compute):
    server_id = make_server()
    code, body, _ = _action(api, server_id, {"migrate": None})
    assert code == 400
    assert _message(body).startswith("No valid host was found.")
    assert _server(server_id).task_state is None


def test_delete_of_a_resized_server_confirms_first(api, make_server,
                                                   compute, compute2):
    server_id = make_server()
    migration = _resized(server_id)
    _set(server_id, host=HOST2)
    assert api.delete("/v2.1/servers/%s" % server_id)[0] == 204
    assert compute.wait_for_cast("confirm_resize", server_id)["host"] == HOST
    compute2.wait_for_cast("terminate_instance", server_id)
    assert db_api.migration_get(ADMIN, migration["id"])["status"] == \
        "confirming"
