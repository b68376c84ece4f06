"""volume type access and volume transfers

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-10 12:00:00.000000

``volume_type_projects`` lists the projects that may use a private type
(``os-volume-type-access``); ``transfers`` holds volume transfer offers
(``os-volume-transfer``). Both as upstream cinder names them.
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('volume_type_projects',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('volume_type_id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.Column('deleted_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_type_id'], ['volume_types.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('volume_type_projects', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_type_projects_volume_type_id'), ['volume_type_id'], unique=False)

    op.create_table('transfers',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('volume_id', sa.String(length=36), nullable=False),
    sa.Column('display_name', sa.String(length=255), nullable=True),
    sa.Column('salt', sa.String(length=255), nullable=True),
    sa.Column('crypt_hash', sa.String(length=255), nullable=True),
    sa.Column('source_project_id', sa.String(length=255), nullable=True),
    sa.Column('destination_project_id', sa.String(length=255), nullable=True),
    sa.Column('accepted', sa.Boolean(), nullable=True),
    sa.Column('deleted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.Column('deleted_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['volume_id'], ['volumes.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('transfers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_transfers_volume_id'), ['volume_id'], unique=False)


def downgrade():
    with op.batch_alter_table('transfers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_transfers_volume_id'))
    op.drop_table('transfers')
    with op.batch_alter_table('volume_type_projects', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_type_projects_volume_type_id'))
    op.drop_table('volume_type_projects')
