"""The trace store's writer thread: a traced call only queues its
notifications; one thread per process stores them in batches; a reader
in the same process sees every row it queued; a store that fails logs
and drops, never raising into the traced code."""

import threading

import sqlalchemy as sa

from ministack.trace import storage


def _info(base, n):
    return {"name": "rpc-start", "base_id": base, "parent_id": base,
            "trace_id": "t-%d" % n, "timestamp": "2026-12-01T00:00:00.000001",
            "info": {"n": n}}


def _rows(url, base):
    bound = storage.engine(url)
    try:
        with bound.connect() as conn:
            return conn.execute(
                sa.select(storage.data_table().c.trace_id)
                .where(storage.data_table().c.base_id == base)
                .order_by(storage.data_table().c.id)).scalars().all()
    finally:
        bound.dispose()


def test_notify_queues_and_the_writer_stores_a_batch(tmp_path, monkeypatch):
    url = "sqlite:///%s" % (tmp_path / "osprofiler.sqlite")
    driver = storage.SQLAlchemyDriver(url, project="nova",
                                      service="nova-api", host="lab")
    callers = []
    stored_by = []
    real_begin = driver._engine.begin

    def begin():
        stored_by.append(threading.current_thread().name)
        return real_begin()

    monkeypatch.setattr(driver._engine, "begin", begin)
    for n in range(50):
        callers.append(threading.current_thread().name)
        driver.notify(_info("base-1", n))
    assert storage.flush(timeout=10)
    # Every row stored, in the order queued, none by the caller's thread.
    assert _rows(url, "base-1") == ["t-%d" % n for n in range(50)]
    assert stored_by and set(stored_by) == {"osprofiler-writer"}
    assert len(stored_by) <= 50
    # get_report in the same process drains the queue itself.
    driver.notify(_info("base-2", 0))
    assert storage.SQLAlchemyDriver(url).get_report("base-2")["info"]


def test_a_failing_store_is_logged_and_dropped(tmp_path, caplog):
    url = "sqlite:///%s" % (tmp_path / "missing-dir" / "x.sqlite")
    driver = storage.SQLAlchemyDriver(url, project="nova",
                                      service="nova-api", host="lab")
    driver.notify(_info("base-3", 0))  # no exception into the caller
    assert storage.flush(timeout=10)
    assert "Cannot store 1 osprofiler trace points" in caplog.text


def test_a_forked_child_does_not_write_on_the_parents_connection(tmp_path):
    """The table check at start-up leaves a pooled connection; a forked
    API worker must open its own, not share the parent's socket."""
    import os
    url = "sqlite:///%s" % (tmp_path / "osprofiler.sqlite")
    driver = storage.SQLAlchemyDriver(url, project="cinder",
                                      service="cinder-api", host="lab")
    with driver._engine.connect() as conn:
        parents = conn.connection.dbapi_connection
    out, back = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            driver.notify(_info("base-child", 0))
            assert storage.flush(timeout=10)
            with driver._engine.connect() as conn:
                mine = conn.connection.dbapi_connection
            os.write(back, b"shared" if mine is parents else b"own")
            code = 0
        finally:
            os._exit(code)
    os.close(back)
    answer = os.read(out, 10)
    os.close(out)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert answer == b"own"
    assert _rows(url, "base-child") == ["t-0"]
