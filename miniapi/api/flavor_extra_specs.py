"""/flavors/{id}/os-extra_specs[/{key}] (nova's flavors_extraspecs.py).

Reading is for everyone who can see the flavor; setting, updating and
unsetting are admin only. Values are stored as strings (numbers and
booleans are accepted and converted, as upstream). ``PUT .../{key}``
takes exactly one key, the one in the URL (400 otherwise).
"""

import flask

from miniapi.api import common
from miniapi.api import validation
from miniapi.api.schemas import flavors as schemas
from minicompute.db import api as db_api
from minicompute.db import flavors as flavors_db
from ministack import exception as ms_exception

bp = flask.Blueprint("flavor_extra_specs", __name__, url_prefix="/v2.1")

_POLICY = "os_compute_api:os-flavor-extra-specs:%s"


def _as_strings(specs):
    out = {}
    for key, value in specs.items():
        if isinstance(value, bool):
            value = str(value)
        elif isinstance(value, (int, float)):
            value = str(value)
        out[key] = value
    return out


@bp.get("/flavors/<flavor_id>/os-extra_specs")
def index(flavor_id):
    ctxt = common.context()
    flavor = db_api.flavor_get(ctxt, flavor_id)
    return flask.jsonify({"extra_specs":
                          flavors_db.extra_specs_get(ctxt, flavor)})


@bp.post("/flavors/<flavor_id>/os-extra_specs")
@validation.body(schemas.extra_specs_create)
def create(flavor_id, body):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY % "create")
    flavor = db_api.flavor_get(ctxt, flavor_id)
    specs = _as_strings(body["extra_specs"])
    flavors_db.extra_specs_update(ctxt, flavor, specs)
    return flask.jsonify({"extra_specs": specs})


@bp.get("/flavors/<flavor_id>/os-extra_specs/<key>")
def show(flavor_id, key):
    ctxt = common.context()
    flavor = db_api.flavor_get(ctxt, flavor_id)
    specs = flavors_db.extra_specs_get(ctxt, flavor)
    if key not in specs:
        raise ms_exception.NotFound(
            message="Flavor %s has no extra specs with key %s."
                    % (flavor.flavorid, key))
    return flask.jsonify({key: specs[key]})


@bp.put("/flavors/<flavor_id>/os-extra_specs/<key>")
@validation.body(schemas.extra_spec_update)
def update(flavor_id, key, body):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY % "update")
    if key not in body:
        raise ms_exception.Invalid(message="Request body and URI mismatch")
    flavor = db_api.flavor_get(ctxt, flavor_id)
    specs = _as_strings(body)
    flavors_db.extra_specs_update(ctxt, flavor, specs)
    return flask.jsonify(specs)


@bp.delete("/flavors/<flavor_id>/os-extra_specs/<key>")
def delete(flavor_id, key):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY % "delete")
    flavor = db_api.flavor_get(ctxt, flavor_id)
    flavors_db.extra_specs_delete(ctxt, flavor, key)
    return "", 200
