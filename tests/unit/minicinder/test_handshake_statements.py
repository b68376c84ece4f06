"""How many SQL statements each step of the attachment handshake runs
(issue 16).

Every step used to load the whole ``Volume`` through the ORM (five
statements each: the volume with its joined type and four ``selectin``
collections), the PUT five times: 28 statements for one PUT, 9 for a
reserve, 9 for os-complete, 7 for os-begin_detaching, 14 for a DELETE.
Each step now reads only the columns it checks (``db/attachment_reads.py``).
The counts are pinned exactly, so a change that brings a model load
back fails here instead of quietly costing CPU on every attach; a change
that saves a statement updates the number. The counts are statements the
driver executes (``before_cursor_execute``, on every engine of the
service's database; on SQLite a write transaction's ``BEGIN IMMEDIATE``
is one of them), not times.

What each response says is checked by ``test_attachments_api.py`` and
the tempest-style tests; here only a few fields, to show the step did
its work.
"""

import uuid

import pytest
import sqlalchemy as sa

from minicinder.db import api as db
from minicinder.db import cas as cas_db
from minicinder.db import models
from minicinder.db import volume_reads
from ministack import context as ms_context
from tests.support import handshake_statements as counts
from tests.support import sql_statements
from tests.support.minicinder_inprocess import PROJECT
from tests.support.minicinder_inprocess import connector


@pytest.fixture
def statements(stack):
    """A list of every statement the service's database executes."""
    with sql_statements.recorded(stack[2].database) as seen:
        yield seen


def _count(statements, call, *args, **kwargs):
    """(response, how many statements ``call`` executed)."""
    del statements[:]
    response = call(*args, **kwargs)
    return response, len(statements)


def _caller(cinder, who):
    if who == "member":
        return cinder.as_user("member-user")
    return cinder.as_nova()


@pytest.mark.parametrize("who", ["nova", "member"])
def test_each_step_of_the_handshake(cinder, driver, statements, who):
    """Nova's attach and detach, as a service and as a project member
    (whose reads are scoped to the project)."""
    caller = _caller(cinder, who)
    vol = caller.create_volume()
    instance = str(uuid.uuid4())

    resp, count = _count(statements, caller.post, "/attachments", {
        "attachment": {"volume_uuid": vol, "instance_uuid": instance}})
    assert resp.status_code == 200, resp.body
    assert resp.body["attachment"]["status"] == "reserved"
    assert count == counts.RESERVE
    att = resp.body["attachment"]["id"]

    resp, count = _count(statements, caller.put, "/attachments/%s" % att,
                         {"attachment": {"connector": connector()}})
    assert resp.status_code == 200, resp.body
    assert resp.body["attachment"]["status"] == "attaching"
    assert resp.body["attachment"]["connection_info"]["target_lun"] == 1
    assert driver.exports[vol] == {connector()["initiator"]}
    assert count == counts.FIRST_PUT

    resp, count = _count(statements, caller.put, "/attachments/%s" % att,
                         {"attachment": {"connector": connector()}})
    assert resp.status_code == 200, resp.body
    assert count == counts.PUT_AGAIN

    resp, count = _count(statements, caller.post,
                         "/attachments/%s/action" % att,
                         {"os-complete": {}})
    assert resp.status_code == 204, resp.body
    assert count == counts.COMPLETE

    resp, count = _count(statements, caller.post,
                         "/volumes/%s/action" % vol,
                         {"os-begin_detaching": {}})
    assert resp.status_code == 202, resp.body
    assert cinder.volume(vol)["status"] == "detaching"
    assert count == counts.BEGIN_DETACHING

    resp, count = _count(statements, caller.delete, "/attachments/%s" % att)
    assert resp.status_code == 200, resp.body
    assert resp.body == {"attachments": []}
    assert not driver.exports[vol]
    assert cinder.volume(vol)["status"] == "available"
    assert count == counts.DELETE


def test_counts_do_not_grow_with_what_the_volume_carries(
        cinder, statements, multiattach_type):
    """Metadata, a read-only flag and other attachments are read in the
    same statements (the ORM loaded each collection separately)."""
    nova = cinder.as_nova()
    vol = cinder.create_volume(volume_type=multiattach_type)
    assert cinder.post("/volumes/%s/metadata" % vol, {
        "metadata": {"a": "1", "b": "2"}}).status_code == 200
    assert cinder.post("/volumes/%s/action" % vol, {
        "os-update_readonly_flag": {"readonly": True}}).status_code == 202
    first = nova.reserve(vol, str(uuid.uuid4()))["id"]
    assert nova.put("/attachments/%s" % first, {"attachment": {
        "connector": connector()}}).status_code == 200
    assert nova.post("/attachments/%s/action" % first,
                     {"os-complete": {}}).status_code == 204

    resp, count = _count(statements, nova.post, "/attachments", {
        "attachment": {"volume_uuid": vol,
                       "instance_uuid": str(uuid.uuid4())}})
    assert resp.status_code == 200, resp.body
    assert count == counts.RESERVE
    second = resp.body["attachment"]["id"]

    other = connector(initiator="iqn.1993-08.org.debian:01:other",
                      host="other-host")
    resp, count = _count(statements, nova.put, "/attachments/%s" % second,
                         {"attachment": {"connector": other}})
    assert resp.status_code == 200, resp.body
    # Read-only volume: connected read-only whatever the connector says.
    assert resp.body["attachment"]["attach_mode"] == "ro"
    assert resp.body["attachment"]["connection_info"]["access_mode"] == "ro"
    assert count == counts.PUT_AGAIN

    resp, count = _count(statements, nova.delete,
                         "/attachments/%s" % second)
    assert resp.status_code == 200, resp.body
    assert [a["id"] for a in resp.body["attachments"]] == [first]
    assert count == counts.DELETE


# --- the compare-and-swap updates: Core when the session holds nothing ---

def test_an_update_keeps_the_sessions_objects_in_step(cinder, stack):
    """The handshake's transactions hold no ORM objects and update with
    Core statements (``db.cas.updatable``); a transaction that loaded a
    volume still has it brought in step by the ORM, and one with a
    pending object still flushes it first."""
    database = stack[2].database
    vol = cinder.create_volume()
    ctx = ms_context.RequestContext(user_id="u", project_id=PROJECT,
                                    is_admin=True)
    with database.write() as session:
        volume = db.volume_get(session, ctx, vol)
        assert db.volume_transition(session, volume, "reserve")
        assert volume.status == "reserved"
    pending = str(uuid.uuid4())
    with database.write() as session:
        type_id = session.execute(sa.select(models.Volume.volume_type_id)
                                  .where(models.Volume.id == vol)).scalar()
        session.add(models.Volume(
            id=pending, project_id=PROJECT, user_id="u", size=1,
            status="available", attach_status="detached",
            volume_type_id=type_id, display_name="pending"))
        db.volume_update(session, pending, {"display_name": "renamed"})
    with database.write() as session:
        assert volume_reads.volume_state(session, ctx, vol).status == \
            "reserved"
        assert not session.identity_map
        assert db.volume_transition(
            session, volume_reads.volume_state(session, ctx, vol),
            "reserve") is False
    assert cinder.volume(pending)["name"] == "renamed"


def test_transitions_build_their_statements_once(cinder):
    """A second handshake builds no compare-and-swap UPDATE: each shape
    (table, columns set, columns checked) is built the first time and
    reused, bound parameters carrying the values (issue 16)."""

    def handshake():
        nova = cinder.as_nova()
        vol = cinder.create_volume()
        att = nova.reserve(vol, str(uuid.uuid4()))["id"]
        assert nova.put("/attachments/%s" % att, {"attachment": {
            "connector": connector()}}).status_code == 200
        assert nova.post("/attachments/%s/action" % att,
                         {"os-complete": {}}).status_code == 204
        assert nova.post("/volumes/%s/action" % vol,
                         {"os-begin_detaching": {}}).status_code == 202
        assert nova.delete("/attachments/%s" % att).status_code == 200
        return vol

    handshake()
    built = cas_db.cas_statement.cache_info()
    vol = handshake()
    again = cas_db.cas_statement.cache_info()
    assert again.misses == built.misses
    assert again.hits > built.hits
    assert cinder.volume(vol)["status"] == "available"
