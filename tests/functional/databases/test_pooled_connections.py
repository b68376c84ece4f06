"""Pooled connections on the real servers: no round trip to check one
out or to return it after a commit, yet a connection the server dropped is
replaced, and nothing is returned to the pool inside a transaction.

``ministack.db.watch_server_connections`` replaces SQLAlchemy's pre-ping
and rollback-on-return (issue 16). What it must still guarantee is
what those two gave: checked on private servers
(``tests/support/database_servers.py``) through each driver the daemons
use — PyMySQL, mysqlclient (the lab's) and psycopg.
"""

import pytest
import sqlalchemy as sa

from ministack import db
from tests.support.database_servers import mariadb_urls  # noqa: F401
from tests.support.database_servers import postgresql_urls  # noqa: F401

BACKENDS = ["mariadb-pymysql", "mariadb-mysqlclient", "postgresql"]


def _nova_url(urls, driver):
    """The private server's nova URL through ``driver`` (the fixtures
    give PyMySQL's for MariaDB)."""
    if driver != "mysqlclient":
        return urls["nova"]
    pytest.importorskip("MySQLdb")
    return urls["nova"].replace("mysql+pymysql://", "mysql+mysqldb://")


@pytest.fixture(scope="module", params=BACKENDS)
def server(request):
    kind, _, driver = request.param.partition("-")
    urls = request.getfixturevalue(kind + "_urls")
    return {"kind": kind, "url": _nova_url(urls, driver),
            "restart": urls["restart"]}


@pytest.fixture
def engine(server):
    # One pooled connection: every checkout reuses the same one.
    made = db.make_engine(server["url"], pool_size=1)
    yield made
    made.dispose()


@pytest.fixture
def observer(server):
    """A second engine, for what the server says about the first."""
    made = db.make_engine(server["url"], pool_size=1)
    yield made
    made.dispose()


def _backend_id(server, conn):
    if server["kind"] == "postgresql":
        return conn.execute(sa.text("SELECT pg_backend_pid()")).scalar()
    return conn.execute(sa.text("SELECT CONNECTION_ID()")).scalar()


def _open_transactions(server, engine, observer, backend_id):
    """Transactions the server holds open for the pooled connection
    ``backend_id``: PostgreSQL's view of its backend, from another
    session of the same role; MariaDB's own ``@@in_transaction`` of the
    connection, checked out again (reading a variable starts none)."""
    if server["kind"] == "postgresql":
        with observer.connect() as conn:
            return conn.execute(sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = :id AND "
                "state LIKE 'idle in transaction%'"),
                {"id": backend_id}).scalar()
    with engine.connect() as conn:
        assert _backend_id(server, conn) == backend_id
        return conn.execute(sa.text("SELECT @@in_transaction")).scalar()


def _mariadb_counters(observer):
    names = ("Com_rollback", "Com_admin_commands", "Com_commit")
    with observer.connect() as conn:
        rows = conn.execute(sa.text(
            "SHOW GLOBAL STATUS WHERE Variable_name IN "
            "('Com_rollback', 'Com_admin_commands', 'Com_commit')"))
        got = {name: int(value) for name, value in rows}
    return {name: got[name] for name in names}


@pytest.fixture(params=["pymysql", "mysqlclient"])
def mariadb_engines(request, mariadb_urls):  # noqa: F811
    """(engine, observer) on the private MariaDB through each driver: its
    global status counts each kind of command (PostgreSQL has no such
    per-command counters)."""
    url = _nova_url(mariadb_urls, request.param)
    engine = db.make_engine(url, pool_size=1)
    observer = db.make_engine(url, pool_size=1)
    yield engine, observer
    engine.dispose()
    observer.dispose()


def test_committed_sessions_cost_no_ping_and_no_rollback(mariadb_engines):
    engine, observer = mariadb_engines
    sessions = db.make_sessionmaker(engine)
    with db.session_scope(sessions) as session:     # connect, warm
        session.execute(sa.text("SELECT 1"))
    # What reading the counters costs by itself, to take it off.
    first = _mariadb_counters(observer)
    before = _mariadb_counters(observer)
    own = {name: before[name] - first[name] for name in first}
    for _ in range(20):
        with db.session_scope(sessions) as session:
            session.execute(sa.text("SELECT 1"))
    after = _mariadb_counters(observer)
    delta = {name: after[name] - before[name] - own[name] for name in own}
    assert delta == {"Com_rollback": 0, "Com_admin_commands": 0,
                     "Com_commit": 20}


@pytest.mark.parametrize("how", ["core", "orm", "orm-raises"])
def test_nothing_returns_to_the_pool_inside_a_transaction(server, engine,
                                                          observer, how):
    sessions = db.make_sessionmaker(engine)
    if how == "core":
        with engine.connect() as conn:      # a read, never committed
            backend = _backend_id(server, conn)
    elif how == "orm":
        with sessions() as session:         # closed without a commit
            backend = _backend_id(server, session.connection())
    else:
        with pytest.raises(RuntimeError):
            with db.session_scope(sessions) as session:
                backend = _backend_id(server, session.connection())
                raise RuntimeError("the caller failed mid-transaction")
    assert _open_transactions(server, engine, observer, backend) == 0
    with engine.connect() as conn:          # the same pooled connection
        assert _backend_id(server, conn) == backend


def test_a_failed_statement_leaves_no_transaction_behind(server, engine,
                                                         observer):
    sessions = db.make_sessionmaker(engine)
    with pytest.raises(sa.exc.DBAPIError):
        with db.session_scope(sessions) as session:
            backend = _backend_id(server, session.connection())
            session.execute(sa.text("SELECT no_such_column FROM services"))
    assert _open_transactions(server, engine, observer, backend) == 0


def test_a_restarted_server_costs_no_failed_request(server, engine):
    sessions = db.make_sessionmaker(engine)
    with db.session_scope(sessions) as session:
        before = _backend_id(server, session.connection())
    server["restart"]()
    # The pooled connection is dead: the checkout sees its socket closed,
    # pings it, and the pool opens a new one; the caller sees nothing.
    with db.session_scope(sessions) as session:
        after = _backend_id(server, session.connection())
        assert session.execute(sa.text("SELECT 1")).scalar() == 1
    assert after is not None and before is not None
