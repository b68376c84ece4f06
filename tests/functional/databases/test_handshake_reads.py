"""The attachment handshake's Core reads (``minicinder/db/attachment_reads.py``
and ``volume_reads.py``) on each backend: SQLite, PostgreSQL and MariaDB.

They are hand-built selects (a correlated ``EXISTS`` labelled as a
column, ``FOR UPDATE`` on the volumes row, the project-scoped variants),
so they run here on every server the daemons support, through the real
WSGI app of a minicinder with the fake driver (the backend is not under
test). The statement counts are pinned as in
``tests/support/handshake_statements.py``; a server opens
its transactions without a statement of its own (SQLite's ``BEGIN
IMMEDIATE`` is counted there), so a step's count on a server is its
SQLite count less its write transactions.
"""

import uuid

import pytest

from minicinder import service
from minicinder.db import session as cinder_session
from minicinder.volume import manager as volume_manager
from minicinder.volume.drivers import fake
from tests.support import handshake_statements as counts
from tests.support import sql_statements
from tests.support.minicinder_inprocess import CinderClient
from tests.support.minicinder_inprocess import FakeNova
from tests.support.minicinder_inprocess import connector
from tests.support.minicinder_inprocess import make_conf

# Write transactions per step: reserve 1, first PUT 2 (the export's
# location, then the state), PUT again 1, os-complete 1,
# os-begin_detaching 1, DELETE 1.
WRITES = {"reserve": 1, "first_put": 2, "put_again": 1, "complete": 1,
          "begin_detaching": 1, "delete": 1}


@pytest.fixture
def stack(backend):
    database = cinder_session.Database(backend["urls"]["cinder"])
    svc = service.CinderService(
        make_conf(quota_volumes=-1, quota_gigabytes=-1), database,
        fake.FakeDriver(), executor=volume_manager.InlineExecutor(),
        compute=FakeNova())
    with sql_statements.recorded(database) as seen:
        yield CinderClient(svc.app, project="p-" + uuid.uuid4().hex[:8]), \
            seen, backend["name"]
    svc.stop()


def _expected(kind, step, sqlite_count):
    return sqlite_count if kind == "sqlite" else \
        sqlite_count - WRITES[step]


def _count(seen, call, *args):
    del seen[:]
    response = call(*args)
    return response, len(seen)


@pytest.mark.parametrize("who", ["nova", "member"])
def test_handshake_on_each_backend(stack, who):
    cinder, seen, kind = stack
    caller = cinder.as_nova() if who == "nova" else \
        cinder.as_user("member-user")
    other_project = cinder.as_user("stranger", project="p-other")
    vol = caller.create_volume()

    resp, count = _count(seen, caller.post, "/attachments", {
        "attachment": {"volume_uuid": vol,
                       "instance_uuid": str(uuid.uuid4())}})
    assert resp.status_code == 200, resp.body
    att = resp.body["attachment"]
    assert (att["status"], att["attach_mode"], att["attached_at"],
            att["connection_info"]) == ("reserved", "null", "", {})
    assert count == _expected(kind, "reserve", counts.RESERVE)

    # Another project sees neither the attachment nor the volume.
    assert other_project.put("/attachments/%s" % att["id"], {
        "attachment": {"connector": connector()}}).status_code == 404
    assert other_project.post("/volumes/%s/action" % vol, {
        "os-begin_detaching": {}}).status_code == 404

    resp, count = _count(seen, caller.put, "/attachments/%s" % att["id"],
                         {"attachment": {"connector": connector()}})
    assert resp.status_code == 200, resp.body
    info = resp.body["attachment"]["connection_info"]
    assert resp.body["attachment"]["status"] == "attaching"
    assert info["access_mode"] == "rw" and info["auth_method"] == "CHAP"
    assert count == _expected(kind, "first_put", counts.FIRST_PUT)

    resp, count = _count(seen, caller.put, "/attachments/%s" % att["id"],
                         {"attachment": {"connector": connector()}})
    assert resp.status_code == 200, resp.body
    assert resp.body["attachment"]["connection_info"] == info
    assert count == _expected(kind, "put_again", counts.PUT_AGAIN)

    resp, count = _count(seen, caller.post,
                         "/attachments/%s/action" % att["id"],
                         {"os-complete": {}})
    assert resp.status_code == 204, resp.body
    assert cinder.volume(vol)["status"] == "in-use"
    assert count == _expected(kind, "complete", counts.COMPLETE)

    resp, count = _count(seen, caller.post, "/volumes/%s/action" % vol,
                         {"os-begin_detaching": {}})
    assert resp.status_code == 202, resp.body
    assert count == _expected(kind, "begin_detaching",
                              counts.BEGIN_DETACHING)

    resp, count = _count(seen, cinder.as_nova().delete,
                         "/attachments/%s" % att["id"])
    assert resp.status_code == 200, resp.body
    assert resp.body == {"attachments": []}
    assert cinder.volume(vol)["status"] == "available"
    assert count == _expected(kind, "delete", counts.DELETE)


def test_connect_checks_on_each_backend(stack):
    """The reserve's and the PUT's selects: a second connector on a
    volume that is not multiattach is refused; a read-only volume
    connects read-only."""
    cinder, _, _ = stack
    nova = cinder.as_nova()
    vol = cinder.create_volume()
    instance = str(uuid.uuid4())
    first = nova.reserve(vol, instance)["id"]
    assert nova.put("/attachments/%s" % first, {"attachment": {
        "connector": connector()}}).status_code == 200
    assert nova.post("/attachments/%s/action" % first,
                     {"os-complete": {}}).status_code == 204
    # Another instance may not reserve it; the same one may (LP 1694530)
    # but not connect a second time.
    assert nova.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": str(uuid.uuid4())}}) \
        .status_code == 400
    second = nova.reserve(vol, instance)["id"]
    resp = nova.put("/attachments/%s" % second, {"attachment": {
        "connector": connector()}})
    assert resp.status_code == 409, resp.body
    assert "duplicate connectors" in \
        resp.body["conflictingRequest"]["message"]

    readonly = cinder.create_volume()
    assert cinder.post("/volumes/%s/action" % readonly, {
        "os-update_readonly_flag": {"readonly": True}}).status_code == 202
    resp = nova.post("/attachments", {"attachment": {
        "volume_uuid": readonly, "instance_uuid": str(uuid.uuid4()),
        "connector": connector()}})
    assert resp.status_code == 200, resp.body
    assert resp.body["attachment"]["attach_mode"] == "ro"
    assert resp.body["attachment"]["connection_info"]["access_mode"] == "ro"
