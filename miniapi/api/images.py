"""/images: nova's deprecated image proxy, read-only (2.1–2.35).

From 2.36 upstream answers 404 for the proxy APIs; so do we. Handy for
``nova image-list``-era clients and for finding the guest image's id.
"""

import flask

from miniapi.api import common
from miniapi.api import microversion
from miniapi.compute import images
from minicompute import exception

bp = flask.Blueprint("images", __name__, url_prefix="/v2.1")

MAX_VERSION = "2.35"


def _check_version():
    if microversion.current() > MAX_VERSION:
        flask.abort(404)


def _image_dir():
    return flask.current_app.config["COMPUTE_API"].image_dir


def _visible():
    """The images the caller may see (its project's snapshots too)."""
    return images.list_images(common.context(), _image_dir())


#: nova's image view: Glance's status as the proxy shows it, and progress.
_STATUS = {"queued": ("SAVING", 25), "saving": ("SAVING", 50),
           "active": ("ACTIVE", 100)}
#: The properties a server's snapshot carries, shown as its metadata.
_PROPERTIES = ("instance_uuid", "image_type", "user_id", "base_image_ref")


def _view(image, detail):
    body = {"id": image["id"], "name": image.get("name"),
            "links": common.resource_links("images", image["id"])}
    if detail:
        status, progress = _STATUS.get(image.get("status", "active"),
                                       ("ERROR", 0))
        metadata = dict(image.get("properties", {}))
        metadata.update({key: image[key] for key in _PROPERTIES
                         if key in image})
        body.update({"status": status, "progress": progress,
                     "minDisk": image.get("min_disk", 0),
                     "minRam": image.get("min_ram", 0),
                     "metadata": metadata,
                     "created": image.get("created_at"),
                     "updated": image.get("updated_at"),
                     "OS-EXT-IMG-SIZE:size": image.get("size")})
    return body


@bp.get("/images")
def index():
    _check_version()
    return flask.jsonify({"images": [
        _view(i, False) for i in _visible()]})


@bp.get("/images/detail")
def detail():
    _check_version()
    return flask.jsonify({"images": [
        _view(i, True) for i in _visible()]})


@bp.get("/images/<image_id>")
def show(image_id):
    _check_version()
    image = images.find_image(common.context(), image_id, _image_dir())
    if image["id"] != image_id:
        raise exception.ImageNotFound(image_id=image_id)
    return flask.jsonify({"image": _view(image, True)})
