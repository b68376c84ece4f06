"""/servers: create, list, show, update, delete and server actions.

Every route resolves the server through :func:`get_instance`, which
answers 404 for an unknown id, a malformed id (clients look servers up by
name with a direct GET first and need 404, not 500) and a server of
another project.
"""

import flask
from oslo_utils import uuidutils

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import validation
from miniapi.api.schemas import servers as schemas
from miniapi.api.views import servers as views
from miniapi.compute import block_devices
from miniapi.compute import checks
from miniapi.compute import scheduler
from miniapi.compute import server_metadata
from minicompute import exception
from minicompute.db import api as db_api
from ministack import exception as ms_exception
from ministack import json_text

bp = flask.Blueprint("servers", __name__, url_prefix="/v2.1")

#: 2.74: ``host`` and ``hypervisor_hostname`` in the create body.
REQUESTED_DESTINATION_VERSION = "2.74"

#: 2.60: multiattach volumes may be mapped (or attached).
MULTIATTACH_VERSION = "2.60"


def compute_api():
    return flask.current_app.config["COMPUTE_API"]


def get_instance(ctxt, server_id):
    """The live server ``server_id`` visible to ``ctxt`` (404 otherwise)."""
    if not uuidutils.is_uuid_like(server_id):
        raise exception.InstanceNotFound(instance_id=server_id)
    return db_api.instance_get(ctxt, server_id)


def volume_bdms(ctxt, instance_uuid):
    """The instance's volume BDMs (root disk mappings excluded)."""
    return [b for b in db_api.bdm_get_all_by_instance(ctxt, instance_uuid)
            if b.volume_id and b.destination_type == "volume"]


def _detail(ctxt, instance, show=False):
    api = compute_api()
    status = checks.host_status(ctxt, instance.host, api.down_time) \
        if ctxt.is_admin else None
    return views.detail(instance, microversion.current(), ctxt.is_admin,
                        bdms=volume_bdms(ctxt, instance.uuid),
                        host_status=status, show=show,
                        metadata=api.get_instance_metadata(ctxt, instance))


def server_view(ctxt, instance):
    """The server as GET /servers/{id} shows it (for the actions that
    answer with the server)."""
    return _detail(ctxt, instance, show=True)


# -- list ----------------------------------------------------------------

def _list_filters(ctxt):
    args = flask.request.args
    filters = {}
    all_tenants = args.get("all_tenants")
    if all_tenants is not None and all_tenants != "":
        all_tenants = common.parse_bool(all_tenants, "all_tenants")
    elif "all_tenants" in args:
        all_tenants = True  # ?all_tenants with no value means yes upstream
    if all_tenants:
        if not ctxt.is_admin:
            raise ms_exception.Forbidden(
                action="os_compute_api:servers:index:get_all_tenants")
        filters["all_tenants"] = True
    project = args.get("project_id") or args.get("tenant_id")
    if project and ctxt.is_admin:
        filters["project_id"] = project
        filters["all_tenants"] = True
    if args.get("name"):
        filters["name"] = args["name"]
    if args.get("host") and ctxt.is_admin:
        filters["host"] = args["host"]
    return filters


def _list_instances(ctxt):
    args = flask.request.args
    if common.parse_bool(args.get("deleted"), "deleted"):
        return []  # deleted servers are not kept visible in ministack
    instances = db_api.instance_get_all(ctxt, _list_filters(ctxt))
    if args.get("status"):
        wanted = views.states_for_status(args["status"])
        instances = [i for i in instances if i.vm_state in wanted]
    for key, attr in (("image", "image_ref"),):
        if args.get(key):
            instances = [i for i in instances
                         if getattr(i, attr) == args[key]]
    if args.get("flavor"):
        instances = [i for i in instances
                     if views.flavor_of(i).get("flavorid") ==
                     args["flavor"]]
    # Newest first, as nova sorts by created_at desc by default.
    instances.sort(key=lambda i: (i.created_at, i.id), reverse=True)
    marker = args.get("marker")
    return common.limit_marker(
        instances, lambda i: i.uuid,
        flask.current_app.config["MAX_LIMIT"],
        ms_exception.Invalid(message="marker [%s] not found" % marker))


@bp.get("/servers")
@validation.query(schemas.list_query)
def index():
    """GET /servers: id, name and links of each server."""
    ctxt = common.context()
    return flask.jsonify({"servers": [
        views.summary(i) for i in _list_instances(ctxt)]})


@bp.get("/servers/detail")
@validation.query(schemas.list_query)
def detail():
    """GET /servers/detail: the full view of each server."""
    ctxt = common.context()
    return flask.jsonify({"servers": [
        _detail(ctxt, i) for i in _list_instances(ctxt)]})


# -- one server -------------------------------------------------------------

@bp.get("/servers/<server_id>")
def show(server_id):
    ctxt = common.context()
    instance = get_instance(ctxt, server_id)
    return flask.jsonify({"server": _detail(ctxt, instance, show=True)})


@bp.post("/servers")
@validation.body(schemas.create)
def create(body):
    """POST /servers: 202 with id, links and adminPass.

    Only what ministack can honour is accepted: one server per request,
    booted from a registered image or from a volume
    (``block_device_mapping_v2``: ``miniapi.compute.block_devices``),
    without networks or key pairs; the rest is refused with 400 rather
    than silently ignored.
    """
    ctxt = common.context()
    server = body["server"]
    destination = _destination(ctxt, server)
    image_ref, mappings = _image_ref(server)
    _refuse_unsupported(server)
    checks.check_metadata_quota(server.get("metadata"))
    instance, admin_pass = compute_api().create(
        ctxt, server["name"], str(server["flavorRef"]), image_ref=image_ref,
        block_device_mappings=mappings,
        multiattach_ok=microversion.at_least(MULTIATTACH_VERSION),
        description=server.get("description"),
        hostname=server.get("hostname"),
        admin_pass=server.get("adminPass"),
        metadata=server.get("metadata"),
        access_ip_v4=server.get("accessIPv4"),
        access_ip_v6=server.get("accessIPv6"),
        scheduler_hints=_scheduler_hints(body), **destination)
    response = flask.jsonify(views.create_response(instance, admin_pass))
    response.status_code = 202
    response.headers["Location"] = common.resource_url("servers",
                                                       instance.uuid)
    return response


def _destination(ctxt, server):
    """Where the request asks the server to go, as upstream's controller
    reads it: a forced host and/or node in ``availability_zone``
    (``nova:HOST``, ``nova::NODE``, ``nova:HOST:NODE``; admin only,
    policy ``os_compute_api:servers:create:forced_host``) or, from 2.74,
    ``host`` and/or ``hypervisor_hostname`` (admin only, policy
    ``compute:servers:create:requested_destination``), not both.

    :returns: the keyword arguments of the compute API's ``create``.
    :raises Forbidden: a non-admin asks for a host (403).
    :raises Invalid: an unparsable zone, or both mechanisms (400).
    """
    zone, forced_host, forced_node = scheduler.parse_availability_zone(
        server.get("availability_zone"))
    if forced_host or forced_node:
        common.require_admin(ctxt,
                             "os_compute_api:servers:create:forced_host")
    requested_host = requested_node = None
    if microversion.at_least(REQUESTED_DESTINATION_VERSION):
        requested_host = server.get("host")
        requested_node = server.get("hypervisor_hostname")
    if requested_host or requested_node:
        common.require_admin(ctxt,
                             "compute:servers:create:requested_destination")
        if forced_host or forced_node:
            raise ms_exception.Invalid(
                message="One mechanism with host and/or "
                        "hypervisor_hostname and another mechanism with "
                        "zone:host:node are mutually exclusive.")
    return {"availability_zone": zone, "forced_host": forced_host,
            "forced_node": forced_node, "requested_host": requested_host,
            "requested_node": requested_node}


def _scheduler_hints(body):
    """The request's hints, as nova's controller reads them:
    ``os:scheduler_hints`` when given (even empty), else
    ``OS-SCH-HNT:scheduler_hints``; the same at every microversion."""
    if "os:scheduler_hints" in body:
        return body["os:scheduler_hints"]
    return body.get("OS-SCH-HNT:scheduler_hints", {})


def _image_ref(server):
    """imageRef ("" when absent) and the checked block device mappings.

    With no mapping, imageRef is required (400 "Missing imageRef
    attribute"); with mappings, the boot index 0 mapping says what the
    server boots from (``block_devices.parse``).
    """
    image_ref = server.get("imageRef") or ""
    mappings = block_devices.parse(server.get("block_device_mapping_v2"),
                                   image_ref)
    if not image_ref and not mappings:
        raise ms_exception.Invalid(message="Missing imageRef attribute")
    boot = block_devices.root(mappings)
    if image_ref and boot is not None and boot["source_type"] == "image" \
            and boot["destination_type"] == "local" and \
            boot["uuid"] != image_ref:
        raise ms_exception.Invalid(
            message="imageRef and the boot image mapping differ")
    return image_ref, mappings


def _refuse_unsupported(server):
    networks = server.get("networks")
    if isinstance(networks, list) and networks:
        raise ms_exception.Invalid(
            message="Networks are not supported; use \"none\" or \"auto\".")
    if server.get("key_name"):
        raise ms_exception.Invalid(message="Invalid key_name provided.")
    for key in ("min_count", "max_count"):
        # The schema admits digit strings of any length: compare the
        # digits, never int() them (it gives up past 4300 digits).
        if str(server.get(key, 1)).lstrip("0") != "1":
            raise ms_exception.Invalid(
                message="Only one server per request is supported "
                        "(%s=%s)." % (key, json_text.shown(server[key])))


@bp.put("/servers/<server_id>")
@validation.body(schemas.update)
def update(server_id, body):
    """PUT /servers/{id}: name, accessIPv4, accessIPv6 and (2.19+)
    description."""
    ctxt = common.context()
    instance = get_instance(ctxt, server_id)
    server = body["server"]
    instance = compute_api().update(
        ctxt, instance, name=server.get("name"),
        description=server.get("description"),
        set_description="description" in server,
        access_ips=server_metadata.access_ip_values(
            server.get("accessIPv4"), server.get("accessIPv6"), server))
    return flask.jsonify({"server": _detail(ctxt, instance, show=True)})


@bp.delete("/servers/<server_id>")
def delete(server_id):
    """DELETE /servers/{id}: 204; the host detaches volumes and cleans up."""
    ctxt = common.context()
    instance = get_instance(ctxt, server_id)
    compute_api().delete(ctxt, instance)
    compute_api().delete_shelved_image(ctxt, instance)
    return "", 204


# -- actions ---------------------------------------------------------------

# name -> handler(ctxt, server_id, body) returning the response; modules
# with their own action (console_output) register with @action_handler.
ACTION_HANDLERS = {}


def action_handler(name):
    """Decorator: serve the server action ``name``."""
    def register(func):
        ACTION_HANDLERS[name] = func
        return func
    return register


@bp.post("/servers/<server_id>/action")
@validation.body(schemas.action)
def action(server_id, body):
    """POST /servers/{id}/action: dispatch on the one key of the body."""
    ctxt = common.context()
    name = next(iter(body))
    handler = ACTION_HANDLERS.get(name)
    if handler is None:
        raise ms_exception.Invalid(
            message="There is no such action: %s" % name)
    return handler(ctxt, server_id, body)


def _no_argument(name, body):
    if body[name] not in (None, {}):
        raise ms_exception.Invalid(
            message="Invalid input for field/attribute %s. Value: %r. "
                    "None or an empty object is expected." %
                    (name, body[name]))


#: for the action modules (``pause_suspend``...): their body is null or {}.
no_argument = _no_argument


@action_handler("os-stop")
def _stop(ctxt, server_id, body):
    """os-stop (202): the host powers the guest off."""
    _no_argument("os-stop", body)
    compute_api().stop(ctxt, get_instance(ctxt, server_id))
    return "", 202


@action_handler("os-start")
def _start(ctxt, server_id, body):
    """os-start (202): the host powers the guest on."""
    _no_argument("os-start", body)
    compute_api().start(ctxt, get_instance(ctxt, server_id))
    return "", 202


@action_handler("reboot")
def _reboot(ctxt, server_id, body):
    """reboot {"type": SOFT|HARD} (202); status REBOOT or HARD_REBOOT
    until the host has rebooted the guest."""
    validation.validate(body, schemas.reboot)
    instance = get_instance(ctxt, server_id)
    compute_api().reboot(ctxt, instance, body["reboot"]["type"].upper())
    return "", 202
