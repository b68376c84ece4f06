"""volume glance metadata

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-10 14:00:00.000000

``volume_glance_metadata``: what a volume created from an image records
of that image (shown as ``volume_image_metadata``), as upstream names it.
"""
from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('volume_glance_metadata',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('volume_id', sa.String(length=36), nullable=True),
    sa.Column('snapshot_id', sa.String(length=36), nullable=True),
    sa.Column('key', sa.String(length=255), nullable=True),
    sa.Column('value', sa.Text(), nullable=True),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.Column('deleted_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_id'], ['volumes.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('volume_glance_metadata', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_glance_metadata_volume_id'), ['volume_id'], unique=False)


def downgrade():
    with op.batch_alter_table('volume_glance_metadata', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_glance_metadata_volume_id'))
    op.drop_table('volume_glance_metadata')
