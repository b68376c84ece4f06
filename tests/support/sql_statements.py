"""Counting the SQL a minicinder Database (or any engines) runs:
:func:`recorded` listens on its reader, writer and statement engines
(:func:`recorded_on`, on the engines given) and yields the list of every
statement executed until the block ends."""

import contextlib

import sqlalchemy as sa


@contextlib.contextmanager
def recorded(database):
    """Every statement ``database`` executes inside the block, in order."""
    with recorded_on({database.reader_engine, database.writer_engine,
                      database.statement_engine}) as seen:
        yield seen


@contextlib.contextmanager
def recorded_on(engines):
    """Every statement the ``engines`` execute inside the block (from any
    thread), in order."""
    seen = []

    def record(conn, cursor, statement, *args):
        seen.append(statement)

    for engine in engines:
        sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in engines:
            sa.event.remove(engine, "before_cursor_execute", record)
