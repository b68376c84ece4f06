"""drop the identity tables: upstream Keystone has its own database

Revision ID: 0004_drop_identity
Revises: 0003_flavor_access_specs
Create Date: 2026-12-02 14:00:00.000000

Revision 0002 put the tables of the keystone subset miniapi used to serve
into the nova database. Identity is now upstream Keystone's
(devstack/lib/keystone), with its own database: the old accounts, their
password hashes and application-credential secrets are dropped rather
than left behind.
"""
import importlib.util
import os

from alembic import op


revision = '0004_drop_identity'
down_revision = '0003_flavor_access_specs'
branch_labels = None
depends_on = None

# Children first: the foreign keys point at the later ones.
TABLES = ('application_credential_role', 'assignment',
          'application_credential', 'user', 'role', 'project')


def upgrade():
    for table in TABLES:
        op.drop_table(table)


def downgrade():
    """The tables again (empty), exactly as revision 0002 created them."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        '0002_identity.py')
    spec = importlib.util.spec_from_file_location('_nova_0002_identity',
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.upgrade()
