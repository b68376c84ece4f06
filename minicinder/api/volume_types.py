"""``/v3/{project_id}/types``: list, show, create, delete, extra specs.

Creating, deleting and changing types is admin-only (403 otherwise), as
upstream's default policy.
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import schemas
from minicinder.api import validation
from minicinder.api import views

bp = flask.Blueprint("volume_types", __name__,
                     url_prefix="/v3/<project_id>")


bp.url_value_preprocessor(common.drop_project)
_ctx = common.context


@bp.get("/types")
def index():
    validation.query(("is_public", "limit", "marker", "sort", "sort_key",
                      "sort_dir"))
    ctx = _ctx()
    vtypes = common.services().volumes.type_get_all(ctx)
    return flask.jsonify({"volume_types": [views.volume_type(t, ctx)
                                           for t in vtypes]})


@bp.get("/types/<type_id>")
def show(type_id):
    """``default`` names the configured default type, as upstream."""
    ctx = _ctx()
    volumes = common.services().volumes
    vtype = (volumes.type_get_default(ctx) if type_id == "default"
             else volumes.type_get(ctx, type_id))
    return flask.jsonify({"volume_type": views.volume_type(vtype, ctx)})


@bp.post("/types")
def create():
    svc = common.services()
    data = validation.body(schemas.volume_type_create,
                           common.max_body())
    data = data["volume_type"]
    ctx = _ctx()
    vtype = svc.volumes.type_create(
        ctx, data["name"].strip(), data.get("description"),
        data.get("os-volume-type-access:is_public", True),
        data.get("extra_specs"))
    return flask.jsonify({"volume_type": views.volume_type(vtype, ctx)})


@bp.delete("/types/<type_id>")
def delete(type_id):
    validation.uuid_arg(type_id, lambda v: exception.VolumeTypeNotFound(
        volume_type_id=v))
    common.services().volumes.type_delete(_ctx(), type_id)
    return "", 202


@bp.get("/types/<type_id>/extra_specs")
def extra_specs_index(type_id):
    ctx = _ctx()
    vtype = common.services().volumes.type_get(ctx, type_id)
    return flask.jsonify({"extra_specs":
                          views.volume_type(vtype, ctx)["extra_specs"]})


@bp.post("/types/<type_id>/extra_specs")
def extra_specs_create(type_id):
    svc = common.services()
    data = validation.body(schemas.extra_specs_create,
                           common.max_body())
    svc.volumes.type_set_extra_specs(_ctx(), type_id, data["extra_specs"])
    return flask.jsonify({"extra_specs": data["extra_specs"]})
