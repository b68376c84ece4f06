"""The cinder database: models, queries and alembic migrations."""

import os

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")
