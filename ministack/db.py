"""Database plumbing shared by the nova and cinder databases.

Each side keeps its own models, its own ``MetaData`` and its own alembic
migrations (``minicinder/db/migrations``, ``minicompute/db/migrations``);
this module only knows how to open an engine for a URL, hand out sessions,
run a migration directory to head, and the timestamp columns both sides
share. Soft-delete columns differ upstream (nova: ``deleted`` integer equal
to the row id; cinder: ``deleted`` boolean), so each side declares its own.
"""

import contextlib
import datetime
import os

import sqlalchemy as sa
from sqlalchemy import orm

from ministack import exception
from ministack import sockets


def utcnow():
    """Naive UTC now, as upstream stores DateTime columns."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class TimestampMixin:
    created_at = sa.Column(sa.DateTime, default=utcnow)
    updated_at = sa.Column(sa.DateTime, onupdate=utcnow)
    deleted_at = sa.Column(sa.DateTime)


def with_defaults(table, values):
    """``values`` plus every other column of ``table``: its Python-side
    default (a scalar, or a callable called now) or None; the primary
    key is left to the database when not given. The row a Core INSERT
    writes, known without reading it back, as the ORM's flush fills
    the defaults in an object."""
    row = dict(values)
    for column in table.columns:
        if column.name in row:
            continue
        default = column.default
        if default is not None and default.is_scalar:
            row[column.name] = default.arg
        elif default is not None and default.is_callable:
            row[column.name] = default.arg(None)
        elif not column.primary_key:
            row[column.name] = None
    return row


# Connections a MariaDB/PostgreSQL engine keeps open: a daemon's API
# threads (8) plus its workers read at once. SQLAlchemy's default (5, then
# overflow connections closed on return) made every GET past the fifth
# concurrent one open and authenticate a new connection.
SERVER_POOL_SIZE = 16


def make_engine(url, connect_timeout=10, pool_size=SERVER_POOL_SIZE):
    """An engine for ``url``; SQLite gets WAL, FKs and its directory.

    :param pool_size: connections kept open (MariaDB, PostgreSQL).
    :raises ConfigError: the database cannot be reached, naming the option.
    """
    kwargs = {"pool_pre_ping": True, "future": True}
    server = url.startswith(("mysql", "postgresql"))
    if server:
        # Checked out and returned by watch_server_connections instead.
        kwargs.update(pool_pre_ping=False, pool_reset_on_return=None)
    if url.startswith("sqlite"):
        # "sqlite://" and "sqlite:///:memory:" are both in-memory databases.
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        if path in ("", ":memory:"):
            kwargs["poolclass"] = sa.pool.StaticPool
    elif url.startswith("mysql"):
        kwargs["connect_args"] = {"connect_timeout": connect_timeout}
        kwargs["pool_recycle"] = 3600
        kwargs["pool_size"] = pool_size
    elif url.startswith("postgresql"):
        kwargs["connect_args"] = {"connect_timeout": connect_timeout}
        kwargs["pool_size"] = pool_size
    try:
        engine = sa.create_engine(url, **kwargs)
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise exception.ConfigError(
            reason="[database] connection is not a usable URL: %s" % exc)
    if url.startswith("sqlite"):
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    if server:
        watch_server_connections(engine)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        raise exception.ConfigError(
            reason="cannot connect to the database named by [database] "
                   "connection (%s): %s"
                   % (engine.url.render_as_string(hide_password=True),
                      exc.orig))
    # SQL spans when [profiler] trace_sqlalchemy is on (no-op otherwise).
    from ministack.trace import profiler as trace_profiler
    return trace_profiler.trace_engine(engine)


# Set on a pooled connection's record once its last transaction ended
# with a COMMIT or ROLLBACK that SQLAlchemy issued; cleared when the next
# one begins or a statement fails.
_ENDED = "ministack_transaction_ended"


def watch_server_connections(engine):
    """Check out and return ``engine``'s pooled connections without a
    round trip each way (MariaDB, PostgreSQL).

    SQLAlchemy's defaults cost two per session: the pre-ping on checkout
    and the ROLLBACK on return: a third of the daemons' statements on
    MariaDB, each a round trip of Python on both sides. Instead:

    * checkout looks at the connection's socket without waiting: a server
      that restarted or dropped the connection has closed it (or sent its
      farewell), so the socket is readable; only then is the connection
      pinged, and a failed ping makes the pool open a fresh one. An idle
      healthy connection never has anything to read (both protocols are
      request/response). A peer that vanished without closing (a cable,
      not a restart) is not seen, as it would stall a ping too; its first
      statement fails and SQLAlchemy invalidates the pool.
    * return rolls back only a connection whose last transaction did not
      end in a COMMIT or ROLLBACK: after ``session_scope``'s commit there
      is nothing to reset.
    """
    dialect = engine.dialect

    @sa.event.listens_for(engine, "checkout")
    def _alive(dbapi_conn, record, _proxy):
        if _socket_readable(dbapi_conn):
            try:
                alive = dialect.do_ping(dbapi_conn)
            except Exception:   # the driver's error for a dead connection
                alive = False
            if not alive:
                raise sa.exc.DisconnectionError(
                    "the database server closed the connection")

    @sa.event.listens_for(engine, "begin")
    def _began(conn):
        conn.info[_ENDED] = False

    @sa.event.listens_for(engine, "commit")
    def _committing(conn):
        conn.info[_ENDED] = True

    @sa.event.listens_for(engine, "rollback")
    def _rolling_back(conn):
        conn.info[_ENDED] = True

    @sa.event.listens_for(engine, "handle_error")
    def _failed(context):
        # A failed COMMIT or ROLLBACK leaves the transaction unknown. A
        # dropped connection is discarded, with nothing to reset.
        conn = context.connection
        if conn is not None and not context.is_disconnect \
                and not conn.invalidated:
            conn.info[_ENDED] = False

    @sa.event.listens_for(engine, "reset")
    def _reset(dbapi_conn, record, state):
        if state.terminate_only or state.transaction_was_reset:
            return
        if not record.info.get(_ENDED):
            dialect.do_rollback(dbapi_conn)


def _socket_readable(dbapi_conn):
    """True if the server has said something (or closed) on an idle
    connection; True too when the driver shows no socket (then the
    caller pings, as SQLAlchemy's pre-ping would)."""
    try:
        fd = dbapi_conn.fileno()          # mysqlclient, psycopg
    except AttributeError:
        sock = getattr(dbapi_conn, "_sock", None)   # PyMySQL
        if sock is None:
            return True
        fd = sock.fileno()
    except Exception:   # closed by the driver already
        return True
    return sockets.readable_now(fd)


def _sqlite_pragmas(dbapi_conn, _record):
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_sessionmaker(engine):
    return orm.sessionmaker(bind=engine, expire_on_commit=False)


@contextlib.contextmanager
def session_scope(sessionmaker):
    """One transaction: commit on success, roll back on any error."""
    session = sessionmaker()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def upgrade(engine, migrations_dir, revision="head"):
    """Run the alembic migrations in ``migrations_dir`` up to ``revision``."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", migrations_dir)
    cfg.set_main_option("sqlalchemy.url",
                        engine.url.render_as_string(hide_password=False))
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)


def run_alembic_env(alembic_context, target_metadata):
    """The body of every ``migrations/env.py``: online mode only.

    The connection comes from :func:`upgrade` (``cfg.attributes``), or is
    opened from ``sqlalchemy.url`` when alembic is run from the command line.
    """
    config = alembic_context.config
    connection = config.attributes.get("connection")
    if connection is None:
        engine = sa.create_engine(config.get_main_option("sqlalchemy.url"))
        with engine.begin() as connection:
            _run(alembic_context, connection, target_metadata)
    else:
        _run(alembic_context, connection, target_metadata)


def _run(alembic_context, connection, target_metadata):
    alembic_context.configure(connection=connection,
                              target_metadata=target_metadata,
                              render_as_batch=True)
    with alembic_context.begin_transaction():
        alembic_context.run_migrations()
