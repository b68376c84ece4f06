"""Queries on volume types and their extra specs.

Same conventions as ``db/api.py``: every function takes an open session
(the caller owns the transaction); a type is visible to everyone when
public, and a private one only where ``include_private`` says so.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from minicinder import exception
from minicinder.db import models
from ministack.db import utcnow


def _types():
    return sa.select(models.VolumeType).options(
        orm.selectinload(models.VolumeType.extra_specs))


def volume_type_get(session, type_id):
    vtype = session.scalars(_types().where(
        models.VolumeType.id == type_id,
        models.VolumeType.deleted.is_(False))).first()
    if vtype is None:
        raise exception.VolumeTypeNotFound(volume_type_id=type_id)
    return vtype


def volume_type_get_by_name(session, name):
    vtype = session.scalars(_types().where(
        models.VolumeType.name == name,
        models.VolumeType.deleted.is_(False))).first()
    if vtype is None:
        raise exception.VolumeTypeNotFoundByName(volume_type_name=name)
    return vtype


def _has_access(session, type_id, project_id):
    return project_id is not None and session.scalars(
        sa.select(models.VolumeTypeProjects.id).where(
            models.VolumeTypeProjects.volume_type_id == type_id,
            models.VolumeTypeProjects.project_id == project_id,
            models.VolumeTypeProjects.deleted.is_(False))).first() \
        is not None


def volume_type_get_by_name_or_id(session, name_or_id,
                                  include_private=True, project_id=None):
    """The type a client named by id or by name (cinder's
    ``volume_types.get_by_name_or_id``): a UUID-like value is tried as an
    id, then as a name, and a miss is :class:`VolumeTypeNotFound`; any
    other value is a name (:class:`VolumeTypeNotFoundByName`).

    :param include_private: False for a caller who is not an admin; a
        private type is then visible only to the projects on its access
        list (``project_id``), and to others exactly as absent as a
        missing one, for a lookup by id and by name alike.
    """
    def visible(vtype):
        if not include_private and not vtype.is_public and \
                not _has_access(session, vtype.id, project_id):
            raise exception.VolumeTypeNotFound(volume_type_id=name_or_id)
        return vtype

    if uuidutils.is_uuid_like(name_or_id):
        try:
            return visible(volume_type_get(session, name_or_id))
        except exception.VolumeTypeNotFound:
            pass
        try:
            return visible(volume_type_get_by_name(session, name_or_id))
        except exception.VolumeTypeNotFound:
            raise exception.VolumeTypeNotFound(
                volume_type_id=name_or_id) from None
    try:
        return visible(volume_type_get_by_name(session, name_or_id))
    except exception.VolumeTypeNotFound:
        raise exception.VolumeTypeNotFoundByName(
            volume_type_name=name_or_id) from None


def volume_type_get_all(session, include_private=False, project_id=None):
    """Live types: public ones, the private ones ``project_id`` has
    access to, or with ``include_private`` all."""
    query = _types().where(models.VolumeType.deleted.is_(False))
    if not include_private:
        query = query.where(sa.or_(
            models.VolumeType.is_public.is_(True),
            models.VolumeType.id.in_(
                sa.select(models.VolumeTypeProjects.volume_type_id).where(
                    models.VolumeTypeProjects.project_id == project_id,
                    models.VolumeTypeProjects.deleted.is_(False)))))
    return list(session.scalars(query.order_by(models.VolumeType.name)))


def volume_type_access_get_all(session, type_id):
    """Projects on a type's access list."""
    return list(session.scalars(
        sa.select(models.VolumeTypeProjects.project_id).where(
            models.VolumeTypeProjects.volume_type_id == type_id,
            models.VolumeTypeProjects.deleted.is_(False))
        .order_by(models.VolumeTypeProjects.id)))


def volume_type_access_add(session, type_id, project_id):
    """:raises VolumeTypeAccessExists: already on the list (409)."""
    if _has_access(session, type_id, project_id):
        raise exception.VolumeTypeAccessExists(volume_type_id=type_id,
                                               project_id=project_id)
    session.add(models.VolumeTypeProjects(volume_type_id=type_id,
                                          project_id=project_id))
    session.flush()


def volume_type_access_remove(session, type_id, project_id):
    """:raises VolumeTypeAccessNotFound: not on the list (404)."""
    removed = session.execute(
        sa.update(models.VolumeTypeProjects)
        .where(models.VolumeTypeProjects.volume_type_id == type_id,
               models.VolumeTypeProjects.project_id == project_id,
               models.VolumeTypeProjects.deleted.is_(False))
        .values(deleted=True, deleted_at=utcnow())).rowcount
    if not removed:
        raise exception.VolumeTypeAccessNotFound(volume_type_id=type_id,
                                                 project_id=project_id)


def volume_type_create(session, values, extra_specs):
    existing = session.scalars(sa.select(models.VolumeType.id).where(
        models.VolumeType.name == values["name"],
        models.VolumeType.deleted.is_(False))).first()
    if existing:
        raise exception.VolumeTypeExists(name=values["name"])
    vtype = models.VolumeType(**values)
    session.add(vtype)
    session.flush()
    volume_type_extra_specs_update(session, vtype.id, extra_specs)
    session.flush()
    session.expunge(vtype)
    return volume_type_get(session, vtype.id)


def volume_type_extra_specs_update(session, type_id, extra_specs):
    for key, value in extra_specs.items():
        row = session.scalars(sa.select(models.VolumeTypeExtraSpecs).where(
            models.VolumeTypeExtraSpecs.volume_type_id == type_id,
            models.VolumeTypeExtraSpecs.key == key,
            models.VolumeTypeExtraSpecs.deleted.is_(False))).first()
        if row is None:
            session.add(models.VolumeTypeExtraSpecs(
                volume_type_id=type_id, key=key, value=value))
        else:
            row.value = value


def volume_type_update(session, type_id, values):
    """:raises VolumeTypeExists: another live type has the new name."""
    if "name" in values:
        taken = session.scalars(sa.select(models.VolumeType.id).where(
            models.VolumeType.name == values["name"],
            models.VolumeType.id != type_id,
            models.VolumeType.deleted.is_(False))).first()
        if taken:
            raise exception.VolumeTypeExists(name=values["name"])
    if values:
        session.execute(sa.update(models.VolumeType)
                        .where(models.VolumeType.id == type_id)
                        .values(**values))


def volume_type_extra_spec_delete(session, type_id, key):
    """:returns: False when the type has no such live spec."""
    return session.execute(
        sa.update(models.VolumeTypeExtraSpecs)
        .where(models.VolumeTypeExtraSpecs.volume_type_id == type_id,
               models.VolumeTypeExtraSpecs.key == key,
               models.VolumeTypeExtraSpecs.deleted.is_(False))
        .values(deleted=True, deleted_at=utcnow())).rowcount > 0


def volume_type_in_use(session, type_id):
    return session.scalars(sa.select(models.Volume.id).where(
        models.Volume.volume_type_id == type_id,
        models.Volume.deleted.is_(False))).first() is not None


def volume_type_destroy(session, type_id):
    now = utcnow()
    session.execute(sa.update(models.VolumeTypeExtraSpecs)
                    .where(models.VolumeTypeExtraSpecs.volume_type_id
                           == type_id)
                    .values(deleted=True, deleted_at=now))
    session.execute(sa.update(models.VolumeType)
                    .where(models.VolumeType.id == type_id)
                    .values(deleted=True, deleted_at=now))
