"""volume admin metadata, services and quotas

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-10 10:00:00.000000

``volume_admin_metadata`` holds the keys only the service and admins set
(``readonly``, ``attached_mode``); ``services`` holds the volume
service's record and heartbeat (``os-services``); ``quotas`` a project's
own limits (``os-quota-sets``). All as upstream cinder names them.
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('volume_admin_metadata',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=True),
    sa.Column('value', sa.String(length=255), nullable=True),
    sa.Column('volume_id', sa.String(length=36), nullable=False),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.Column('deleted_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_id'], ['volumes.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('volume_admin_metadata', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_admin_metadata_volume_id'), ['volume_id'], unique=False)

    op.create_table('services',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=True),
    sa.Column('host', sa.String(length=255), nullable=True),
    sa.Column('binary', sa.String(length=255), nullable=True),
    sa.Column('topic', sa.String(length=255), nullable=True),
    sa.Column('report_count', sa.Integer(), nullable=False),
    sa.Column('disabled', sa.Boolean(), nullable=True),
    sa.Column('disabled_reason', sa.String(length=255), nullable=True),
    sa.Column('availability_zone', sa.String(length=255), nullable=True),
    sa.Column('modified_at', sa.DateTime(), nullable=True),
    sa.Column('frozen', sa.Boolean(), nullable=False),
    sa.Column('replication_status', sa.String(length=36), nullable=True),
    sa.Column('active_backend_id', sa.String(length=255), nullable=True),
    sa.Column('cluster_name', sa.String(length=255), nullable=True),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.Column('deleted_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('services', schema=None) as batch_op:
        batch_op.create_index('services_uuid_idx', ['uuid'], unique=True)

    op.create_table('quotas',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('resource', sa.String(length=255), nullable=False),
    sa.Column('hard_limit', sa.Integer(), nullable=True),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.Column('deleted_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('quotas', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_quotas_project_id'), ['project_id'], unique=False)


def downgrade():
    with op.batch_alter_table('quotas', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_quotas_project_id'))
    op.drop_table('quotas')
    with op.batch_alter_table('services', schema=None) as batch_op:
        batch_op.drop_index('services_uuid_idx')
    op.drop_table('services')
    with op.batch_alter_table('volume_admin_metadata', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_admin_metadata_volume_id'))
    op.drop_table('volume_admin_metadata')
