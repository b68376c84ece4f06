"""os-flavor-access: who may use a private flavor (admin only).

``GET /flavors/{id}/os-flavor-access`` lists the projects; the
``addTenantAccess`` / ``removeTenantAccess`` actions on
``POST /flavors/{id}/action`` change the list and answer it. A public
flavor has no access list (404 on GET, 409 on add), as upstream.
"""

import flask

from miniapi.api import common
from miniapi.api import validation
from miniapi.api.schemas import flavors as schemas
from miniapi.api.views import flavors as views
from minicompute.db import api as db_api
from minicompute.db import flavors as flavors_db
from ministack import exception as ms_exception

bp = flask.Blueprint("flavor_access", __name__, url_prefix="/v2.1")

_POLICY = "os_compute_api:os-flavor-access"


@bp.get("/flavors/<flavor_id>/os-flavor-access")
def index(flavor_id):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY)
    flavor = db_api.flavor_get(ctxt, flavor_id)
    if flavor.is_public is not False:
        raise ms_exception.NotFound(
            message="Access list not available for public flavors.")
    return flask.jsonify(views.access(flavor,
                                      flavors_db.access_get(ctxt, flavor)))


@bp.post("/flavors/<flavor_id>/action")
def action(flavor_id):
    """addTenantAccess / removeTenantAccess (the only flavor actions)."""
    data = validation.request_json()
    if isinstance(data, dict) and "addTenantAccess" in data:
        return _add(flavor_id, data)
    if isinstance(data, dict) and "removeTenantAccess" in data:
        return _remove(flavor_id, data)
    if not isinstance(data, dict):
        raise ms_exception.Invalid(message="Malformed request body")
    raise ms_exception.Invalid(message="There is no such action: %s"
                               % ", ".join(map(str, data)))


def _add(flavor_id, data):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY + ":add_tenant_access")
    validation.validate(data, schemas.add_tenant_access)
    flavor = db_api.flavor_get(ctxt, flavor_id)
    if flavor.is_public is not False:
        raise ms_exception.Conflict(
            message="Can not add access to a public flavor.")
    flavors_db.access_add(ctxt, flavor,
                          data["addTenantAccess"]["tenant"])
    return flask.jsonify(views.access(flavor,
                                      flavors_db.access_get(ctxt, flavor)))


def _remove(flavor_id, data):
    ctxt = common.context()
    common.require_admin(ctxt, _POLICY + ":remove_tenant_access")
    validation.validate(data, schemas.remove_tenant_access)
    flavor = db_api.flavor_get(ctxt, flavor_id)
    flavors_db.access_remove(ctxt, flavor,
                             data["removeTenantAccess"]["tenant"])
    return flask.jsonify(views.access(flavor,
                                      flavors_db.access_get(ctxt, flavor)))
