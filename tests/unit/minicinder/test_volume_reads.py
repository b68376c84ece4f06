"""``GET /volumes/{id}`` reads with one Core select
(``db/volume_reads.py``); it must render exactly what the ORM load
renders, for every caller. And the ORM ``Volume`` is loaded only inside a
write transaction: every other read of a volume row is
``db/volume_reads.py``'s."""

import ast
import pathlib
import uuid

import pytest

from minicinder import exception
from minicinder.api import views
from minicinder.db import api as db
from minicinder.db import volume_reads
from ministack import context as ms_context
from ministack import microversion
from tests.support.minicinder_inprocess import PROJECT
from tests.support.minicinder_inprocess import connector

INSTANCES = ["61c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b0%d" % i for i in range(3)]
METADATA = {"zeta": "1", "alpha": "2", "mid": "3"}


def _attach(cinder, vol, instance, initiator, complete=True):
    att = cinder.reserve(vol, instance)
    resp = cinder.put("/attachments/%s" % att["id"], {"attachment": {
        "connector": connector(initiator=initiator)}})
    assert resp.status_code == 200, resp.body
    if complete:
        resp = cinder.post("/attachments/%s/action" % att["id"],
                           {"os-complete": {}})
        assert resp.status_code == 204, resp.body
    return att["id"]


@pytest.fixture
def busy_volume(cinder, multiattach_type):
    """A multiattach volume with metadata, two attached attachments, one
    only reserved and one deleted: every row kind the join folds."""
    resp = cinder.post("/volumes", {"volume": {
        "size": 1, "name": "busy", "description": "d",
        "volume_type": multiattach_type, "metadata": METADATA}})
    assert resp.status_code == 202, resp.body
    vol = resp.body["volume"]["id"]
    gone = _attach(cinder, vol, INSTANCES[2], "iqn.2024-01.test:gone")
    assert cinder.as_nova().delete("/attachments/%s" % gone).status_code == 200
    attached = [_attach(cinder, vol, INSTANCES[i], "iqn.2024-01.test:%d" % i)
                for i in range(2)]
    cinder.reserve(vol, INSTANCES[2])
    return vol, attached


def _ctx(admin, project=PROJECT):
    roles = ["admin", "member"] if admin else ["member"]
    return ms_context.RequestContext(user_id="admin" if admin else "bob",
                                     project_id=project, roles=roles)


@pytest.mark.parametrize("admin", [True, False])
@pytest.mark.parametrize("version", ["3.0", "3.44", "3.54"])
def test_record_renders_as_orm_volume(stack, busy_volume, admin, version):
    cinder, _driver, svc = stack
    vol, _attached = busy_volume
    ctx = _ctx(admin)
    with svc.database.read() as session:
        orm_volume = db.volume_get(session, ctx, vol)
        with svc.app.application.app.test_request_context(base_url="http://h:8776"):
            expected = views.volume_detail(
                orm_volume, ctx, microversion.APIVersion(version))
    with svc.database.read_connection() as conn:
        record = volume_reads.volume_get(conn, ctx, vol)
    with svc.app.application.app.test_request_context(base_url="http://h:8776"):
        got = views.volume_detail(record, ctx,
                                  microversion.APIVersion(version))
    assert got == expected
    assert list(got) == list(expected)          # same key order
    assert got["metadata"] == METADATA
    assert list(got["metadata"]) == list(METADATA)   # insertion order


def test_show_matches_list_detail(cinder, busy_volume):
    """The list still loads through the ORM: same entry, same JSON."""
    vol, attached = busy_volume
    for client in (cinder, cinder.as_user("bob")):
        for version in ("3.0", "3.54"):
            shown = client.get("/volumes/%s" % vol, version=version)
            listed = client.get("/volumes/detail", version=version)
            [entry] = [v for v in listed.body["volumes"] if v["id"] == vol]
            assert shown.status_code == 200
            assert shown.body["volume"] == entry
    body = cinder.volume(vol)
    assert [a["attachment_id"] for a in body["attachments"]] == attached
    assert body["multiattach"] is True


def test_record_attachments_oldest_first(stack, busy_volume):
    _cinder, _driver, svc = stack
    vol, attached = busy_volume
    with svc.database.read_connection() as conn:
        record = volume_reads.volume_get(conn, _ctx(True), vol)
    live = record.volume_attachment
    assert [a.attach_status for a in live] == ["attached", "attached",
                                                "reserved"]
    assert [a.id for a in live][:2] == attached
    assert [(m.key, m.value) for m in record.volume_metadata] == list(
        METADATA.items())
    assert record.volume_type.name.startswith("multiattach-")


def test_scoping_and_missing(stack):
    cinder, _driver, svc = stack
    vol = cinder.create_volume()
    with svc.database.read_connection() as conn:
        assert volume_reads.volume_get(conn, _ctx(False), vol).id == vol
        assert volume_reads.volume_get(conn, _ctx(True, "other"),
                                       vol).id == vol
        for ctx, volume_id in ((_ctx(False, "other"), vol),
                               (_ctx(True), str(uuid.uuid4()))):
            with pytest.raises(exception.VolumeNotFound):
                volume_reads.volume_get(conn, ctx, volume_id)
    assert cinder.delete("/volumes/%s" % vol).status_code == 202
    with svc.database.read_connection() as conn:
        with pytest.raises(exception.VolumeNotFound):
            volume_reads.volume_get(conn, _ctx(True), vol)


def test_show_other_project_is_404(cinder):
    vol = cinder.create_volume()
    other = cinder.as_user("carol", project="0ther0project")
    resp = other.get("/volumes/%s" % vol)
    assert resp.status_code == 404
    assert resp.body["itemNotFound"]["code"] == 404
    assert resp.headers["x-openstack-request-id"].startswith("req-")
    assert resp.headers["OpenStack-API-Version"] == "volume 3.44"


def test_image_metadata_is_read_only_when_there_is_some(stack):
    """One statement for a volume without image metadata; a second one,
    for its keys, once it has some (and none again after they go)."""
    from tests.support import sql_statements
    cinder, _, svc = stack
    vol = cinder.post("/volumes", {"volume": {"size": 1}}).body["volume"]
    path = "/volumes/%s" % vol["id"]
    with sql_statements.recorded(svc.database) as seen:
        body = cinder.get(path).body["volume"]
    assert len(seen) == 1 and "volume_image_metadata" not in body
    resp = cinder.post(path + "/action", {"os-set_image_metadata": {
        "metadata": {"image_name": "n", "image_id": "i"}}})
    assert resp.status_code == 200, resp.body
    with sql_statements.recorded(svc.database) as seen:
        body = cinder.get(path).body["volume"]
    assert len(seen) == 2
    assert body["volume_image_metadata"] == {"image_name": "n",
                                             "image_id": "i"}
    for key in ("image_name", "image_id"):
        resp = cinder.post(path + "/action", {"os-unset_image_metadata": {
            "key": key}})
        assert resp.status_code == 200, resp.body
    with sql_statements.recorded(svc.database) as seen:
        body = cinder.get(path).body["volume"]
    assert len(seen) == 1 and "volume_image_metadata" not in body


# The ORM loads of a row that only a write may make.
_WRITE_ONLY_LOADS = ("db.volume_get",)


def _calls_in_read_blocks(tree):
    """``db.volume_get`` calls inside ``with self.database.read()``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.With):
            continue
        if not any(isinstance(item.context_expr, ast.Call)
                   and ast.unparse(item.context_expr.func).endswith(
                       "database.read")
                   for item in node.items):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call) and \
                    ast.unparse(inner.func).endswith(_WRITE_ONLY_LOADS):
                found.append(inner.lineno)
    return found


def _sources(*packages):
    root = pathlib.Path(__file__).resolve().parents[3]
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            yield path.relative_to(root), ast.parse(path.read_text(),
                                                    str(path))


def test_the_orm_volume_is_loaded_only_to_change_it():
    offenders = ["%s:%d" % (path, line)
                 for path, tree in _sources("minicinder", "ministack_audit")
                 for line in _calls_in_read_blocks(tree)]
    assert offenders == [], (
        "read a volume outside a write through db/volume_reads.py")


def test_the_read_block_finder_sees_an_orm_read():
    tree = ast.parse(
        "def f(self):\n"
        "    with self.database.read() as session:\n"
        "        return db.volume_get(session, ctx, volume_id)\n")
    assert _calls_in_read_blocks(tree) == [3]


def test_attachment_rows_are_read_in_one_module():
    """No ORM query names ``VolumeAttachment`` outside the writes: every
    read of an attachment row is ``db/attachment_reads.py``'s."""
    offenders = []
    for path, tree in _sources("minicinder", "ministack_audit"):
        if path.name == "attachment_reads.py" or "migrations" in path.parts:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and \
                    ast.unparse(node.func).endswith(("sa.select", "select")) \
                    and "VolumeAttachment" in ast.unparse(node):
                offenders.append("%s:%d" % (path, node.lineno))
    assert offenders == [], (
        "read attachments through db/attachment_reads.py")
