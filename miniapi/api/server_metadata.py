"""/servers/{server_id}/metadata (nova's server_metadata.py).

A server's user metadata, ``{key: value}``: GET the set (200), POST to
merge items into it (200, the whole set after), PUT to replace it (200,
the new set); ``/metadata/{key}``: GET (200 ``{"meta": {key: value}}``),
PUT (200, the body's key must be the URL's, else 400 "Request body and
URI mismatch") and DELETE (204). A key the server does not have is a
404 "Metadata item was not found". Changes are refused with 409 while
the server is not active, paused, suspended or stopped, or has an
operation in flight; over the ``metadata_items`` quota (128) with 403.
"""

import flask

from miniapi.api import common
from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import server_metadata as schemas
from minicompute import exception
from ministack import exception as ms_exception

bp = flask.Blueprint("server_metadata", __name__, url_prefix="/v2.1")

_BASE = "/servers/<server_id>/metadata"


def _api():
    return servers.compute_api()


def _instance(server_id):
    ctxt = common.context()
    return ctxt, servers.get_instance(ctxt, server_id)


@bp.get(_BASE)
def index(server_id):
    """GET: the server's metadata."""
    ctxt, instance = _instance(server_id)
    return flask.jsonify(
        {"metadata": _api().get_instance_metadata(ctxt, instance)})


@bp.post(_BASE)
@validation.body(schemas.create)
def create(server_id, body):
    """POST: merge the items into the server's; answers the whole set."""
    ctxt, instance = _instance(server_id)
    metadata = _api().update_instance_metadata(ctxt, instance,
                                               body["metadata"])
    return flask.jsonify({"metadata": metadata})


@bp.put(_BASE)
@validation.body(schemas.update_all)
def update_all(server_id, body):
    """PUT: the body's items become the server's whole set."""
    ctxt, instance = _instance(server_id)
    metadata = _api().update_instance_metadata(
        ctxt, instance, body["metadata"], delete=True)
    return flask.jsonify({"metadata": metadata})


def _item(ctxt, instance, key):
    metadata = _api().get_instance_metadata(ctxt, instance)
    if key not in metadata:
        raise exception.MetadataItemNotFound()
    return metadata[key]


@bp.get(_BASE + "/<key>")
def show(server_id, key):
    """GET one item: ``{"meta": {key: value}}``."""
    ctxt, instance = _instance(server_id)
    return flask.jsonify({"meta": {key: _item(ctxt, instance, key)}})


@bp.put(_BASE + "/<key>")
@validation.body(schemas.update)
def update(server_id, key, body):
    """PUT one item; the body names the URL's key."""
    ctxt, instance = _instance(server_id)
    meta = body["meta"]
    if key not in meta:
        raise ms_exception.Invalid(message="Request body and URI mismatch")
    _api().update_instance_metadata(ctxt, instance, meta)
    return flask.jsonify({"meta": meta})


@bp.delete(_BASE + "/<key>")
def delete(server_id, key):
    """DELETE one item (204)."""
    ctxt, instance = _instance(server_id)
    _item(ctxt, instance, key)
    _api().delete_instance_metadata(ctxt, instance, key)
    return "", 204
