"""The session factory behind ``minicompute.db.api``.

One module-level sessionmaker per process, set by :func:`configure` (the
daemon calls ``minicompute.db.api.configure(engine)`` once at start-up);
every data-access function opens one short transaction with :func:`scope`
(an ORM session) or, on the attach's and detach's hot paths that need no
ORM objects, :func:`begin` (a Core connection: no identity map, no
unit-of-work flush at commit).
"""

from ministack import db

_SESSIONMAKER = None
_ENGINE = None


def configure(engine):
    """Point the nova data-access modules at ``engine``."""
    global _SESSIONMAKER, _ENGINE
    _SESSIONMAKER = db.make_sessionmaker(engine)
    _ENGINE = engine


def scope():
    """One transaction (commit on success, roll back on error)."""
    if _SESSIONMAKER is None:
        raise RuntimeError("minicompute.db.api.configure() was not called")
    return db.session_scope(_SESSIONMAKER)


def begin():
    """One Core transaction on the engine (commit on success, roll back
    on error), for statements that load and flush no ORM objects."""
    if _ENGINE is None:
        raise RuntimeError("minicompute.db.api.configure() was not called")
    return _ENGINE.begin()
