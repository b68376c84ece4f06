"""The ``rebuild`` server action (nova's ``ServersController._rebuild``).

``POST /servers/{id}/action {"rebuild": {"imageRef": ...}}`` answers 202
with the server as ``GET`` shows it (status ``REBUILD``) and its
``adminPass`` (the one given, or a new one: nova's default
``enable_instance_password``), ``user_data`` from 2.57. From 2.93 a
volume-backed server is rebuilt too: its root volume is re-imaged
(``miniapi.compute.rebuild``); below, only with the image it has.
"""

import secrets

import flask

from miniapi.api import microversion
from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import rebuild as schemas
from miniapi.compute import checks
from ministack import exception as ms_exception

#: 2.93: a volume-backed server's rebuild re-images its root volume.
REIMAGE_BOOT_VOLUME_VERSION = "2.93"


def _values(args):
    """What the request changes of the instance row."""
    values = {}
    if args.get("name") is not None:
        values["display_name"] = args["name"]
    if "description" in args:
        values["display_description"] = args["description"]
    if args.get("hostname"):
        values["hostname"] = args["hostname"]
    return values


@servers.action_handler("rebuild")
def rebuild(ctxt, server_id, body):
    """202 ``{"server": {...}}``."""
    validation.validate(body, schemas.rebuild(microversion.current()))
    args = body["rebuild"]
    instance = servers.get_instance(ctxt, server_id)
    if args.get("key_name"):
        raise ms_exception.Invalid(message="Invalid key_name provided.")
    checks.check_metadata_quota(args.get("metadata"))
    instance = servers.compute_api().rebuild(
        ctxt, instance, args["imageRef"],
        reimage_boot_volume=microversion.at_least(
            REIMAGE_BOOT_VOLUME_VERSION),
        values=_values(args),
        trusted_certs=args.get("trusted_image_certificates"))
    view = servers.server_view(ctxt, instance)
    if microversion.at_least("2.57"):
        view.pop("OS-EXT-SRV-ATTR:user_data", None)
        view["user_data"] = None
    view["adminPass"] = args.get("adminPass") or secrets.token_urlsafe(9)
    response = flask.jsonify({"server": view})
    response.status_code = 202
    return response
