"""transfer no_snapshots

Revision ID: 0005
Revises: 0004
Create Date: 2027-01-20 10:00:00.000000

``transfers.no_snapshots`` (3.55): whether the offer leaves the volume's
snapshots behind, as upstream records it (there are no snapshots here,
so it only changes what the transfer shows).
"""
from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('transfers', schema=None) as batch_op:
        batch_op.add_column(sa.Column('no_snapshots', sa.Boolean(),
                                      nullable=True))


def downgrade():
    with op.batch_alter_table('transfers', schema=None) as batch_op:
        batch_op.drop_column('no_snapshots')
