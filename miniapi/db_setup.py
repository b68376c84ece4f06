"""Database set-up of the nova DB as miniapi sees it: migrate and seed.

``sync(engine)`` runs the nova DB migrations to head and seeds the default
flavors when the table is empty. It is idempotent, so devstack's
``init_miniapi`` and the daemon's start-up may both call it.
"""

from minicompute import db as nova_db
from minicompute.db import api as db_api
from ministack import context as ms_context
from ministack import db

# devstack's flavors (nova's create_flavors in lib/nova): small enough for
# TCG guests on a 2-core box; m1.nano is what tempest uses.
DEFAULT_FLAVORS = [
    {"flavorid": "42", "name": "m1.nano", "memory_mb": 128, "vcpus": 1,
     "root_gb": 1},
    {"flavorid": "84", "name": "m1.micro", "memory_mb": 192, "vcpus": 1,
     "root_gb": 1},
    {"flavorid": "1", "name": "m1.tiny", "memory_mb": 512, "vcpus": 1,
     "root_gb": 1},
    {"flavorid": "2", "name": "m1.small", "memory_mb": 2048, "vcpus": 1,
     "root_gb": 20},
]


def sync(engine, seed_flavors=True):
    """Migrate the nova DB to head and seed flavors if there are none."""
    db.upgrade(engine, nova_db.MIGRATIONS_DIR)
    db_api.configure(engine)
    if seed_flavors:
        seed_default_flavors()


def seed_default_flavors():
    ctxt = ms_context.get_admin_context()
    if db_api.flavor_get_all(ctxt):
        return
    for values in DEFAULT_FLAVORS:
        db_api.flavor_create(ctxt, dict(values, ephemeral_gb=0, swap=0,
                                        rxtx_factor=1.0, disabled=False,
                                        is_public=True))
