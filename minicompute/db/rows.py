"""Row shapes shared by the nova data-access modules.

The data-access functions hand out *detached* rows: ORM objects whose
session is gone, or model objects built from a Core row with no session
at all (:func:`unbound`). :func:`to_dict` is the primitive that crosses
RPC. Part of ``minicompute.db.api``, which re-exports :func:`to_dict`.
"""

import datetime

from minicompute.db import models


def to_dict(row):
    """A JSON-friendly dict of a row's columns (datetimes as ISO strings).

    This is the primitive that crosses RPC (``instance`` and ``bdm``
    arguments of ``minicompute.rpcapi``); instances also carry ``name``.
    """
    out = json_friendly((column.name, getattr(row, column.name))
                        for column in row.__table__.columns)
    if isinstance(row, models.Instance):
        out["name"] = row.name
    return out


def json_friendly(items):
    """``{name: value}`` of ``items`` with datetimes as ISO strings."""
    return {name: value.isoformat()
            if isinstance(value, datetime.datetime) else value
            for name, value in items}


def unbound(model, row):
    """A ``model`` object holding a Core row's columns, in no session:
    what the ORM's query handed out detached, without its load (the
    query, identity map and session cost more than the statement; every
    API request reads its server). Read it; change the row
    with an ``*_update`` function, never by adding it to a session."""
    return model(**row._mapping)
