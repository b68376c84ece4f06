"""os-migrateLive: the body per microversion, admin only, the state and
host checks, the migration record, the pre-check CALL to the destination
and the CAST to the source; failed pre-checks as 400 below 2.34 and as a
migration in ``error`` after a 202 from 2.34."""

import pytest

from minicompute import exception
from minicompute.db import api as db_api


def _post(api, server_id, args, version=None, token=None):
    return api.post("/v2.1/servers/%s/action" % server_id,
                    {"os-migrateLive": args}, version=version, token=token)


def _migrations(ctxt, server_id):
    return db_api.migration_get_all(ctxt, {"instance_uuid": server_id})


OLD = {"block_migration": False, "disk_over_commit": False, "host": None}


def test_scheduler_picks_the_other_host(api, make_server, compute, compute2,
                                        admin_ctxt):
    server_id = make_server()
    status, body, _ = _post(api, server_id, {"block_migration": "auto",
                                             "host": None}, version="2.25")
    assert (status, body) == (202, None)
    check = compute2.wait_for_cast("check_can_live_migrate_destination",
                                   server_id)
    assert check["block_migration"] is None
    cast = compute.wait_for_cast("live_migration", server_id)
    assert cast["dest"] == "host2"
    assert cast["migrate_data"]["dest_node"] == "host2"
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert inst.task_state == "migrating"
    [migration] = _migrations(admin_ctxt, server_id)
    assert (migration["migration_type"], migration["source_compute"],
            migration["dest_compute"], migration["status"]) == \
        ("live-migration", "host1", "host2", "accepted")
    assert cast["migration"]["id"] == migration["id"]
    assert "live-migration" in [a.action for a in db_api.action_get_all(
        admin_ctxt, server_id)]


def test_old_body_and_named_host(api, make_server, compute, compute2):
    server_id = make_server()
    assert _post(api, server_id, dict(OLD, host="host2"))[0] == 202
    assert compute.wait_for_cast("live_migration", server_id)["dest"] == \
        "host2"


@pytest.mark.parametrize("version,args", [
    (None, {"block_migration": False, "host": None}),
    ("2.25", dict(OLD)),
    ("2.25", {"block_migration": "maybe", "host": None}),
    ("2.30", {"block_migration": "auto", "host": None, "force": True}),
    ("2.68", {"block_migration": "auto", "host": "host2", "force": False}),
])
def test_bad_bodies_are_400(api, make_server, compute, compute2, version,
                            args, admin_ctxt):
    server_id = make_server()
    assert _post(api, server_id, args, version=version)[0] == 400
    assert db_api.instance_get(admin_ctxt, server_id).task_state is None
    assert _migrations(admin_ctxt, server_id) == []


def test_unknown_host_is_400_at_every_version(api, make_server, compute):
    server_id = make_server()
    for version, args in ((None, dict(OLD, host="nowhere")),
                          ("2.34", {"block_migration": "auto",
                                    "host": "nowhere"})):
        status, body, _ = _post(api, server_id, args, version=version)
        assert status == 400
        assert body["badRequest"]["message"] == \
            "Compute host nowhere could not be found."


def test_same_host_is_400_below_2_34(api, make_server, compute, admin_ctxt):
    server_id = make_server()
    status, body, _ = _post(api, server_id, dict(OLD, host="host1"))
    assert status == 400
    assert body["badRequest"]["message"] == (
        "Unable to migrate instance (%s) to current host (host1)."
        % server_id)
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert (inst.vm_state, inst.task_state) == ("active", None)
    assert [m["status"] for m in _migrations(admin_ctxt, server_id)] == \
        ["error"]


def test_failed_precheck_from_2_34_is_202_and_error(
        api, make_server, compute, compute2, admin_ctxt):
    server_id = make_server()
    compute2.fail_live_migration_check = exception.InvalidSharedStorage(
        path="/x", reason="not shared")
    try:
        status, _body, _ = _post(api, server_id, {
            "block_migration": False, "host": "host2"}, version="2.34")
    finally:
        compute2.fail_live_migration_check = None
    assert status == 202
    inst = db_api.instance_get(admin_ctxt, server_id)
    assert (inst.vm_state, inst.task_state) == ("active", None)
    assert [m["status"] for m in _migrations(admin_ctxt, server_id)] == \
        ["error"]
    assert not [c for c in compute.casts if c[0] == "live_migration"]


def test_no_other_host_is_400_below_2_34(api, make_server, compute):
    server_id = make_server()
    status, body, _ = _post(api, server_id, OLD)
    assert status == 400
    assert body["badRequest"]["message"].startswith("No valid host")


@pytest.mark.parametrize("vm_state", ["stopped", "suspended", "error"])
def test_wrong_state_is_409(api, make_server, compute, compute2, vm_state):
    server_id = make_server(vm_state=vm_state)
    assert _post(api, server_id, OLD)[0] == 409


def test_paused_server_migrates(api, make_server, compute, compute2):
    server_id = make_server(vm_state="paused")
    assert _post(api, server_id, OLD)[0] == 202
    compute.wait_for_cast("live_migration", server_id)


def test_task_state_is_409_and_non_admin_403(api, make_server, compute,
                                             compute2, admin_ctxt):
    server_id = make_server()
    assert _post(api, server_id, OLD)[0] == 202
    assert _post(api, server_id, OLD)[0] == 409
    other = make_server(name="vm2", token="u1:p1")
    assert _post(api, other, OLD, token="u1:p1")[0] == 403


# -- force_complete (2.22) and abort (2.24) ---------------------------------

def _running(api, make_server, compute, compute2, admin_ctxt,
             status="running"):
    server_id = make_server()
    assert _post(api, server_id, OLD)[0] == 202
    compute.wait_for_cast("live_migration", server_id)
    [migration] = _migrations(admin_ctxt, server_id)
    db_api.migration_update(admin_ctxt, migration["id"], {"status": status})
    return server_id, migration["id"]


def _url(server_id, migration_id, action=False):
    return "/v2.1/servers/%s/migrations/%s%s" % (
        server_id, migration_id, "/action" if action else "")


def test_force_complete_casts_to_the_source(api, make_server, compute,
                                            compute2, admin_ctxt):
    server_id, mid = _running(api, make_server, compute, compute2,
                              admin_ctxt)
    url = _url(server_id, mid, action=True)
    assert api.post(url, {"force_complete": None}, version="2.21")[0] == \
        404
    assert api.post(url, {"force_complete": None},
                    version="2.22")[:2] == (202, None)
    compute.wait_for_cast("live_migration_force_complete", server_id)
    assert api.post(url, {"force_complete": 1}, version="2.22")[0] == 400
    assert api.post(_url(server_id, mid + 99, action=True),
                    {"force_complete": None}, version="2.22")[0] == 404


def test_force_complete_of_a_preparing_migration_is_400(
        api, make_server, compute, compute2, admin_ctxt):
    server_id, mid = _running(api, make_server, compute, compute2,
                              admin_ctxt, status="preparing")
    status, body, _ = api.post(_url(server_id, mid, action=True),
                               {"force_complete": None}, version="2.22")
    assert status == 400
    assert "Cannot force complete" in body["badRequest"]["message"]


@pytest.mark.parametrize("status,version,code", [
    ("running", "2.24", 202), ("preparing", "2.24", 400),
    ("preparing", "2.65", 202), ("queued", "2.65", 202),
    ("completed", "2.65", 400), ("running", "2.23", 404),
])
def test_abort(api, make_server, compute, compute2, admin_ctxt, status,
               version, code):
    server_id, mid = _running(api, make_server, compute, compute2,
                              admin_ctxt, status=status)
    assert api.delete(_url(server_id, mid), version=version)[0] == code
    if code == 202:
        cast = compute.wait_for_cast("live_migration_abort", server_id)
        assert cast["migration_id"] == mid


def test_abort_without_a_migration_in_flight_is_409(
        api, make_server, compute, compute2, admin_ctxt):
    server_id, mid = _running(api, make_server, compute, compute2,
                              admin_ctxt)
    db_api.instance_update(admin_ctxt, server_id, {"task_state": None})
    assert api.delete(_url(server_id, mid), version="2.24")[0] == 409
    # a member of the server's project is not an admin
    assert api.delete(_url(server_id, mid), version="2.24",
                      token="u1:p1")[0] == 403
