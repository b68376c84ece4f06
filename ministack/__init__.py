"""Code shared by the three ministack daemons.

Nothing in here knows about volumes or servers in particular: it is the
plumbing every service needs (config loading, logging, the request context,
the exception base, the RPC transport, the database base and the command
executor). The domain code lives in ``miniapi``, ``minicompute`` and
``minicinder``.
"""
