"""The session factory behind ``minicompute.db.api``.

One module-level sessionmaker per process, set by :func:`configure` (the
daemon calls ``minicompute.db.api.configure(engine)`` once at start-up);
every data-access function opens one short transaction with :func:`scope`.
"""

from ministack import db

_SESSIONMAKER = None


def configure(engine):
    """Point the nova data-access modules at ``engine``."""
    global _SESSIONMAKER
    _SESSIONMAKER = db.make_sessionmaker(engine)


def scope():
    """One transaction (commit on success, roll back on error)."""
    if _SESSIONMAKER is None:
        raise RuntimeError("minicompute.db.api.configure() was not called")
    return db.session_scope(_SESSIONMAKER)
