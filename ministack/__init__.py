"""Code shared by the three ministack daemons.

Nothing in here knows about volumes or servers in particular: it is the
plumbing every service needs (config loading, logging, the request context,
the exception base, the RPC transport, the database base and the command
executor). The domain code lives in ``miniapi``, ``minicompute`` and
``minicinder``.
"""

# Before any library is imported: oslo.service's threading backend (the
# daemons run native threads) and the import warnings of eventlet, which
# is installed but never run (library_behaviour says why and which).
from ministack import library_behaviour as _library_behaviour  # noqa: E402

_library_behaviour.run_on_native_threads()
