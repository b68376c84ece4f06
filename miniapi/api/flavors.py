"""/flavors: list, detail and show (nova's flavors.py controller).

``openstack server create --flavor m1.tiny`` first GETs
``/flavors/m1.tiny`` (404 expected) and then lists
``/flavors/detail?is_public=None``, so names are not ids here. As
upstream, only admins may filter on ``is_public`` (``none`` lists every
flavor); for anyone else the filter is ignored and the list holds the
public flavors plus the private ones shared with their project.
Creating, changing and deleting flavors is ``flavor_manage``.
"""

import flask
from oslo_utils import strutils

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api.views import flavors as views
from minicompute.db import api as db_api
from minicompute.db import flavors as flavors_db
from ministack import exception as ms_exception

bp = flask.Blueprint("flavors", __name__, url_prefix="/v2.1")


def _is_public(ctxt):
    if not ctxt.is_admin:
        return True
    value = flask.request.args.get("is_public")
    if value is None:
        return True
    if value.lower() == "none":
        return None
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise ms_exception.Invalid(
            message="Invalid is_public filter [%s]" % value) from None


def _flavors(ctxt):
    args = flask.request.args
    flavors = db_api.flavor_get_all(ctxt, is_public=_is_public(ctxt))
    for name, attr in (("minRam", "memory_mb"), ("minDisk", "root_gb")):
        if args.get(name):
            try:
                minimum = int(args[name])
            except ValueError:
                raise ms_exception.Invalid(
                    message="Invalid %s filter [%s]" % (name, args[name])
                ) from None
            flavors = [f for f in flavors
                       if (getattr(f, attr) or 0) >= minimum]
    marker = args.get("marker")
    return common.limit_marker(
        flavors, lambda f: f.flavorid, flask.current_app.config["MAX_LIMIT"],
        ms_exception.Invalid(message="marker [%s] not found" % marker))


def detail_view(ctxt, flavor, version):
    """One flavor's detail view, its extra specs read when shown (2.61)."""
    specs = flavors_db.extra_specs_get(ctxt, flavor) \
        if version >= "2.61" else None
    return views.detail(flavor, version, specs)


@bp.get("/flavors")
def index():
    ctxt = common.context()
    version = microversion.current()
    return flask.jsonify({"flavors": [
        views.summary(f, version) for f in _flavors(ctxt)]})


@bp.get("/flavors/detail")
def detail():
    ctxt = common.context()
    version = microversion.current()
    flavors = _flavors(ctxt)
    specs = flavors_db.extra_specs_get_all(ctxt, [f.id for f in flavors]) \
        if version >= "2.61" else {}
    return flask.jsonify({"flavors": [
        views.detail(f, version, specs.get(f.id)) for f in flavors]})


@bp.get("/flavors/<flavor_id>")
def show(flavor_id):
    ctxt = common.context()
    flavor = db_api.flavor_get(ctxt, flavor_id)
    return flask.jsonify({"flavor": detail_view(ctxt, flavor,
                                                microversion.current())})
