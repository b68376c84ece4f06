"""Database access for minicinder: a reader and a writer.

Why two: SQLite in WAL mode lets readers run beside one writer, but a
*deferred* transaction that reads a row and then tries to write fails at
once with ``database is locked`` (SQLITE_BUSY_SNAPSHOT) if another writer
committed in between: the busy timeout does not help. Every minicinder
write transaction reads first (to check ownership and state) and then
compare-and-swaps, so on SQLite writers begin with ``BEGIN IMMEDIATE`` and
queue on the busy timeout instead, while plain reads stay concurrent. On
MariaDB/PostgreSQL both are the same engine.

A third engine, on MariaDB/PostgreSQL only, serves the single-statement
reads of ``db/volume_reads.py`` (``GET /volumes/{id}``, the call every client
polls): see :func:`_statement_reader_engine`.
"""


import sqlalchemy as sa

from minicinder.db import MIGRATIONS_DIR
from ministack import db as ms_db
from ministack.trace import profiler as trace_profiler

# Default reader pool: 8 API threads + 4 manager workers + start-up work.
READER_POOL_SIZE = 16


class Database:
    """Opens the engines for ``url`` and hands out transactions.

    :param pool_size: connections kept open for readers; size it to the
        threads that read at once (API workers + manager workers), so a
        burst never opens and closes overflow connections per request.
    """

    def __init__(self, url, connect_timeout=10, pool_size=READER_POOL_SIZE):
        self.url = url
        self.reader_engine = ms_db.make_engine(url, connect_timeout,
                                               pool_size=pool_size)
        if url.startswith("sqlite"):
            _relaxed_sync(self.reader_engine)
        if url.startswith("sqlite") and ":memory:" not in url \
                and url.rstrip("/") != "sqlite:":
            self.writer_engine = self.reader_engine
            _immediate_transactions(self.writer_engine)
            # make_engine checked the file opens and switched it to WAL
            # (a property of the file); readers get their own pool.
            self.reader_engine = _sqlite_reader_engine(
                self.writer_engine.url, pool_size)
        else:
            # In-memory SQLite is one shared connection: one engine.
            self.writer_engine = self.reader_engine
        if url.startswith("sqlite"):
            # Plain SELECTs on pysqlite open no transaction to end and
            # the reader engine has no pre-ping already.
            self.statement_engine = self.reader_engine
        else:
            self.statement_engine = _statement_reader_engine(
                self.reader_engine.url, connect_timeout, pool_size)
        self._reader = ms_db.make_sessionmaker(self.reader_engine)
        self._writer = ms_db.make_sessionmaker(self.writer_engine)

    def upgrade(self):
        """Run the alembic migrations to head."""
        ms_db.upgrade(self.writer_engine, MIGRATIONS_DIR)

    def read(self):
        """A transaction for lookups (rolled back if it raises)."""
        return ms_db.session_scope(self._reader)

    def read_connection(self):
        """A Core connection for the prebuilt single-statement selects of
        ``db/volume_reads.py`` (use as a context manager; it returns to the
        pool on exit). On MariaDB/PostgreSQL it autocommits and is not pinged:
        use :meth:`read_rows`, which retries a dropped connection."""
        return self.statement_engine.connect()

    def read_rows(self, read, *args):
        """``read(connection, *args)`` on a :meth:`read_connection`, run
        again once on a fresh connection if the first one had been
        dropped (the server restarted): the pool of statement readers
        is not pinged on checkout, and a read is safe to repeat. On a
        dropped connection SQLAlchemy invalidates the whole pool, so a
        second stale one is not handed out."""
        try:
            with self.read_connection() as conn:
                return read(conn, *args)
        except sa.exc.DBAPIError as exc:
            if not exc.connection_invalidated:
                raise
        with self.read_connection() as conn:
            return read(conn, *args)

    def write(self):
        """A transaction that may change rows (serialised on SQLite)."""
        return ms_db.session_scope(self._writer)

    def after_fork(self):
        """In a forked process: forget the parent's pooled connections
        without closing them (they are the parent's sockets; SQLAlchemy's
        recipe for ``os.fork``); each engine opens its own from here on."""
        for engine in {id(e): e for e in (self.reader_engine,
                                          self.writer_engine,
                                          self.statement_engine)}.values():
            engine.dispose(close=False)

    def dispose(self):
        if self.statement_engine is not self.reader_engine:
            self.statement_engine.dispose()
        self.reader_engine.dispose()
        if self.writer_engine is not self.reader_engine:
            self.writer_engine.dispose()


def _relaxed_sync(engine):
    """WAL with ``synchronous=NORMAL``: still crash-safe (a power cut
    may lose the last commits, never corrupt the file) but no fsync on
    every commit, which dominated the attachment handshake's latency."""

    @sa.event.listens_for(engine, "connect")
    def _normal_sync(dbapi_conn, _record):
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    engine.dispose()


def _sqlite_reader_engine(url, pool_size):
    """The engine for plain reads of an SQLite file.

    Unlike ``ministack.db.make_engine``'s it has a pool sized to the
    readers (its default 5 + 10 overflow made the 6th concurrent request
    open, set up and close a connection every time) and no pre-ping: a
    local file cannot drop the connection, and the ping was one more
    ``SELECT 1`` per request. No pragmas are needed: WAL is a property of
    the file (set by the writer's engine), the busy timeout is the
    driver's ``timeout`` and foreign keys / ``synchronous`` only matter
    to writers.
    """
    return sa.create_engine(
        url, poolclass=sa.pool.QueuePool, pool_size=pool_size,
        max_overflow=pool_size, pool_pre_ping=False,
        connect_args={"check_same_thread": False, "timeout": 30})


def _statement_reader_engine(url, connect_timeout, pool_size):
    """The engine for single-statement reads on MariaDB/PostgreSQL.

    A GET through the reader engine cost four round trips for one
    SELECT: the pre-ping on checkout, the statement, and the ROLLBACK
    that ends the implicit transaction when the connection returns to
    the pool (with PyMySQL each round trip is also Python work on
    both sides). One statement needs no transaction: its snapshot is
    consistent by itself. So this engine's connections autocommit
    (set once per connection), ``skip_autocommit_rollback`` drops the
    ROLLBACK, and there is no pre-ping: :meth:`Database.read_rows`
    retries a read that met a dropped connection instead. ORM reads of
    several statements (lists, the write paths' checks) stay on the
    reader engine, in one transaction each.
    """
    kwargs = {"isolation_level": "AUTOCOMMIT",
              "skip_autocommit_rollback": True, "pool_pre_ping": False,
              "pool_size": pool_size, "max_overflow": pool_size,
              "connect_args": {"connect_timeout": connect_timeout}}
    if url.drivername.startswith("mysql"):
        kwargs["pool_recycle"] = 3600
    return trace_profiler.trace_engine(sa.create_engine(url, **kwargs))


def _immediate_transactions(engine):
    """Make pysqlite leave BEGIN to us, and begin IMMEDIATE."""

    @sa.event.listens_for(engine, "connect")
    def _no_implicit_begin(dbapi_conn, _record):
        dbapi_conn.isolation_level = None

    @sa.event.listens_for(engine, "begin")
    def _begin_immediate(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    # make_engine already opened (and pooled) a connection without the
    # hooks above; drop it so every pooled connection has them.
    engine.dispose()
