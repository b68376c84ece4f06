"""``/v3/{project_id}/types/{id}/os-volume-type-access`` and the type
actions ``addProjectAccess`` / ``removeProjectAccess`` (admin only): which
projects may see and use a private volume type."""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import validation

bp = flask.Blueprint("type_access", __name__,
                     url_prefix="/v3/<project_id>/types/<type_id>")
bp.url_value_preprocessor(common.drop_project)

_project = {"type": "object",
            "properties": {"project": {"type": "string", "minLength": 1,
                                       "maxLength": 255}},
            "required": ["project"], "additionalProperties": False}
action_body = {
    "type": "object",
    "properties": {"addProjectAccess": _project,
                   "removeProjectAccess": _project},
    "minProperties": 1, "maxProperties": 1, "additionalProperties": False}


def _type_id(type_id):
    return validation.uuid_arg(
        type_id, lambda v: exception.VolumeTypeNotFound(volume_type_id=v))


@bp.get("/os-volume-type-access")
def index(type_id):
    validation.query(())
    type_id = _type_id(type_id)
    projects = common.services().volume_types.access_list(
        common.context(), type_id)
    return flask.jsonify({"volume_type_access": [
        {"volume_type_id": type_id, "project_id": project}
        for project in projects]})


@bp.post("/action")
def action(type_id):
    body = validation.body(action_body, common.max_body())
    (name, args), = body.items()
    common.services().volume_types.access_change(
        common.context(), _type_id(type_id), args["project"],
        add=name == "addProjectAccess")
    return "", 202
