"""``/v3/{project_id}/volumes/{id}/metadata``: a volume's user metadata.

As upstream: POST merges keys in and answers with all of them, PUT
replaces the whole set, ``/metadata/{key}`` reads, sets or deletes one
key (``{"meta": {key: value}}``); every answer is 200.
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import schemas
from minicinder.api import validation

bp = flask.Blueprint("volume_metadata", __name__,
                     url_prefix="/v3/<project_id>/volumes/<volume_id>")
bp.url_value_preprocessor(common.drop_project)

metadata_body = {
    "type": "object",
    "properties": {"metadata": dict(schemas.metadata, type="object")},
    "required": ["metadata"], "additionalProperties": False}
meta_body = {
    "type": "object",
    "properties": {"meta": dict(schemas.metadata, type="object")},
    "required": ["meta"], "additionalProperties": False}


def _volume_id(volume_id):
    return validation.uuid_arg(
        volume_id, lambda v: exception.VolumeNotFound(volume_id=v))


def _api():
    return common.services().metadata


@bp.get("/metadata")
def index(volume_id):
    validation.query(())
    return flask.jsonify({"metadata": _api().get(
        common.context(), _volume_id(volume_id))})


@bp.post("/metadata")
def create(volume_id):
    metadata = validation.body(metadata_body, common.max_body())["metadata"]
    return flask.jsonify({"metadata": _api().update(
        common.context(), _volume_id(volume_id), metadata)})


@bp.put("/metadata")
def update_all(volume_id):
    metadata = validation.body(metadata_body, common.max_body())["metadata"]
    return flask.jsonify({"metadata": _api().update(
        common.context(), _volume_id(volume_id), metadata, delete=True)})


@bp.get("/metadata/<key>")
def show(volume_id, key):
    validation.query(())
    value = _api().get_item(common.context(), _volume_id(volume_id), key)
    return flask.jsonify({"meta": {key: value}})


@bp.put("/metadata/<key>")
def update(volume_id, key):
    meta = validation.body(meta_body, common.max_body())["meta"]
    if len(meta) > 1:
        raise exception.InvalidInput(
            reason="Request body contains too many items")
    if key not in meta:
        raise exception.InvalidInput(reason="Request body and URI mismatch")
    _api().update(common.context(), _volume_id(volume_id), meta)
    return flask.jsonify({"meta": meta})


@bp.delete("/metadata/<key>")
def delete(volume_id, key):
    _api().delete_item(common.context(), _volume_id(volume_id), key)
    return "", 200
