"""``/v3/{project_id}/types``: list, show, create, update, delete, and
extra specs (all, or one key).

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
    vtypes = common.services().volume_types.get_all(ctx)
    return flask.jsonify({"volume_types": [views.volume_type(t, ctx)
                                           for t in vtypes]})


@bp.get("/types/<type_id>")
def show(type_id):
    """``default`` names the configured default type, as upstream."""
    ctx = _ctx()
    volume_types = common.services().volume_types
    vtype = (volume_types.get_default(ctx) if type_id == "default"
             else volume_types.get(ctx, type_id))
    return flask.jsonify({"volume_type": views.volume_type(vtype, ctx)})


@bp.post("/types")
def create():
    svc = common.services()
    data = validation.body(schemas.volume_type_create,
                           common.max_body())
    data = data["volume_type"]
    if not data["name"].strip():
        raise exception.InvalidInput(
            reason="Volume type name can not be empty.")
    ctx = _ctx()
    vtype = svc.volume_types.create(
        ctx, data["name"].strip(), data.get("description"),
        data.get("os-volume-type-access:is_public", True),
        data.get("extra_specs"))
    return flask.jsonify({"volume_type": views.volume_type(
        vtype, ctx, action="create")})


@bp.put("/types/<type_id>")
def update(type_id):
    """Name, description and/or is_public (at least one)."""
    data = validation.body(schemas.volume_type_update,
                           common.max_body())["volume_type"]
    name = data.get("name")
    if name is not None and not name.strip():
        raise exception.InvalidInput(
            reason="Volume type name can not be empty.")
    if name is None and data.get("description") is None and \
            data.get("is_public") is None:
        raise exception.InvalidInput(
            reason="Specify volume type name, description, is_public or a "
                   "combination thereof.")
    ctx = _ctx()
    vtype = common.services().volume_types.update(
        ctx, type_id, name=name.strip() if name else None,
        description=data.get("description"),
        is_public=validation.boolean(data["is_public"], "is_public")
        if data.get("is_public") is not None else None)
    return flask.jsonify({"volume_type": views.volume_type(
        vtype, ctx, action="update")})


@bp.delete("/types/<type_id>")
def delete(type_id):
    validation.uuid_arg(type_id, lambda v: exception.VolumeTypeNotFound(
        volume_type_id=v))
    common.services().volume_types.delete(_ctx(), type_id)
    return "", 202


@bp.get("/types/<type_id>/extra_specs")
def extra_specs_index(type_id):
    ctx = _ctx()
    vtype = common.services().volume_types.get(ctx, type_id)
    return flask.jsonify({"extra_specs": views.type_extra_specs(vtype, ctx)})


@bp.post("/types/<type_id>/extra_specs")
def extra_specs_create(type_id):
    svc = common.services()
    data = validation.body(schemas.extra_specs_create,
                           common.max_body())
    svc.volume_types.set_extra_specs(_ctx(), type_id, data["extra_specs"])
    return flask.jsonify({"extra_specs": data["extra_specs"]})


@bp.get("/types/<type_id>/extra_specs/<key>")
def extra_spec_show(type_id, key):
    """``{key: value}``, 404 when the type has no such (visible) key."""
    ctx = _ctx()
    vtype = common.services().volume_types.get(ctx, type_id)
    specs = views.type_extra_specs(vtype, ctx)
    if key not in specs:
        raise exception.VolumeTypeExtraSpecsNotFound(
            volume_type_id=type_id, extra_specs_key=key)
    return flask.jsonify({key: specs[key]})


@bp.put("/types/<type_id>/extra_specs/<key>")
def extra_spec_update(type_id, key):
    """Body ``{key: value}`` with exactly the key of the URL."""
    data = validation.body(schemas.extra_specs, common.max_body())
    if len(data) > 1:
        raise exception.InvalidInput(
            reason="Request body contains too many items.")
    if key not in data:
        raise exception.InvalidInput(reason="Request body and URI mismatch")
    common.services().volume_types.set_extra_specs(_ctx(), type_id, data)
    return flask.jsonify(data)


@bp.delete("/types/<type_id>/extra_specs/<key>")
def extra_spec_delete(type_id, key):
    common.services().volume_types.delete_extra_spec(_ctx(), type_id, key)
    return "", 202
