"""A Glance v2 subset: the registered guest images and uploaded ones.

``openstack server create --image NAME`` resolves the name through the
``image`` service of the catalog (``GET /v2/images/NAME`` -> 404, then
``GET /v2/images?name=NAME``) and shows the image afterwards, so this
serves the discovery document, the list (``name``, ``id=in:``, ``limit``,
``marker`` filters) and one image, in Glance v2's shapes. The images are
those devstack registers (``ministack.images``), and the snapshots a
shelve makes, private to their server's project.

It also creates, uploads, downloads and deletes images as Glance v2 does
(``POST /v2/images`` -> 201 ``queued``; ``PUT /v2/images/{id}/file`` ->
204, ``active`` with ``size``, ``checksum`` and ``os_hash_value``; ``GET
.../file``; ``DELETE`` -> 204), which ``openstack image create --file``
and ``openstack image delete`` use (:mod:`miniapi.image_writes`).

The miniapi daemon serves it on its own port (``[api]
image_listen_port``, Glance's 9292) behind the same ContextMiddleware as
the compute API: a caller sees the public images and its project's own
(``ministack.images.visible_to``), an admin every image.
"""

import flask

from miniapi import side_app
from miniapi.compute import images
from ministack import exception
from ministack import wsgi

bp = flask.Blueprint("image_api", __name__)

VERSION_ID = "v2.16"


def _versions():
    href = flask.request.host_url.rstrip("/") + "/v2/"
    return {"versions": [{"id": VERSION_ID, "status": "CURRENT",
                          "links": [{"rel": "self", "href": href}]}]}


@bp.get("/")
def versions():
    response = flask.jsonify(_versions())
    response.status_code = 300   # glance's multiple choices
    return response


@bp.get("/v2")
def version_v2():
    return flask.jsonify(_versions())


def _image_dir():
    return flask.current_app.config["IMAGE_DIR"]


def _view(image):
    image_id = image["id"]
    return {
        "id": image_id, "name": image.get("name"),
        "status": image.get("status", "active"),
        "visibility": image.get("visibility", "public"),
        "protected": image.get("protected", False),
        "os_hidden": image.get("os_hidden", False),
        "owner": image.get("owner"), "tags": image.get("tags", []),
        "container_format": image.get("container_format", "bare"),
        "disk_format": image.get("disk_format", "qcow2"),
        "size": image.get("size"),
        "virtual_size": image.get("virtual_size"),
        "min_disk": image.get("min_disk", 0),
        "min_ram": image.get("min_ram", 0),
        "checksum": image.get("checksum"),
        "os_hash_algo": image.get("os_hash_algo"),
        "os_hash_value": image.get("os_hash_value"),
        "created_at": image.get("created_at"),
        "updated_at": image.get("updated_at", image.get("created_at")),
        "self": "/v2/images/%s" % image_id,
        "file": "/v2/images/%s/file" % image_id,
        "schema": "/v2/schemas/image",
        # A shelve's snapshot: Glance shows its properties at top level.
        **{key: image[key] for key in _SNAPSHOT_PROPERTIES if key in image},
        # A client's extra properties (kept apart from the registry's own
        # keys, which name files on this machine).
        **image.get("properties", {}),
    }


#: The properties a server's snapshot carries (nova's create_image).
_SNAPSHOT_PROPERTIES = ("instance_uuid", "image_type", "user_id",
                        "base_image_ref")


def _visible():
    """The images this caller may see: every public one, and the private
    ones (shelve snapshots) of its project; an admin sees all."""
    return images.list_images(wsgi.get_context(flask.request), _image_dir())


def _filtered(found):
    args = flask.request.args
    if args.get("name"):
        found = [i for i in found if i.get("name") == args["name"]]
    if args.get("id"):
        wanted = args["id"]
        ids = wanted[3:].split(",") if wanted.startswith("in:") \
            else [wanted]
        found = [i for i in found if i.get("id") in ids]
    marker = args.get("marker")
    if marker:
        positions = [n for n, i in enumerate(found) if i["id"] == marker]
        if not positions:
            raise exception.Invalid(
                message="marker %s could not be found" % marker)
        found = found[positions[0] + 1:]
    if args.get("limit"):
        try:
            limit = int(args["limit"])
        except ValueError:
            raise exception.Invalid(message="limit must be an integer")
        if limit < 0:
            raise exception.Invalid(message="limit must be >= 0")
        found = found[:limit]
    return found


@bp.get("/v2/images")
def index():
    found = _filtered(_visible())
    return flask.jsonify({"images": [_view(i) for i in found],
                          "schema": "/v2/schemas/images",
                          "first": "/v2/images"})


def visible_image(image_id):
    """The image ``image_id`` if this caller may see it, else 404."""
    for image in _visible():
        if image.get("id") == image_id:
            return image
    raise exception.NotFound(
        message="No image found with ID %s" % image_id)


@bp.get("/v2/images/<image_id>")
def show(image_id):
    return flask.jsonify(_view(visible_image(image_id)))


def _domain_error(exc):
    return wsgi.fault(exc.code or 500, exc.format_message())


def _http_error(exc):
    return wsgi.fault(exc.code or 500, exc.description or exc.name)


def create_app(image_dir, auth_strategy="noauth", conf=None,
               max_request_body_size=None,
               image_size_cap=None):
    """The image WSGI app (wrapped in the context middleware).

    :param conf: the daemon's ConfigOpts; ``keystone`` validates tokens
        with its ``[keystone_authtoken]`` (as glance's pipeline does).
    :param max_request_body_size: ``[oslo_middleware]
        max_request_body_size``; oslo.middleware's default when None. The
        API reads no body, but refuses a large one as glance's pipeline
        does (413) rather than letting it be received for nothing; an
        image's data (``PUT .../file``) is limited by ``image_size_cap``
        instead (Glance's option, 1 TiB by default), as Glance limits it.
    """
    def build(limit):
        return side_app.build("miniapi.image", bp, _domain_error,
                              _http_error, auth_strategy=auth_strategy,
                              conf=conf, max_request_body_size=limit,
                              config={"IMAGE_DIR": image_dir})

    return image_writes.DataDispatcher(
        build(max_request_body_size),
        build(image_size_cap or image_writes.IMAGE_SIZE_CAP))


# The writes' routes are on this blueprint too: importing them here makes
# the blueprint whole wherever it is used.
from miniapi import image_writes  # noqa: E402
