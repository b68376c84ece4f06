"""/os-hypervisors: the compute hosts as nova's hypervisors API shows them.

Admin only, each route under its own upstream policy name
(``os_compute_api:os-hypervisors:list``, ``list-detail``, ``show``,
``statistics``, ``uptime``, ``search``, ``servers``). Routes and their
microversions, as nova's controller:

* ``GET /os-hypervisors`` and ``/detail``: paging with ``limit`` and
  ``marker`` from 2.33; from 2.53 ``hypervisor_hostname_pattern`` (404
  when nothing matches, 400 with paging) and ``with_servers`` replace
  the ``/{pattern}/search`` and ``/{pattern}/servers`` routes (gone:
  404), and unknown query parameters are 400;
* ``GET /os-hypervisors/{id}``: an integer id before 2.53 (anything else
  is 404), a UUID from 2.53 (anything else is 400); ``uptime`` in the
  view from 2.88, which removes ``/{id}/uptime`` and ``/statistics``;
  the uptime is an RPC call to the hypervisor's host (null in the 2.88
  view when the host is down or cannot tell).

What a hypervisor is made of here: :mod:`miniapi.compute.hypervisors`.
"""

import flask
from oslo_utils import uuidutils
from werkzeug import exceptions as wz_exceptions

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import validation
from miniapi.api.schemas import types
from miniapi.api.views import hypervisors as views
from miniapi.compute import hypervisors as hyp_api
from minicompute import exception
from ministack import exception as ms_exception

bp = flask.Blueprint("hypervisors", __name__, url_prefix="/v2.1")

UUID_FOR_ID = "2.53"
POLICY = "os_compute_api:os-hypervisors:%s"

def _list_query(version):
    if version < "2.33":
        return None
    if version < UUID_FOR_ID:
        return {"type": "object",
                "properties": {
                    "limit": types.multi_params(types.non_negative_integer),
                    "marker": types.multi_params({"type": "string"})},
                "additionalProperties": True}
    return {"type": "object",
            "properties": {
                "limit": types.single_param(types.non_negative_integer),
                "marker": types.single_param({"type": "string"}),
                "hypervisor_hostname_pattern": types.single_param(types.fqdn),
                "with_servers": types.single_param(types.boolean)},
            "additionalProperties": False}


def _show_query(version):
    if version < UUID_FOR_ID:
        return None
    return {"type": "object",
            "properties": {"with_servers": types.single_param(types.boolean)},
            "additionalProperties": False}


def _authorize(action):
    ctxt = common.context()
    common.require_admin(ctxt, POLICY % action)
    return ctxt


def _down_time():
    return flask.current_app.config["COMPUTE_API"].down_time


def _uptime(ctxt, hyp):
    """The host's uptime line, by an RPC call to it.

    :raises ComputeServiceUnavailable: the host is down.
    :raises NotImplementedError: its driver cannot tell.
    """
    return hyp_api.uptime(
        ctxt, flask.current_app.config["COMPUTE_API"].compute_rpcapi, hyp)


def _uptime_or_none(ctxt, hyp):
    """2.88's ``uptime``: None when the host is down or cannot tell (as
    upstream's view)."""
    try:
        return _uptime(ctxt, hyp)
    except (NotImplementedError, exception.ComputeServiceUnavailable):
        return None


def _not_found(hypervisor_id):
    return ms_exception.NotFound(
        message="Hypervisor with ID '%s' could not be found."
                % hypervisor_id)


def _no_match(pattern):
    return ms_exception.NotFound(
        message="No hypervisor matching '%s' could be found." % pattern)


def _get(ctxt, hypervisor_id):
    """nova's ``_validate_id`` and ``compute_node_get``."""
    by_uuid = microversion.at_least(UUID_FOR_ID)
    if by_uuid and not uuidutils.is_uuid_like(hypervisor_id):
        raise ms_exception.Invalid(message="Invalid uuid %s"
                                   % hypervisor_id)
    if not by_uuid:
        try:
            int(hypervisor_id)
        except ValueError:
            raise _not_found(hypervisor_id) from None
    hyp = hyp_api.get(ctxt, hypervisor_id if by_uuid else
                      int(hypervisor_id), by_uuid, _down_time())
    if hyp is None:
        raise _not_found(hypervisor_id)
    return hyp


def _limit():
    raw = flask.request.args.get("limit")
    if raw is None:
        return None
    try:
        limit = int(raw)
    except ValueError:
        raise ms_exception.Invalid(
            message="limit param must be an integer") from None
    if limit < 0:
        raise ms_exception.Invalid(message="limit param must be positive")
    return limit


def _list(ctxt, detail):
    version = microversion.current()
    args = flask.request.args
    pattern = args.get("hypervisor_hostname_pattern") \
        if version >= UUID_FOR_ID else None
    with_servers = common.parse_bool(args.get("with_servers"),
                                     "with_servers") \
        if version >= UUID_FOR_ID else False
    paging = version >= "2.33"
    limit = _limit() if paging else None
    max_limit = flask.current_app.config["MAX_LIMIT"]
    if pattern is not None:
        if "limit" in args or args.get("marker"):
            raise ms_exception.Invalid(
                message="Paging over hypervisors with the "
                        "hypervisor_hostname_pattern query parameter is "
                        "not supported.")
        hyps = hyp_api.search(ctxt, pattern, _down_time())
        if not hyps:
            raise _no_match(pattern)
        paging = False
    else:
        hyps = hyp_api.get_all(ctxt, _down_time())
        if paging:
            hyps = common.limit_marker(
                hyps, lambda h: str(views.hypervisor_id(h, version)),
                max_limit,
                ms_exception.Invalid(message="marker [%s] not found"
                                     % args.get("marker")))
    items = [views.hypervisor(
        h, version, detail=detail, with_servers=with_servers,
        uptime=_uptime_or_none(ctxt, h) if detail and version >= "2.88"
        else None) for h in hyps]
    body = {"hypervisors": items}
    if paging:
        links = views.next_links(items, detail, limit, max_limit)
        if links:
            body["hypervisors_links"] = links
    return flask.jsonify(body)


@bp.get("/os-hypervisors")
@validation.query(_list_query)
def index():
    return _list(_authorize("list"), detail=False)


@bp.get("/os-hypervisors/detail")
@validation.query(_list_query)
def detail():
    return _list(_authorize("list-detail"), detail=True)


@bp.get("/os-hypervisors/statistics")
@microversion.max_version("2.87")
def statistics():
    ctxt = _authorize("statistics")
    hyps = hyp_api.get_all(ctxt, _down_time())
    return flask.jsonify({"hypervisor_statistics": views.statistics(
        hyp_api.statistics(hyps))})


@bp.get("/os-hypervisors/<hypervisor_id>")
@validation.query(_show_query)
def show(hypervisor_id):
    ctxt = _authorize("show")
    version = microversion.current()
    with_servers = common.parse_bool(
        flask.request.args.get("with_servers"), "with_servers") \
        if version >= UUID_FOR_ID else False
    hyp = _get(ctxt, hypervisor_id)
    uptime = _uptime_or_none(ctxt, hyp) if version >= "2.88" else None
    return flask.jsonify({"hypervisor": views.hypervisor(
        hyp, version, detail=True, with_servers=with_servers,
        uptime=uptime)})


@bp.get("/os-hypervisors/<hypervisor_id>/uptime")
@microversion.max_version("2.87")
def uptime(hypervisor_id):
    """The host's ``uptime`` line, asked of the host: 400 when its
    service is down (nova's ComputeServiceUnavailable), 501 when its
    driver cannot tell (nova's "Feature not supported")."""
    ctxt = _authorize("uptime")
    hyp = _get(ctxt, hypervisor_id)
    try:
        value = _uptime(ctxt, hyp)
    except exception.ComputeServiceUnavailable as exc:
        raise ms_exception.Invalid(message=exc.format_message()) from exc
    except NotImplementedError:
        raise wz_exceptions.NotImplemented(
            description="Feature not supported") from None
    return flask.jsonify({"hypervisor": views.uptime(
        hyp, microversion.current(), value)})


def _by_pattern(ctxt, pattern):
    hyps = hyp_api.search(ctxt, pattern, _down_time())
    if not hyps:
        raise _no_match(pattern)
    return hyps


@bp.get("/os-hypervisors/<pattern>/search")
@microversion.max_version("2.52")
def search(pattern):
    ctxt = _authorize("search")
    version = microversion.current()
    return flask.jsonify({"hypervisors": [
        views.hypervisor(h, version) for h in _by_pattern(ctxt, pattern)]})


@bp.get("/os-hypervisors/<pattern>/servers")
@microversion.max_version("2.52")
def servers(pattern):
    """Before 2.53: each matching hypervisor with ``servers`` when it
    hosts any (the key is absent otherwise)."""
    ctxt = _authorize("servers")
    version = microversion.current()
    return flask.jsonify({"hypervisors": [
        views.hypervisor(h, version, with_servers=True)
        for h in _by_pattern(ctxt, pattern)]})
