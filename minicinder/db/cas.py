"""The compare-and-swap UPDATEs every cinder state change goes through.

A state change is one ``UPDATE ... WHERE id = :id AND status IN (...)``
whose row count tells whether this request won (``volumes.py``'s
``volume_transition``, ``attachments.py``'s ``attachment_transition``).
Part of ``minicinder.db.api``.
"""

import functools

import sqlalchemy as sa


def updatable(session, model):
    """What to build an UPDATE of ``model`` on: ``(target, columns)``.

    When the session holds objects, loaded or pending, the mapped class,
    as these updates always were: the ORM flushes the pending ones first
    and brings the loaded ones in step with the new values. When it
    holds none (the attachment handshake's transactions read with
    ``db/attachment_reads.py``'s Core selects) there is nothing to flush or
    bring in step, and the table: the same SQL as a Core UPDATE,
    without the ORM's bulk-update machinery (eight statements per
    handshake).
    """
    if session.identity_map or session.new:
        return model, model
    return model.__table__, model.__table__.c


@functools.lru_cache(maxsize=128)
def cas_statement(table, set_columns, checked, live=True):
    """The compare-and-swap UPDATE of one row of ``table`` (a live one
    only, if ``live``), built once per shape: ``b_id`` the row,
    ``b_in_<column>`` (expanding) the values each ``checked`` column may
    have, ``v_<column>`` the new values. Building the statement anew for
    every transition (its clauses, bind parameters and cache key) cost
    more CPU than running it: a handshake makes six."""
    where = [table.c.id == sa.bindparam("b_id")]
    if live:
        where.append(table.c.deleted.is_(False))
    return (table.update()
            .where(*where,
                   *[table.c[column].in_(sa.bindparam(
                       "b_in_" + column, expanding=True))
                     for column in checked])
            .values({column: sa.bindparam("v_" + column)
                     for column in set_columns}))


def cas(session, table, row_id, values, expected, live=True):
    """Run :func:`cas_statement` on the session's connection (its
    transaction, without the ORM's execute path): True when exactly one
    row changed. ``expected``: ``{column: allowed values}``."""
    columns = tuple(sorted(values))
    checked = tuple(sorted(expected))
    params = {"b_id": row_id}
    params.update(("v_" + c, values[c]) for c in columns)
    params.update(("b_in_" + c, list(expected[c])) for c in checked)
    return session.connection().execute(
        cas_statement(table, columns, checked, live), params).rowcount == 1
