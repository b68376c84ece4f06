"""Migration records and the APIs that show them: ``GET /os-migrations``
(fields, filters and paging per microversion, who may list) and a
server's live migrations under way (``/servers/{id}/migrations``)."""

import uuid

import pytest

from minicompute import exception
from minicompute.db import api as db_api
from ministack import context
from tests.unit.miniapi import tempest_schemas as ts


def _ctxt(project="p1", user="admin", roles=("admin",)):
    return context.RequestContext(user_id=user, project_id=project,
                                  roles=list(roles))


def _move(server_id, **values):
    row = {"instance_uuid": server_id, "migration_type": "live-migration",
           "status": "running", "source_compute": "host1",
           "source_node": "host1", "dest_compute": "host2",
           "dest_node": "host2", "dest_host": "10.0.0.2",
           "old_instance_type_id": 1, "new_instance_type_id": 1}
    row.update(values)
    return db_api.migration_create(_ctxt(), row)


# -- the data layer ---------------------------------------------------------

def test_create_fills_uuid_owner_and_update_stamps(engine, make_server):
    server_id = make_server()
    row = _move(server_id, status="accepted")
    assert uuid.UUID(row["uuid"])
    assert (row["user_id"], row["project_id"]) == ("admin", "p1")
    assert row["hidden"] is False and row["updated_at"] is None
    row = db_api.migration_update(_ctxt(), row["id"], {"status": "queued"})
    assert row["status"] == "queued" and row["updated_at"]
    assert db_api.migration_get(_ctxt(), row["id"])["status"] == "queued"
    with pytest.raises(exception.MigrationNotFound):
        db_api.migration_get(_ctxt(), row["id"] + 1000)
    with pytest.raises(exception.MigrationNotFound):
        db_api.migration_update(_ctxt(), row["id"] + 1000, {"status": "x"})


def test_in_progress_and_by_status(engine, make_server):
    server_id = make_server()
    done = _move(server_id, status="completed")
    running = _move(server_id, status="running")
    resize = _move(server_id, migration_type="resize", status="finished")
    live = db_api.migration_get_in_progress_by_instance(
        _ctxt(), server_id, migration_type="live-migration")
    assert [m["id"] for m in live] == [running["id"]]
    assert {m["id"] for m in db_api.migration_get_in_progress_by_instance(
        _ctxt(), server_id)} == {running["id"], resize["id"]}
    assert db_api.migration_get_by_instance_and_status(
        _ctxt(), server_id, "completed")["id"] == done["id"]
    with pytest.raises(exception.MigrationNotFoundByStatus):
        db_api.migration_get_by_instance_and_status(_ctxt(), server_id,
                                                    "reverted")


# -- GET /os-migrations -----------------------------------------------------

def test_list_fields_per_microversion(api, make_server):
    server_id = make_server()
    row = _move(server_id)
    status, body, _ = api.get("/v2.1/os-migrations")
    assert status == 200
    item, = body["migrations"]
    assert item["instance_uuid"] == server_id
    assert (item["source_compute"], item["dest_compute"]) == ("host1",
                                                              "host2")
    assert "migration_type" not in item and "uuid" not in item
    item, = api.get("/v2.1/os-migrations", version="2.23")[1]["migrations"]
    assert item["migration_type"] == "live-migration"
    assert item["links"][0]["href"].endswith(
        "/v2.1/servers/%s/migrations/%s" % (server_id, row["id"]))
    item, = api.get("/v2.1/os-migrations", version="2.80")[1]["migrations"]
    assert (item["uuid"], item["user_id"], item["project_id"]) == (
        row["uuid"], "admin", "p1")


def test_links_only_for_live_migrations_under_way(api, make_server):
    server_id = make_server()
    _move(server_id, status="completed")
    _move(server_id, migration_type="resize", status="finished")
    items = api.get("/v2.1/os-migrations", version="2.23")[1]["migrations"]
    assert len(items) == 2 and not any("links" in i for i in items)


def test_filters_newest_first_and_hidden(api, make_server):
    one, two = make_server("a"), make_server("b")
    first = _move(one, status="completed")
    second = _move(two, status="running", source_compute="host2",
                   dest_compute="host3")
    _move(two, status="error", hidden=True)
    ids = [m["id"] for m in api.get("/v2.1/os-migrations")[1]["migrations"]]
    assert ids == [second["id"], first["id"]]
    for query, expected in [("instance_uuid=%s" % one, [first]),
                            ("status=running", [second]),
                            ("host=host3", [second]),
                            ("source_compute=host1", [first]),
                            ("migration_type=resize", [])]:
        body = api.get("/v2.1/os-migrations?%s" % query)[1]
        assert [m["id"] for m in body["migrations"]] == [
            m["id"] for m in expected], query
    body = api.get("/v2.1/os-migrations?hidden=1")[1]
    assert len(body["migrations"]) == 3


def test_paging_and_unknown_query_from_2_59(api, make_server):
    server_id = make_server()
    rows = [_move(server_id, status="completed") for _ in range(3)]
    newest_first = [r["uuid"] for r in reversed(rows)]
    status, body, _ = api.get("/v2.1/os-migrations?limit=2",
                              version="2.59")
    assert status == 200
    assert [m["uuid"] for m in body["migrations"]] == newest_first[:2]
    assert "marker=%s" % newest_first[1] in \
        body["migrations_links"][0]["href"]
    body = api.get("/v2.1/os-migrations?marker=%s" % newest_first[1],
                   version="2.59")[1]
    assert [m["uuid"] for m in body["migrations"]] == newest_first[2:]
    assert api.get("/v2.1/os-migrations?marker=%s" % uuid.uuid4(),
                   version="2.59")[0] == 400
    assert api.get("/v2.1/os-migrations?foo=1", version="2.59")[0] == 400
    # before 2.59 an unknown key is ignored
    assert api.get("/v2.1/os-migrations?foo=1")[0] == 200
    assert api.get("/v2.1/os-migrations?changes-since=2999-01-01T00:00:00",
                   version="2.59")[1]["migrations"] == []
    assert api.get("/v2.1/os-migrations?changes-since=nope",
                   version="2.59")[0] == 400


def test_policy_admin_all_manager_own_project_member_403(api, make_server):
    mine = make_server("mine")
    theirs = make_server("theirs", token="u2:p2")
    _move(mine)
    db_api.migration_create(_ctxt(project="p2"),
                            {"instance_uuid": theirs, "status": "running",
                             "migration_type": "live-migration",
                             "source_compute": "host1"})
    assert len(api.get("/v2.1/os-migrations")[1]["migrations"]) == 2
    status, body, _ = api.get("/v2.1/os-migrations", token="u2:p2")
    assert status == 403
    status, body, _ = api.request("GET", "/v2.1/os-migrations",
                                  token="u2:p2",
                                  headers={"X-Roles": "manager"})
    assert status == 200
    item, = body["migrations"]
    assert item["instance_uuid"] == theirs
    assert item["source_compute"] is None


# -- /servers/{id}/migrations -----------------------------------------------

def test_server_migrations_list_and_show(api, make_server):
    server_id = make_server()
    running = _move(server_id, memory_total=1024, memory_processed=512)
    ended = _move(server_id, status="completed")
    resize = _move(server_id, migration_type="resize", status="finished")
    base = "/v2.1/servers/%s/migrations" % server_id
    assert api.get(base, version="2.22")[0] == 404
    status, body, _ = api.get(base, version="2.23")
    assert status == 200
    item, = body["migrations"]
    assert (item["id"], item["server_uuid"]) == (running["id"], server_id)
    assert (item["memory_total_bytes"], item["memory_processed_bytes"]) == (
        1024, 512)
    status, body, _ = api.get("%s/%s" % (base, running["id"]),
                              version="2.59")
    assert status == 200 and body["migration"]["uuid"] == running["uuid"]
    for other in (ended["id"], resize["id"], 999999, "x"):
        assert api.get("%s/%s" % (base, other), version="2.23")[0] == 404
    assert api.get("/v2.1/servers/%s/migrations" % uuid.uuid4(),
                   version="2.23")[0] == 404
    assert api.get(base, version="2.23", token="u1:p1")[0] == 403


# -- tempest's schemas ------------------------------------------------------

@pytest.mark.parametrize("version", ["2.1", "2.23", "2.59", "2.80"])
def test_views_match_tempest(api, make_server, version):
    ts.require_tempest()
    server_id = make_server()
    _move(server_id)
    _move(server_id, migration_type="resize", status="finished")
    status, body, _ = api.get("/v2.1/os-migrations", version=version)
    ts.check_client("migrations_client", "list_migrations", version,
                    status, body)
    if version >= "2.23":
        status, body, _ = api.get(
            "/v2.1/servers/%s/migrations" % server_id, version=version)
        assert status == 200 and len(body["migrations"]) == 1
        assert body["migrations"][0]["server_uuid"] == server_id
