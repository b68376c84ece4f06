"""Flavors, their extra specs and their access lists (nova's API DB).

Visibility follows nova's ``_flavor_get_query_from_db``: an admin sees
every flavor; anyone else sees the public flavors plus the private ones
their project was given access to (``flavor_projects``), both in lists
and on a direct GET. Flavors are deleted for good, as upstream's API DB
does (an instance keeps its own copy of the flavor it was built with),
together with their extra specs and access rows.

Part of ``minicompute.db.api``, which re-exports every public function.
"""

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from minicompute import exception
from minicompute.db import models
from minicompute.db.session import scope as _scope

Flavor = models.Flavor


def _visible(ctxt, query):
    """Non-admins: public flavors and those shared with their project."""
    if ctxt.is_admin:
        return query
    return query.filter(sa.or_(
        Flavor.is_public.is_not(False),
        Flavor.id.in_(_shared_with(ctxt.project_id))))


def _shared_with(project_id):
    return sa.select(models.FlavorProjects.flavor_id).where(
        models.FlavorProjects.project_id == project_id)


def flavor_create(ctxt, values, projects=()):
    """Create a flavor (``flavorid`` is its public id).

    :param projects: project ids given access (private flavors).
    :raises FlavorIdExists: the flavorid is taken.
    :raises FlavorExists: the name is taken.
    """
    try:
        with _scope() as session:
            if session.query(Flavor).filter_by(
                    flavorid=values["flavorid"]).first() is not None:
                raise exception.FlavorIdExists(flavor_id=values["flavorid"])
            if session.query(Flavor).filter_by(
                    name=values["name"]).first() is not None:
                raise exception.FlavorExists(name=values["name"])
            flavor = Flavor(**values)
            session.add(flavor)
            session.flush()
            for project_id in projects:
                session.add(models.FlavorProjects(flavor_id=flavor.id,
                                                  project_id=project_id))
    except sa_exc.IntegrityError:
        # A concurrent create won the race on a unique column.
        raise exception.FlavorExists(name=values["name"]) from None
    return flavor


def flavor_get_all(ctxt, is_public=True):
    """Enabled flavors, by memory size then flavorid.

    :param is_public: True (the default): public flavors and, as nova
        does, the private ones shared with the caller's project; False:
        private flavors only; None: all (admins). Non-admins never see a
        private flavor that is not shared with them.
    """
    with _scope() as session:
        query = session.query(Flavor).filter(sa.or_(
            Flavor.disabled.is_(False), Flavor.disabled.is_(None)))
        if is_public is True:
            query = query.filter(sa.or_(
                Flavor.is_public.is_not(False),
                Flavor.id.in_(_shared_with(ctxt.project_id))))
        elif is_public is False:
            query = query.filter(Flavor.is_public.is_(False))
        query = _visible(ctxt, query)
        return query.order_by(Flavor.memory_mb, Flavor.flavorid).all()


def flavor_get(ctxt, flavorid):
    """The flavor with public id ``flavorid``, if visible to ``ctxt``.

    :raises FlavorNotFound:
    """
    with _scope() as session:
        flavor = _visible(ctxt, session.query(Flavor).filter_by(
            flavorid=str(flavorid))).one_or_none()
    if flavor is None:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    return flavor


def flavor_update(ctxt, flavorid, values):
    """Change a flavor's ``description`` (the only mutable field, 2.55).

    :raises FlavorNotFound:
    """
    with _scope() as session:
        flavor = session.query(Flavor).filter_by(
            flavorid=str(flavorid)).one_or_none()
        if flavor is None:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        for key, value in values.items():
            setattr(flavor, key, value)
    return flavor


def flavor_destroy(ctxt, flavorid):
    """Delete the flavor, its extra specs and its access list.

    :raises FlavorNotFound:
    """
    with _scope() as session:
        flavor = session.query(Flavor).filter_by(
            flavorid=str(flavorid)).one_or_none()
        if flavor is None:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        for model in (models.FlavorExtraSpecs, models.FlavorProjects):
            session.query(model).filter_by(flavor_id=flavor.id).delete(
                synchronize_session=False)
        session.delete(flavor)


# --- extra specs ---------------------------------------------------------

def extra_specs_get_all(ctxt, flavor_ids):
    """``{flavor row id: {key: value}}`` for the given flavor row ids."""
    out = {flavor_id: {} for flavor_id in flavor_ids}
    if not out:
        return out
    with _scope() as session:
        rows = session.query(models.FlavorExtraSpecs).filter(
            models.FlavorExtraSpecs.flavor_id.in_(list(out))).order_by(
            models.FlavorExtraSpecs.key).all()
    for row in rows:
        out[row.flavor_id][row.key] = row.value
    return out


def extra_specs_get(ctxt, flavor):
    """The extra specs of the flavor row ``flavor`` as a dict."""
    return extra_specs_get_all(ctxt, [flavor.id])[flavor.id]


def extra_specs_update(ctxt, flavor, specs):
    """Create or replace the given keys of the flavor row ``flavor``."""
    with _scope() as session:
        existing = {row.key: row for row in session.query(
            models.FlavorExtraSpecs).filter_by(flavor_id=flavor.id)}
        for key, value in specs.items():
            if key in existing:
                existing[key].value = value
            else:
                session.add(models.FlavorExtraSpecs(
                    flavor_id=flavor.id, key=key, value=value))
    return specs


def extra_specs_delete(ctxt, flavor, key):
    """:raises FlavorExtraSpecsNotFound: the flavor has no such key."""
    with _scope() as session:
        count = session.query(models.FlavorExtraSpecs).filter_by(
            flavor_id=flavor.id, key=key).delete(synchronize_session=False)
    if not count:
        raise exception.FlavorExtraSpecsNotFound(
            flavor_id=flavor.flavorid, extra_specs_key=key)


# --- access (os-flavor-access) --------------------------------------------

def access_get(ctxt, flavor):
    """Project ids with access to the flavor row ``flavor``, sorted."""
    with _scope() as session:
        return sorted(row.project_id for row in session.query(
            models.FlavorProjects).filter_by(flavor_id=flavor.id))


def access_add(ctxt, flavor, project_id):
    """:raises FlavorAccessExists:"""
    try:
        with _scope() as session:
            if session.query(models.FlavorProjects).filter_by(
                    flavor_id=flavor.id, project_id=project_id).first():
                raise exception.FlavorAccessExists(
                    flavor_id=flavor.flavorid, project_id=project_id)
            session.add(models.FlavorProjects(flavor_id=flavor.id,
                                              project_id=project_id))
    except sa_exc.IntegrityError:
        # Two concurrent adds: the unique constraint decided.
        raise exception.FlavorAccessExists(
            flavor_id=flavor.flavorid, project_id=project_id) from None


def access_remove(ctxt, flavor, project_id):
    """:raises FlavorAccessNotFound:"""
    with _scope() as session:
        count = session.query(models.FlavorProjects).filter_by(
            flavor_id=flavor.id, project_id=project_id).delete(
            synchronize_session=False)
    if not count:
        raise exception.FlavorAccessNotFound(flavor_id=flavor.flavorid,
                                             project_id=project_id)
