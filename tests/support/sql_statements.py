"""Counting the SQL a minicinder Database runs: :func:`recorded` listens
on its reader, writer and statement engines and yields the list of every
statement executed until the block ends."""

import contextlib

import sqlalchemy as sa


@contextlib.contextmanager
def recorded(database):
    """Every statement ``database`` executes inside the block, in order."""
    seen = []

    def record(conn, cursor, statement, *args):
        seen.append(statement)

    engines = {database.reader_engine, database.writer_engine,
               database.statement_engine}
    for engine in engines:
        sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in engines:
            sa.event.remove(engine, "before_cursor_execute", record)
