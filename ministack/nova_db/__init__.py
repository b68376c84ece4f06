"""The nova database, shared by miniapi and minicompute.

Upstream, nova-api and nova-compute read and write the same cell database
(instances, block_device_mapping, instance_actions...). ministack keeps that
split: both daemons open this database by their own ``[database]
connection``, so it lives in the shared package rather than in either
service. Table and column names follow ``nova/db/main/models.py``, so an
operator's SQL from upstream documentation runs unchanged.
"""

import os

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")
