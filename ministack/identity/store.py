"""The identity records in the nova database: lookups and bootstrap.

The only module that queries the identity tables
(``ministack/nova_db/identity_models.py``). Lookups return plain
dataclass-like snapshots (detached rows), so nothing outside holds a
session. ``bootstrap`` is idempotent: it is run by devstack on every
``stack.sh`` and changes only what is missing, except passwords, which
are reset to the given value (as ``keystone-manage bootstrap`` does).
"""

import uuid

import sqlalchemy as sa

from ministack import db
from ministack.nova_db import identity_models as models

DEFAULT_DOMAIN = {"id": models.DEFAULT_DOMAIN_ID, "name": "Default"}


def new_id():
    return uuid.uuid4().hex


def domain_id_of(ref):
    """The domain id named by a request's ``domain`` dict (default if
    absent). Only the Default domain exists; any other gives None."""
    if not ref:
        return models.DEFAULT_DOMAIN_ID
    if ref.get("id") == models.DEFAULT_DOMAIN_ID or \
            ref.get("name") == DEFAULT_DOMAIN["name"]:
        return models.DEFAULT_DOMAIN_ID
    return None


class IdentityStore:
    """Identity queries on one engine (the nova database)."""

    def __init__(self, engine):
        self._sessionmaker = db.make_sessionmaker(engine)

    def _session(self):
        return db.session_scope(self._sessionmaker)

    # -- lookups ------------------------------------------------------------

    def user(self, user_id=None, name=None, domain_id=None):
        """The user by id, or by name in ``domain_id``; None if absent."""
        with self._session() as session:
            query = session.query(models.User)
            if user_id is not None:
                return query.filter_by(id=user_id).one_or_none()
            return query.filter_by(
                name=name, domain_id=domain_id).one_or_none()

    def project(self, project_id=None, name=None, domain_id=None):
        with self._session() as session:
            query = session.query(models.Project)
            if project_id is not None:
                return query.filter_by(id=project_id).one_or_none()
            return query.filter_by(
                name=name, domain_id=domain_id).one_or_none()

    def roles(self, user_id, project_id):
        """``[(role_id, role_name)]`` the user holds on the project."""
        with self._session() as session:
            rows = session.query(models.Role.id, models.Role.name).join(
                models.Assignment,
                models.Assignment.role_id == models.Role.id).filter(
                models.Assignment.actor_id == user_id,
                models.Assignment.target_id == project_id).order_by(
                models.Role.name).all()
        return [(r.id, r.name) for r in rows]

    def application_credential(self, cred_id=None, user_id=None,
                               name=None):
        """``(credential, [(role_id, role_name)])`` or ``(None, [])``."""
        with self._session() as session:
            query = session.query(models.ApplicationCredential)
            if cred_id is not None:
                cred = query.filter_by(id=cred_id).one_or_none()
            else:
                cred = query.filter_by(user_id=user_id,
                                       name=name).one_or_none()
            if cred is None:
                return None, []
            rows = session.query(models.Role.id, models.Role.name).join(
                models.ApplicationCredentialRole,
                models.ApplicationCredentialRole.role_id == models.Role.id
            ).filter(models.ApplicationCredentialRole
                     .application_credential_id == cred.internal_id).all()
        return cred, [(r.id, r.name) for r in rows]

    # -- bootstrap (devstack, tests) -----------------------------------------

    def ensure_role(self, name):
        with self._session() as session:
            role = session.query(models.Role).filter_by(
                name=name).one_or_none()
            if role is None:
                role = models.Role(id=new_id(), name=name)
                session.add(role)
            return role.id

    def ensure_project(self, name, description=None):
        with self._session() as session:
            project = session.query(models.Project).filter_by(
                name=name, domain_id=models.DEFAULT_DOMAIN_ID).one_or_none()
            if project is None:
                project = models.Project(
                    id=new_id(), name=name, description=description,
                    domain_id=models.DEFAULT_DOMAIN_ID, enabled=True)
                session.add(project)
            return project.id

    def ensure_user(self, name, password_hash, default_project_id=None):
        """Create the user, or reset its password hash; its id."""
        with self._session() as session:
            user = session.query(models.User).filter_by(
                name=name, domain_id=models.DEFAULT_DOMAIN_ID).one_or_none()
            if user is None:
                user = models.User(id=new_id(), name=name,
                                   domain_id=models.DEFAULT_DOMAIN_ID,
                                   enabled=True)
                session.add(user)
            user.password = password_hash
            user.default_project_id = default_project_id
            return user.id

    def grant(self, user_id, project_id, role_id):
        with self._session() as session:
            exists = session.query(models.Assignment).filter_by(
                type="UserProject", actor_id=user_id, target_id=project_id,
                role_id=role_id).one_or_none()
            if exists is None:
                session.add(models.Assignment(
                    type="UserProject", actor_id=user_id,
                    target_id=project_id, role_id=role_id))

    def set_enabled(self, user_id, enabled):
        with self._session() as session:
            session.execute(sa.update(models.User).where(
                models.User.id == user_id).values(enabled=enabled))

    def create_application_credential(self, user_id, project_id, name,
                                      secret_hash, role_ids,
                                      expires_at=None):
        """A new application credential; its id."""
        with self._session() as session:
            cred = models.ApplicationCredential(
                id=new_id(), name=name, secret_hash=secret_hash,
                user_id=user_id, project_id=project_id,
                expires_at=expires_at, unrestricted=False)
            session.add(cred)
            session.flush()
            for role_id in role_ids:
                session.add(models.ApplicationCredentialRole(
                    application_credential_id=cred.internal_id,
                    role_id=role_id))
            return cred.id
