"""flavor extra specs and flavor access; compute services named nova-compute

Revision ID: 0003_flavor_access_specs
Revises: 0002_identity
Create Date: 2026-12-02 10:00:00.000000

The compute agent reports itself as ``nova-compute`` (upstream's binary
name, which clients filter on: ``openstack compute service list --service
nova-compute``); rows written by earlier releases as ``minicompute`` are
renamed so the heartbeat keeps updating the same row.
"""
from alembic import op
import sqlalchemy as sa


revision = '0003_flavor_access_specs'
down_revision = '0002_identity'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'flavor_extra_specs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('flavor_id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['flavor_id'], ['flavors.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('flavor_id', 'key',
                            name='uniq_flavor_extra_specs0flavor_id0key'))
    with op.batch_alter_table('flavor_extra_specs', schema=None) as batch_op:
        batch_op.create_index('flavor_extra_specs_flavor_id_key_idx',
                              ['flavor_id', 'key'], unique=False)
    op.create_table(
        'flavor_projects',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('flavor_id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['flavor_id'], ['flavors.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('flavor_id', 'project_id',
                            name='uniq_flavor_projects0flavor_id0project_id'))
    services = sa.table('services', sa.column('binary', sa.String))
    op.execute(services.update().where(
        services.c.binary == 'minicompute').values(binary='nova-compute'))


def downgrade():
    services = sa.table('services', sa.column('binary', sa.String))
    op.execute(services.update().where(
        services.c.binary == 'nova-compute').values(binary='minicompute'))
    op.drop_table('flavor_projects')
    with op.batch_alter_table('flavor_extra_specs', schema=None) as batch_op:
        batch_op.drop_index('flavor_extra_specs_flavor_id_key_idx')
    op.drop_table('flavor_extra_specs')
