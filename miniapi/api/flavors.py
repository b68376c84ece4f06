"""/flavors: list, detail and show (read-only; seeded at init).

``openstack server create --flavor m1.tiny`` first GETs
``/flavors/m1.tiny`` (404 expected) and then lists
``/flavors/detail?is_public=None``, so names are not ids here, and the
literal ``None`` is accepted for ``is_public``.
"""

import flask

from ministack import exception as ms_exception
from ministack.nova_db import api as db_api
from miniapi.api import common
from miniapi.api import microversion
from miniapi.api.views import flavors as views

bp = flask.Blueprint("flavors", __name__, url_prefix="/v2.1")


def _flavors(ctxt):
    args = flask.request.args
    flavors = db_api.flavor_get_all(ctxt)
    is_public = args.get("is_public", "true").lower()
    if is_public in ("none", "") and not ctxt.is_admin:
        is_public = "true"
    if is_public not in ("none", ""):
        wanted = common.parse_bool(is_public, "is_public")
        flavors = [f for f in flavors if (f.is_public is not False) ==
                   wanted]
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
    return flask.jsonify({"flavors": [
        views.detail(f, version) for f in _flavors(ctxt)]})


@bp.get("/flavors/<flavor_id>")
def show(flavor_id):
    ctxt = common.context()
    flavor = db_api.flavor_get(ctxt, flavor_id)
    return flask.jsonify({"flavor": views.detail(flavor,
                                                 microversion.current())})
