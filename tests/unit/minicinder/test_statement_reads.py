"""The Core reads of ``GET /volumes/{id}`` and ``/volumes/detail``
(issue 16).

On MariaDB/PostgreSQL the show runs on its own engine: autocommit, no
ROLLBACK on return, no pre-ping; :meth:`Database.read_rows` runs a read
again, once, when it met a dropped connection instead. The retry is
exercised on a real (SQLite) database with the driver's failure raised by
the read itself, as SQLAlchemy raises it for a connection the server
closed. The server engine's options are checked without a server (as
``tests/unit/ministack/test_db_pool.py`` does); the functional tier
(``tests/functional/databases``) runs the show on MariaDB and PostgreSQL.
The list (still one read transaction) must render byte for byte as the
ORM's volumes did.
"""

import json

import pytest
import sqlalchemy as sa

from minicinder.api import views
from minicinder.db import api as db
from minicinder.db import session as cinder_session
from minicinder.db import volume_reads
from ministack import context as ms_context
from ministack import db as ms_db
from ministack import microversion
from tests.support.minicinder_inprocess import PROJECT
from tests.support.minicinder_inprocess import connector


def _dropped(invalidated=True):
    return sa.exc.OperationalError(
        "SELECT 1", {}, Exception("(2013, 'Lost connection to server')"),
        connection_invalidated=invalidated)


@pytest.fixture
def database(tmp_path):
    database = cinder_session.Database("sqlite:///%s" % (tmp_path / "c.db"))
    yield database
    database.dispose()


def test_a_read_that_met_a_dropped_connection_runs_again(database):
    calls = []

    def read(conn, value):
        calls.append(conn)
        if len(calls) == 1:
            raise _dropped()
        return conn.execute(sa.text("SELECT :v"), {"v": value}).scalar()

    assert database.read_rows(read, 7) == 7
    assert len(calls) == 2


@pytest.mark.parametrize("error", [_dropped(invalidated=False),
                                   ValueError("not the database")])
def test_other_errors_are_not_retried(database, error):
    calls = []

    def read(conn):
        calls.append(conn)
        raise error

    with pytest.raises(type(error)):
        database.read_rows(read)
    assert len(calls) == 1


def test_a_second_dropped_connection_is_raised(database):
    calls = []

    def read(conn):
        calls.append(conn)
        raise _dropped()

    with pytest.raises(sa.exc.OperationalError):
        database.read_rows(read)
    assert len(calls) == 2


@pytest.fixture
def engine_kwargs(monkeypatch):
    seen = []
    real = sa.create_engine

    def recording(url, **kwargs):
        seen.append((str(url), kwargs))
        return real("sqlite://", poolclass=sa.pool.StaticPool)

    monkeypatch.setattr(ms_db.sa, "create_engine", recording)
    return seen


@pytest.mark.parametrize("url", ["mysql+pymysql://u:p@127.0.0.1/cinder",
                                 "mysql+mysqldb://u:p@127.0.0.1/cinder",
                                 "postgresql+psycopg://u:p@127.0.0.1/c"])
def test_server_statement_engine_autocommits_unpinged(engine_kwargs, url):
    database = cinder_session.Database(url, pool_size=12)
    assert database.statement_engine is not database.reader_engine
    reader, statements = engine_kwargs[0][1], engine_kwargs[-1][1]
    assert len(engine_kwargs) == 2
    # ORM reads and writes: ministack.db.watch_server_connections checks
    # out and returns them without a ping or a ROLLBACK.
    assert reader["pool_pre_ping"] is False
    assert reader["pool_reset_on_return"] is None
    assert statements["isolation_level"] == "AUTOCOMMIT"
    assert statements["skip_autocommit_rollback"] is True
    assert statements["pool_pre_ping"] is False
    assert statements["pool_size"] == 12


def test_sqlite_reads_share_the_reader_engine(database):
    assert database.statement_engine is database.reader_engine


# --- GET /volumes/detail: Core records render as the ORM's volumes ---


def _ctx(admin):
    return ms_context.RequestContext(
        user_id="admin" if admin else "bob", project_id=PROJECT,
        roles=["admin", "member"] if admin else ["member"])


@pytest.fixture
def listed_volumes(cinder, multiattach_type):
    """Volumes with every child kind: metadata, an attached and a
    reserved attachment, readonly admin metadata."""
    ids = []
    for i in range(3):
        resp = cinder.post("/volumes", {"volume": {
            "size": 1, "name": "l%d" % i, "volume_type": multiattach_type,
            "metadata": {"z": str(i), "a": "x"} if i != 1 else {}}})
        assert resp.status_code == 202, resp.body
        ids.append(resp.body["volume"]["id"])
    vol = ids[0]
    for n, instance in enumerate(("61c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b01",
                                  "61c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b02")):
        att = cinder.reserve(vol, instance)
        if n == 0:
            resp = cinder.put("/attachments/%s" % att["id"], {"attachment": {
                "connector": connector(initiator="iqn.2024-01.t:%d" % n)}})
            assert resp.status_code == 200, resp.body
            assert cinder.post("/attachments/%s/action" % att["id"],
                               {"os-complete": {}}).status_code == 204
    resp = cinder.post("/volumes/%s/action" % ids[2], {
        "os-update_readonly_flag": {"readonly": True}})
    assert resp.status_code == 202, resp.body
    return ids


@pytest.mark.parametrize("admin", [True, False])
@pytest.mark.parametrize("version", ["3.0", "3.44", "3.54"])
@pytest.mark.parametrize("page", [{}, {"limit": 2},
                                  {"sort_key": "display_name",
                                   "sort_dir": "asc"}])
def test_list_records_render_as_orm_volumes(stack, listed_volumes, admin,
                                            version, page):
    _cinder, _driver, svc = stack
    ctx = _ctx(admin)
    api_version = microversion.APIVersion(version)
    with svc.database.read() as session:
        select = db.volume_list_select(session, ctx, {}, **page)
        orm_volumes = list(session.scalars(select).unique())
        records = volume_reads.volume_list(session.connection(), select)
    with svc.app.application.app.test_request_context(base_url="http://h:8776"):
        expected = views.volume_list(orm_volumes, ctx, api_version, True,
                                     page.get("limit"))
        got = views.volume_list(records, ctx, api_version, True,
                                page.get("limit"))
    assert json.dumps(got) == json.dumps(expected)     # order too
    assert len(got["volumes"]) == page.get("limit", 3)
    assert any(v["attachments"] for v in got["volumes"]) or "limit" in page
