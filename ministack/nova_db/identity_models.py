"""Identity tables (keystone's names) kept in the nova database.

Upstream keystone has its own database; ministack has no keystone daemon,
so miniapi serves the identity API and keeps its few tables next to the
nova tables it already migrates (a documented deviation). Names follow
``keystone/{resource,identity,assignment,application_credential}/backends/
sql_model.py`` so keystone's documentation reads the same, simplified:

* one ``Default`` domain, recorded as ``domain_id = 'default'``;
* the password hash lives on the ``user`` row (keystone splits it into
  ``local_user`` and ``password``);
* ``assignment`` holds only user-on-project grants (``type`` is always
  ``UserProject``).

Secrets are stored hashed (``ministack.identity.passwords``), never in
clear.
"""

import sqlalchemy as sa

from ministack.db import utcnow
from ministack.nova_db.models import Base

DEFAULT_DOMAIN_ID = "default"


class Project(Base):
    """A tenant: the owner of servers, volumes and attachments."""

    __tablename__ = "project"
    __table_args__ = (
        sa.UniqueConstraint("domain_id", "name",
                            name="ixu_project_name_domain_id"),
    )

    id = sa.Column(sa.String(64), primary_key=True)
    name = sa.Column(sa.String(64), nullable=False)
    domain_id = sa.Column(sa.String(64), nullable=False,
                          default=DEFAULT_DOMAIN_ID)
    description = sa.Column(sa.Text)
    enabled = sa.Column(sa.Boolean, nullable=False, default=True)
    created_at = sa.Column(sa.DateTime, default=utcnow)


class User(Base):
    """A person or service account; ``password`` is a scrypt hash."""

    __tablename__ = "user"
    __table_args__ = (
        sa.UniqueConstraint("domain_id", "name",
                            name="ixu_user_name_domain_id"),
    )

    id = sa.Column(sa.String(64), primary_key=True)
    name = sa.Column(sa.String(255), nullable=False)
    domain_id = sa.Column(sa.String(64), nullable=False,
                          default=DEFAULT_DOMAIN_ID)
    password = sa.Column(sa.String(255))
    enabled = sa.Column(sa.Boolean, nullable=False, default=True)
    default_project_id = sa.Column(sa.String(64))
    created_at = sa.Column(sa.DateTime, default=utcnow)


class Role(Base):
    """A role name (admin, member, reader, service)."""

    __tablename__ = "role"

    id = sa.Column(sa.String(64), primary_key=True)
    name = sa.Column(sa.String(255), nullable=False, unique=True)


class Assignment(Base):
    """Role ``role_id`` held by user ``actor_id`` on project ``target_id``."""

    __tablename__ = "assignment"

    type = sa.Column(sa.String(64), primary_key=True, default="UserProject")
    actor_id = sa.Column(sa.String(64), sa.ForeignKey("user.id",
                                                      ondelete="CASCADE"),
                         primary_key=True)
    target_id = sa.Column(sa.String(64),
                          sa.ForeignKey("project.id", ondelete="CASCADE"),
                          primary_key=True)
    role_id = sa.Column(sa.String(64), sa.ForeignKey("role.id",
                                                     ondelete="CASCADE"),
                        primary_key=True)


class ApplicationCredential(Base):
    """A user-delegated secret bound to one project and a role subset."""

    __tablename__ = "application_credential"
    __table_args__ = (
        sa.UniqueConstraint("user_id", "name",
                            name="duplicate_app_cred_constraint"),
    )

    internal_id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    id = sa.Column(sa.String(64), nullable=False, unique=True)
    name = sa.Column(sa.String(255), nullable=False)
    secret_hash = sa.Column(sa.String(255), nullable=False)
    description = sa.Column(sa.Text)
    user_id = sa.Column(sa.String(64), sa.ForeignKey("user.id",
                                                     ondelete="CASCADE"),
                        nullable=False)
    project_id = sa.Column(sa.String(64),
                           sa.ForeignKey("project.id", ondelete="CASCADE"),
                           nullable=False)
    expires_at = sa.Column(sa.DateTime)
    unrestricted = sa.Column(sa.Boolean, nullable=False, default=False)
    created_at = sa.Column(sa.DateTime, default=utcnow)


class ApplicationCredentialRole(Base):
    """The roles an application credential delegates."""

    __tablename__ = "application_credential_role"

    application_credential_id = sa.Column(
        sa.Integer, sa.ForeignKey("application_credential.internal_id",
                                  ondelete="CASCADE"),
        primary_key=True)
    role_id = sa.Column(sa.String(64), sa.ForeignKey("role.id",
                                                     ondelete="CASCADE"),
                        primary_key=True)
