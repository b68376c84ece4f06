"""os-volumes: nova's deprecated proxy to Cinder's volumes (2.1-2.35).

``GET /os-volumes[/detail]``, ``GET/DELETE /os-volumes/{id}`` and
``POST /os-volumes`` call Cinder with the caller's token through the same
adapter the attach flow uses, and answer in nova's camelCase shape
(``displayName``, ``availabilityZone``...). From 2.36 the routes are gone
(404), as upstream: clients talk to Cinder directly. Lists page with
``limit``/``offset``, as nova's ``common.limited``.
"""

import flask

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import validation
from miniapi.api.views import volumes as views
from minicompute import exception
from ministack import exception as ms_exception
from ministack import json_text

bp = flask.Blueprint("volumes", __name__, url_prefix="/v2.1")

MAX_PROXY_VERSION = "2.35"

_CREATE = {
    "type": "object",
    "properties": {"volume": {
        "type": "object",
        "properties": {
            "volume_type": {"type": "string"},
            "metadata": {"type": "object"},
            "snapshot_id": {"type": "string"},
            "size": {"type": ["integer", "string"], "pattern": "^[0-9]+$",
                     "minimum": 1},
            "availability_zone": {"type": "string"},
            "display_name": {"type": "string"},
            "display_description": {"type": "string"},
        },
        "required": ["size"],
        "additionalProperties": False}},
    "required": ["volume"],
    "additionalProperties": False,
}


def _volume_api():
    return flask.current_app.config["COMPUTE_API"].volume_api


def _items():
    ctxt = common.context()
    volumes = common.limit_offset(_volume_api().get_all(ctxt),
                                  flask.current_app.config["MAX_LIMIT"])
    return flask.jsonify({"volumes": [views.volume(v) for v in volumes]})


@bp.get("/os-volumes")
@microversion.max_version(MAX_PROXY_VERSION)
def index():
    return _items()


@bp.route("/os-volumes/", methods=["GET", "DELETE"])
def empty_id():
    """``/os-volumes/`` names a volume with an empty id: 404, as upstream
    (not the list the app's lenient trailing slash would give)."""
    raise exception.VolumeNotFound(volume_id="")


@bp.get("/os-volumes/detail")
@microversion.max_version(MAX_PROXY_VERSION)
def detail():
    return _items()


@bp.get("/os-volumes/<volume_id>")
@microversion.max_version(MAX_PROXY_VERSION)
def show(volume_id):
    vol = _volume_api().get(common.context(), volume_id)
    return flask.jsonify({"volume": views.volume(vol)})


@bp.delete("/os-volumes/<volume_id>")
@microversion.max_version(MAX_PROXY_VERSION)
def delete(volume_id):
    """202; a volume Cinder refuses to delete (attached...) is 400."""
    _volume_api().delete(common.context(), volume_id)
    return "", 202


def _size(value):
    """The size as an int >= 1 (the schema admits any digit string)."""
    try:
        size = int(value)
    except ValueError:   # more digits than int() takes
        size = None
    if size is None or size < 1:
        raise ms_exception.Invalid(
            message="Invalid input for field/attribute size. Value: %s. "
                    "Expected an integer of at least 1."
                    % json_text.shown(value))
    return size


@bp.post("/os-volumes")
@microversion.max_version(MAX_PROXY_VERSION)
@validation.body(_CREATE)
def create(body):
    """200 with the new volume (upstream never made this a 202)."""
    vol = body["volume"]
    size = _size(vol["size"])
    if vol.get("snapshot_id"):
        # No snapshots in this lab: the named one cannot exist.
        raise exception.NotFound(
            message="Snapshot %s could not be found." % vol["snapshot_id"])
    created = _volume_api().create(
        common.context(), size, name=vol.get("display_name"),
        description=vol.get("display_description"),
        volume_type=vol.get("volume_type"), metadata=vol.get("metadata"),
        availability_zone=vol.get("availability_zone"))
    response = flask.jsonify({"volume": views.volume(created)})
    response.headers["Location"] = "%s/%s" % (
        flask.request.base_url.rstrip("/"), created["id"])
    return response
