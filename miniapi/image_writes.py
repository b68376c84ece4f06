"""The image API's writes, as Glance v2 answers them.

* ``POST /v2/images``: a record with no data, ``queued``, 201, owned by
  the caller's project (``shared`` unless ``visibility`` says otherwise;
  ``public`` is an admin's, as Glance's ``publicize_image`` policy).
  Read-only attributes are 403, reserved ones 403, a bad value 400, an
  id in use 409.
* ``PUT /v2/images/{id}/file``: its data, 204, ``active`` with ``size``,
  ``checksum`` (MD5), ``os_hash_algo`` and ``os_hash_value`` (SHA-512);
  409 unless ``queued``; only the owner (or an admin) uploads.
* ``GET /v2/images/{id}/file``: the data (``Content-MD5``), 204 when
  there is none yet.
* ``DELETE /v2/images/{id}``: 204; 404 for an image the caller cannot
  see, 403 for one it sees but does not own, or a protected one.

A client's extra properties are stored apart from the registry's own
keys (``kernel``, ``disk``...), which name files on this machine.
"""

import json
import re
import uuid

import flask

from miniapi.image_api import _image_dir
from miniapi.image_api import _view
from miniapi.image_api import bp
from miniapi.image_api import visible_image
from ministack import exception
from ministack import image_store
from ministack import images
from ministack import json_text
from ministack import wsgi

#: Glance's ``[DEFAULT] image_size_cap`` default: 1 TiB.
IMAGE_SIZE_CAP = 1099511627776

DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw",
                "qcow2", "vdi", "iso", "ploop")
CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker",
                     "compressed")
VISIBILITIES = ("public", "private", "shared", "community")
READ_ONLY = ("checksum", "created_at", "direct_url", "file", "schema",
             "self", "size", "status", "updated_at", "virtual_size",
             "os_hash_algo", "os_hash_value", "locations")
RESERVED = ("deleted", "deleted_at", "location")

_DATA_PATH = re.compile(r"^/v2/images/[^/]+/file/?$")


class DataDispatcher:
    """Route ``PUT /v2/images/{id}/file`` to the app whose body limit is
    the image size cap, every other request to the one with the API's
    body limit."""

    def __init__(self, app, data_app):
        self.app = app
        self.data_app = data_app

    def __call__(self, environ, start_response):
        if environ.get("REQUEST_METHOD") == "PUT" and \
                _DATA_PATH.match(environ.get("PATH_INFO", "")):
            return self.data_app(environ, start_response)
        return self.app(environ, start_response)


def _invalid(message):
    return exception.Invalid(message=message)


def _forbidden(message):
    return exception.Forbidden(message=message)


def _check_string(key, value, nullable=True):
    if value is None and nullable:
        return
    if not isinstance(value, str) or len(value) > 255:
        raise _invalid("Provided object does not match schema 'image': "
                       "%s is not valid for %s" % (
                           json_text.shown(value), json_text.shown(key)))


def _record(body, ctxt):
    """The new image's record from a create body (400/403 as Glance)."""
    if not isinstance(body, dict):
        raise _invalid("Body expected in request.")
    try:
        found = json_text.bad_text(body)
    except RecursionError:
        raise _invalid("Malformed request body") from None
    if found:
        raise _invalid("Invalid value %s: %s" % (
            json_text.shown(found[1]), found[2]))
    for key in body:
        if key in READ_ONLY:
            raise _forbidden("Attribute '%s' is read-only." % key)
        if key in RESERVED or key.startswith("os_glance"):
            raise _forbidden("Attribute %s is reserved." %
                             json_text.shown(key))
    body = dict(body)
    image_id = body.pop("id", None)
    if image_id is None:
        image_id = str(uuid.uuid4())
    else:
        try:
            image_id = str(uuid.UUID(str(image_id)))
        except ValueError:
            raise _invalid("Provided object does not match schema "
                           "'image': %s is not a 'uuid'" %
                           json_text.shown(image_id)) from None
    record = {"id": image_id, "owner": ctxt.project_id,
              "visibility": body.pop("visibility", "shared"),
              "properties": {}}
    if record["visibility"] not in VISIBILITIES:
        raise _invalid("Invalid visibility value: %s" %
                       json_text.shown(record["visibility"]))
    if record["visibility"] == "public" and not ctxt.is_admin:
        raise _forbidden("You are not authorized to complete "
                         "publicize_image action.")
    if "owner" in body:
        owner = body.pop("owner")
        _check_string("owner", owner)
        if owner != ctxt.project_id and not ctxt.is_admin:
            raise _forbidden("You are not permitted to create images "
                             "owned by %s." % json_text.shown(owner))
        record["owner"] = owner
    for key, allowed in (("disk_format", DISK_FORMATS),
                         ("container_format", CONTAINER_FORMATS)):
        value = body.pop(key, None)
        if value is not None and value not in allowed:
            raise _invalid("Invalid value %s for '%s'" % (
                json_text.shown(value), key))
        record[key] = value
    record["name"] = body.pop("name", None)
    _check_string("name", record["name"])
    for key in ("min_disk", "min_ram"):
        value = body.pop(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or \
                value < 0 or value > 2 ** 31 - 1:
            raise _invalid("Invalid value %s for '%s'" % (
                json_text.shown(value), key))
        record[key] = value
    for key in ("protected", "os_hidden"):
        value = body.pop(key, False)
        if not isinstance(value, bool):
            raise _invalid("Invalid value %s for '%s'" % (
                json_text.shown(value), key))
        record[key] = value
    tags = body.pop("tags", [])
    if not isinstance(tags, list):
        raise _invalid("Invalid value %s for 'tags'" % json_text.shown(tags))
    for tag in tags:
        _check_string("tags", tag, nullable=False)
    record["tags"] = sorted(set(tags))
    for key, value in body.items():
        _check_string(key, key, nullable=False)
        _check_string(key, value, nullable=False)
        record["properties"][key] = value
    return record


@bp.post("/v2/images")
def create():
    ctxt = wsgi.get_context(flask.request)
    raw = flask.request.get_data(cache=True)
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise _invalid("Malformed request body") from None
    record = image_store.create(_record(body, ctxt), _image_dir())
    response = flask.jsonify(_view(record))
    response.status_code = 201
    response.headers["Location"] = "/v2/images/%s" % record["id"]
    return response


def _owned_image(image_id, action):
    """The image if this caller may change it: 404 if it cannot see it,
    403 if it sees it but does not own it."""
    ctxt = wsgi.get_context(flask.request)
    image = visible_image(image_id)
    if not ctxt.is_admin and (ctxt.project_id is None or
                              image.get("owner") != ctxt.project_id):
        raise _forbidden("You are not permitted to %s this image." % action)
    return image


@bp.put("/v2/images/<image_id>/file")
def upload(image_id):
    content_type = flask.request.mimetype
    if content_type and content_type != "application/octet-stream":
        return wsgi.fault(415, "Content type %s is not supported for image "
                          "data" % content_type)
    _owned_image(image_id, "upload data to")
    image_store.upload(image_id, flask.request.stream, _image_dir())
    return flask.Response(status=204)


@bp.get("/v2/images/<image_id>/file")
def download(image_id):
    image = visible_image(image_id)
    path = image.get("disk")
    if not path or image.get("status", image_store.ACTIVE) != \
            image_store.ACTIVE:
        return flask.Response(status=204)
    response = flask.send_file(path, mimetype="application/octet-stream",
                               conditional=False, etag=False)
    if image.get("checksum"):
        response.headers["Content-MD5"] = image["checksum"]
    return response


@bp.delete("/v2/images/<image_id>")
def delete(image_id):
    image = _owned_image(image_id, "delete")
    if image.get("protected"):
        raise _forbidden("Image %s is protected and cannot be deleted."
                         % image_id)
    try:
        image_store.delete(image_id, _image_dir())
    except images.ImageNotFound:
        raise exception.NotFound(
            message="No image found with ID %s" % image_id) from None
    return flask.Response(status=204)
