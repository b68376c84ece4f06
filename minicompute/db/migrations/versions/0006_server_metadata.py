"""servers keep their access IPs and user metadata

Revision ID: 0006_server_metadata
Revises: 0005_compute_nodes
Create Date: 2026-12-07 18:00:00.000000

nova's ``instances.access_ip_v4``/``access_ip_v6`` columns (its
IPAddress type, a String(39) outside PostgreSQL) and ``instance_metadata``
table (one soft-deleted row per key, 255 characters each), so that
``accessIPv4``, ``accessIPv6`` and ``metadata`` given at create or
update, and the ``/servers/{id}/metadata`` API, are kept. Servers of an
upgraded lab show no access IPs and empty metadata, as before.
"""
from alembic import op
import sqlalchemy as sa


revision = '0006_server_metadata'
down_revision = '0005_compute_nodes'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances', schema=None) as batch_op:
        batch_op.add_column(sa.Column('access_ip_v4', sa.String(length=39),
                                      nullable=True))
        batch_op.add_column(sa.Column('access_ip_v6', sa.String(length=39),
                                      nullable=True))
    op.create_table(
        'instance_metadata',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=True),
        sa.Column('value', sa.String(length=255), nullable=True),
        sa.Column('instance_uuid', sa.String(length=36), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid']),
        sa.PrimaryKeyConstraint('id'))
    with op.batch_alter_table('instance_metadata', schema=None) as batch_op:
        batch_op.create_index('instance_metadata_instance_uuid_idx',
                              ['instance_uuid'], unique=False)


def downgrade():
    with op.batch_alter_table('instance_metadata', schema=None) as batch_op:
        batch_op.drop_index('instance_metadata_instance_uuid_idx')
    op.drop_table('instance_metadata')
    with op.batch_alter_table('instances', schema=None) as batch_op:
        batch_op.drop_column('access_ip_v6')
        batch_op.drop_column('access_ip_v4')
