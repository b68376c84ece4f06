"""The ``rebuild`` server action (nova's ``ServersController._rebuild``).

``POST /servers/{id}/action {"rebuild": {"imageRef": ...}}`` answers 202
with the server (status ``REBUILD``) and its ``adminPass`` (the one
given, or a new one: nova's default ``enable_instance_password``),
``user_data`` from 2.57. Below 2.75 the server is shown without the
extended attributes (upstream's rebuild view: no ``OS-EXT-*``,
``OS-SRV-USG:*``, ``config_drive``, ``key_name``, volumes...); from
2.75 as ``GET`` shows it. From 2.93 a
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
from miniapi.compute import server_metadata
from ministack import exception as ms_exception

#: 2.93: a volume-backed server's rebuild re-images its root volume.
REIMAGE_BOOT_VOLUME_VERSION = "2.93"

#: 2.75: the rebuild answers with the whole server view, as GET.
FULL_VIEW_VERSION = "2.75"

#: What the rebuild's answer leaves out below 2.75: keys with these
#: prefixes, and these keys.
_EXTENDED_PREFIXES = ("OS-EXT-AZ:", "OS-EXT-STS:", "OS-EXT-SRV-ATTR:",
                      "OS-SRV-USG:")
_EXTENDED_KEYS = ("config_drive", "key_name", "host_status",
                  "os-extended-volumes:volumes_attached", "security_groups",
                  "server_groups")
#: ...but these from the version that shows them: key_name from 2.54 (a
#: rebuild may set it), server_groups from 2.71, as upstream.
_SHOWN_FROM = {"key_name": "2.54", "server_groups": "2.71"}


def _hidden(key):
    """Whether the rebuild's answer below 2.75 leaves ``key`` out."""
    if key.startswith(_EXTENDED_PREFIXES):
        return True
    if key not in _EXTENDED_KEYS:
        return False
    return key not in _SHOWN_FROM or \
        not microversion.at_least(_SHOWN_FROM[key])


def _view(ctxt, instance):
    view = servers.server_view(ctxt, instance)
    if not microversion.at_least(FULL_VIEW_VERSION):
        view = {key: value for key, value in view.items()
                if not _hidden(key)}
    if microversion.at_least("2.57"):
        view.pop("OS-EXT-SRV-ATTR:user_data", None)
        view["user_data"] = None
    return view


def _values(args):
    """What the request changes of the instance row."""
    values = {}
    if args.get("name") is not None:
        values["display_name"] = args["name"]
    if "description" in args:
        values["display_description"] = args["description"]
    if args.get("hostname"):
        values["hostname"] = args["hostname"]
    values.update(server_metadata.access_ip_values(
        args.get("accessIPv4"), args.get("accessIPv6"), args))
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
        values=_values(args), metadata=args.get("metadata"),
        trusted_certs=args.get("trusted_image_certificates"))
    view = _view(ctxt, instance)
    view["adminPass"] = args.get("adminPass") or secrets.token_urlsafe(9)
    response = flask.jsonify({"server": view})
    response.status_code = 202
    return response
