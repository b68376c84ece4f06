"""moves of a server between hosts are recorded

Revision ID: 0007_migrations
Revises: 0006_server_metadata
Create Date: 2026-12-07 22:00:00.000000

nova's ``migrations`` table: one row per resize, cold or live migration,
with its source and destination, its status as the move goes on, the
flavors before and after, and (live migration) the memory and disk
progress. ``os-migrations`` and ``/servers/{id}/migrations`` read it.
An upgraded lab has no migrations, as before.
"""
from alembic import op
import sqlalchemy as sa


revision = '0007_migrations'
down_revision = '0006_server_metadata'
branch_labels = None
depends_on = None

HOST_INDEX_LENGTH = {'source_compute': 128, 'dest_compute': 128,
                     'source_node': 128, 'dest_node': 128, 'status': 64}


def upgrade():
    op.create_table(
        'migrations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('source_compute', sa.String(length=255), nullable=True),
        sa.Column('dest_compute', sa.String(length=255), nullable=True),
        sa.Column('source_node', sa.String(length=255), nullable=True),
        sa.Column('dest_node', sa.String(length=255), nullable=True),
        sa.Column('dest_host', sa.String(length=255), nullable=True),
        sa.Column('old_instance_type_id', sa.Integer(), nullable=True),
        sa.Column('new_instance_type_id', sa.Integer(), nullable=True),
        sa.Column('instance_uuid', sa.String(length=36), nullable=True),
        sa.Column('status', sa.String(length=255), nullable=True),
        sa.Column('migration_type', sa.String(length=255), nullable=True),
        sa.Column('hidden', sa.Boolean(), nullable=True),
        sa.Column('memory_total', sa.BigInteger(), nullable=True),
        sa.Column('memory_processed', sa.BigInteger(), nullable=True),
        sa.Column('memory_remaining', sa.BigInteger(), nullable=True),
        sa.Column('disk_total', sa.BigInteger(), nullable=True),
        sa.Column('disk_processed', sa.BigInteger(), nullable=True),
        sa.Column('disk_remaining', sa.BigInteger(), nullable=True),
        sa.Column('cross_cell_move', sa.Boolean(), nullable=True),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid']),
        sa.PrimaryKeyConstraint('id'))
    with op.batch_alter_table('migrations', schema=None) as batch_op:
        batch_op.create_index('migrations_instance_uuid_and_status_idx',
                              ['deleted', 'instance_uuid', 'status'],
                              unique=False)
        # MariaDB's index keys hold at most 3072 bytes (utf8mb4: 4 per
        # character): the host, node and status columns are indexed by
        # a prefix.
        batch_op.create_index('migrations_by_host_nodes_and_status_idx',
                              ['deleted', 'source_compute', 'dest_compute',
                               'source_node', 'dest_node', 'status'],
                              unique=False, mysql_length=HOST_INDEX_LENGTH)
        batch_op.create_index('migrations_uuid', ['uuid'], unique=True)
        batch_op.create_index('migrations_updated_at_idx', ['updated_at'],
                              unique=False)


def downgrade():
    op.drop_table('migrations')
