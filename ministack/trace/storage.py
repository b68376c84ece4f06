"""osprofiler's SQLAlchemy trace store, working on SQLAlchemy 2 and SQLite.

The lab keeps its traces in its own database, in osprofiler's ``data``
table, so nothing else has to run. osprofiler 4.4's own SQLAlchemy driver
cannot be used as it is:

* its ``notify`` executes the insert on a Connection it never commits
  (SQLAlchemy 2 has no autocommit): no span is ever stored, and on SQLite
  the open write transaction locks the file;
* its ``get_report``/``list_traces`` use ``select([table])`` and
  ``row["column"]``, which SQLAlchemy 2 removed;
* one Connection is shared by every thread of the daemon;
* ``get_driver`` finds no driver for a ``sqlite://`` URL.

:class:`SQLAlchemyDriver` is that driver with these fixed (same table,
same rows, same report), and one more change: a notification is not
written on the request's own thread. osprofiler calls ``notify`` twice
per span, inside the traced code; one transaction each (a commit and
an fsync on MariaDB) slowed a traced attach noticeably.
``notify`` now queues the row, and one writer thread per process
stores whatever has queued in one transaction (:class:`_Writer`). A
reader in the same process first waits for the queue to drain
(:func:`flush`); a reader in another process sees the spans a
transaction later, which is why the tools that show a trace wait for it
to settle. The daemons use it directly (:mod:`ministack.trace.profiler`);
:func:`register` makes osprofiler's own ``get_driver`` (the unmodified
``osprofiler trace show --connection-string ...`` CLI) use it too.
"""

import atexit
import json
import logging
import os
import queue
import threading
import time
import weakref

from osprofiler.drivers import base
from osprofiler.drivers import sqlalchemy_driver
import sqlalchemy as sa

from ministack.trace import naming

LOG = logging.getLogger(__name__)

_METADATA = sa.MetaData()
_TABLE = sa.Table(
    "data", _METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("timestamp", sa.String(26), index=True),
    sa.Column("base_id", sa.String(255), index=True),
    sa.Column("parent_id", sa.String(255), index=True),
    sa.Column("trace_id", sa.String(255), index=True),
    sa.Column("project", sa.String(255), index=True),
    sa.Column("host", sa.String(255), index=True),
    sa.Column("service", sa.String(255), index=True),
    sa.Column("name", sa.String(255), index=True),
    sa.Column("data", sa.JSON),
)

#: URL schemes this store serves (osprofiler's own list plus SQLite).
SQL_SCHEMES = ("sqlite", "mysql", "mysql+pymysql", "mysql+mysqldb",
               "postgresql", "postgresql+psycopg", "postgresql+psycopg2")


def is_sql_url(connection_string):
    return (connection_string or "").partition("://")[0] in SQL_SCHEMES


def data_table():
    """osprofiler's ``data`` table (the same columns its driver makes)."""
    return _TABLE


def _sqlite_pragmas(dbapi_conn, _record):
    # Three daemons write spans into one file: WAL lets readers and one
    # writer proceed together, and a short wait beats "database is locked".
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def engine(connection_string):
    """An engine for the trace store at ``connection_string``."""
    if connection_string.startswith("sqlite"):
        eng = sa.create_engine(connection_string,
                               connect_args={"timeout": 5},
                               json_serializer=_json_dumps)
        sa.event.listen(eng, "connect", _sqlite_pragmas)
        return eng
    return sa.create_engine(connection_string, pool_pre_ping=True,
                            pool_recycle=3600, json_serializer=_json_dumps)


def _json_dumps(value):
    # Span info may hold a datetime or another object json cannot take.
    return json.dumps(value, default=str)


def create_table(eng):
    _METADATA.create_all(eng, checkfirst=True)


#: Rows stored per transaction at most (a burst waits for the next one).
BATCH = 500

_WRITERS = weakref.WeakSet()


class _Writer:
    """One thread that stores queued notifications, a batch per
    transaction, so that tracing costs the traced code a queue put.

    Started on the first row, and again in a forked child (a thread does
    not survive ``fork``). A batch that cannot be stored is logged and
    dropped: a daemon never stops, nor slows down, for its traces.
    """

    def __init__(self, bound, table):
        self._engine = bound
        self._table = table
        self._queue = queue.Queue()
        self._lock = threading.Lock()
        self._pid = None
        self._engine_pid = os.getpid()
        _WRITERS.add(self)

    def put(self, values):
        if self._pid != os.getpid():
            self._start()
        self._queue.put(values)

    def _start(self):
        with self._lock:
            if self._pid == os.getpid():
                return
            if self._engine_pid != os.getpid():
                # A forked child (minicinder's API workers): the pooled
                # connections are the parent's sockets (the table check
                # at start-up left one); a child writing on one would
                # interleave with its siblings. Forget them, unclosed.
                self._engine.dispose(close=False)
                self._engine_pid = os.getpid()
            self._queue = queue.Queue()
            threading.Thread(target=self._run, name="osprofiler-writer",
                             daemon=True).start()
            self._pid = os.getpid()

    def _run(self):
        pending = self._queue
        while True:
            batch = [pending.get()]
            while len(batch) < BATCH:
                try:
                    batch.append(pending.get_nowait())
                except queue.Empty:
                    break
            try:
                with self._engine.begin() as conn:
                    conn.execute(self._table.insert(), batch)
            except Exception:
                LOG.exception("Cannot store %d osprofiler trace points "
                              "(first: base %s)", len(batch),
                              batch[0]["base_id"])
            finally:
                for _ in batch:
                    pending.task_done()

    def flush(self, timeout):
        """Wait until every queued row is stored (or ``timeout`` s).

        :returns: whether the queue drained in time.
        """
        pending = self._queue
        deadline = time.monotonic() + timeout
        with pending.all_tasks_done:
            while pending.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                pending.all_tasks_done.wait(left)
        return True


def flush(timeout=5.0):
    """Store what this process has queued before reading the store.

    :returns: whether every writer drained within ``timeout`` s.
    """
    deadline = time.monotonic() + timeout
    return all([writer.flush(max(0.0, deadline - time.monotonic()))
                for writer in list(_WRITERS)])


# A daemon that exits normally stores its last spans first.
atexit.register(flush)


class SQLAlchemyDriver(sqlalchemy_driver.SQLAlchemyDriver):
    """osprofiler's SQLAlchemy driver, fixed for SQLAlchemy 2 and SQLite."""

    def __init__(self, connection_str, project=None, service=None,
                 host=None, **kwargs):
        base.Driver.__init__(self, connection_str, project=project,
                             service=service, host=host, **kwargs)
        self._data_table = _TABLE
        self._engine = engine(connection_str)
        try:
            create_table(self._engine)
        except Exception:  # never stop a daemon for its traces
            LOG.exception("Cannot create osprofiler's data table")
        self._writer = _Writer(self._engine, self._data_table)

    @classmethod
    def get_name(cls):
        return "sqlalchemy"

    def notify(self, info, context=None, **kwargs):
        """Queue one notification for this process's writer thread."""
        data = info.copy()
        values = {
            "timestamp": data.pop("timestamp", None),
            "base_id": data.pop("base_id", None),
            "parent_id": data.pop("parent_id", None),
            "trace_id": data.pop("trace_id", None),
            "project": data.pop("project", self.project),
            "host": data.pop("host", self.host),
            "service": data.pop("service", self.service),
            "name": data.pop("name", None),
        }
        values["data"] = data
        self._writer.put(values)

    def list_traces(self, fields=None):
        fields = set(fields or self.default_trace_fields)
        flush()
        seen = set()
        result = []
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(self._data_table).order_by(
                self._data_table.c.id)).mappings()
            for row in rows:
                if row["base_id"] not in seen:
                    seen.add(row["base_id"])
                    result.append({key: value for key, value in row.items()
                                   if key in fields})
        return result

    def get_report(self, base_id):
        flush()
        with self._engine.connect() as conn:
            rows = conn.execute(
                sa.select(self._data_table)
                .where(self._data_table.c.base_id == base_id)
                .order_by(self._data_table.c.id)).mappings().all()
        for row in rows:
            data = row["data"]
            if isinstance(data, str):
                data = json.loads(data)
            self._append_results(row["trace_id"], row["parent_id"],
                                 row["name"], row["project"],
                                 row["service"], row["host"],
                                 row["timestamp"], data)
        return self._parse_results()


class SQLiteDriver(SQLAlchemyDriver):
    """The same store, found by osprofiler's ``get_driver`` for a
    ``sqlite://`` URL (its scheme is the driver name it looks up)."""

    @classmethod
    def get_name(cls):
        return "sqlite"


def register():
    """Make osprofiler's ``get_driver`` return the fixed driver for SQL
    URLs: ``sqlite://`` finds :class:`SQLiteDriver` by name; the
    ``mysql``/``postgresql`` URLs it maps to "sqlalchemy" find osprofiler's
    class first, so that class gets this module's methods."""
    stock = sqlalchemy_driver.SQLAlchemyDriver
    for name in ("__init__", "notify", "list_traces", "get_report"):
        setattr(stock, name, getattr(SQLAlchemyDriver, name))


def notification_data(value):
    """A stored notification's ``data`` column as a dict: osprofiler's own
    driver stores a JSON string (of a JSON string), this one a JSON
    object; anything unreadable is an empty dict."""
    for _ in range(2):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return {}
    return value if isinstance(value, dict) else {}


class TraceNotFound(LookupError):
    """No stored span matches the trace id or request id."""


def trace_rows(connection_string, ident):
    """The stored notifications of the trace named by ``ident``, as
    dicts (name, base_id, trace_id, parent_id, service, host, timestamp,
    data)."""
    table = data_table()
    flush()
    bound = engine(connection_string)
    try:
        with bound.connect() as conn:
            if naming.UUID_RE.match(ident or ""):
                base_id = ident
            elif naming.REQ_RE.fullmatch(ident or ""):
                found = conn.execute(
                    sa.select(table.c.base_id)
                    .where(table.c.data.cast(sa.Text).contains(ident))
                    .order_by(table.c.id.desc()).limit(1)).first()
                if found is None:
                    raise TraceNotFound(
                        "no trace carries request id %s" % ident)
                base_id = found[0]
            else:
                raise TraceNotFound(
                    "%r is neither a trace id (UUID) nor a request id "
                    "(req-UUID)" % ident)
            result = conn.execute(
                sa.select(table).where(table.c.base_id == base_id)
                .order_by(table.c.id)).mappings().all()
    finally:
        bound.dispose()
    if not result:
        raise TraceNotFound("no trace %s" % ident)
    return [dict(row) for row in result]
