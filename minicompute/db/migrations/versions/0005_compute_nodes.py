"""compute_nodes: each compute host reports its own hypervisor's facts

Revision ID: 0005_compute_nodes
Revises: 0004_drop_identity
Create Date: 2026-12-05 10:00:00.000000

nova's ``compute_nodes`` table, with the columns minicompute reports (the
node's totals, hypervisor type and version, CPU description, host IP);
os-hypervisors reads every host's node from here instead of reading the
machine miniapi runs on. The used figures are not stored: the API sums
them from the host's instances. A lab upgraded from 0004 has no rows
until each minicompute (re)starts and reports.
"""
from alembic import op
import sqlalchemy as sa


revision = '0005_compute_nodes'
down_revision = '0004_drop_identity'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'compute_nodes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('service_id', sa.Integer(), nullable=True),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('hypervisor_hostname', sa.String(length=255),
                  nullable=True),
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('memory_mb', sa.Integer(), nullable=False),
        sa.Column('local_gb', sa.Integer(), nullable=False),
        sa.Column('disk_available_least', sa.Integer(), nullable=True),
        sa.Column('hypervisor_type', sa.Text(), nullable=False),
        sa.Column('hypervisor_version', sa.Integer(), nullable=False),
        sa.Column('cpu_info', sa.Text(), nullable=False),
        sa.Column('host_ip', sa.String(length=39), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint(
            'host', 'hypervisor_hostname', 'deleted',
            name='uniq_compute_nodes0host0hypervisor_hostname0deleted'))
    with op.batch_alter_table('compute_nodes', schema=None) as batch_op:
        batch_op.create_index('compute_nodes_uuid_idx', ['uuid'],
                              unique=True)


def downgrade():
    with op.batch_alter_table('compute_nodes', schema=None) as batch_op:
        batch_op.drop_index('compute_nodes_uuid_idx')
    op.drop_table('compute_nodes')
