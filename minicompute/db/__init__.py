"""The nova database: models, data access and alembic migrations.

Upstream, nova-api and nova-compute read and write the same cell database
(instances, block_device_mapping, instance_actions...) and both live in
the one ``nova`` package. Here ``minicompute`` plays that package: the
database lives with the rest of nova's domain (exceptions, states,
instance actions, rpcapi), and miniapi imports it as nova's API layer
does. Both daemons open it by their own ``[database] connection``.
Table and column names follow ``nova/db/main/models.py``, so an
operator's SQL from upstream documentation runs unchanged.
"""

import os

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")
