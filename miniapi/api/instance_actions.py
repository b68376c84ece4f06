"""/servers/{server_id}/os-instance-actions[/{request_id}].

Actions stay visible after the server is deleted (nova 2.21+), so the
server is looked up including deleted rows. Newest first; from 2.58 the
list pages with ``limit``/``marker`` (a request id) and filters with
``changes-since`` (and ``changes-before`` from 2.66).
"""

import flask
from oslo_utils import uuidutils

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import validation
from miniapi.api.schemas import types
from miniapi.api.views import instance_actions as views
from minicompute import exception
from minicompute.db import api as db_api
from ministack import exception as ms_exception

bp = flask.Blueprint("instance_actions", __name__, url_prefix="/v2.1")


def _query_schema(version):
    if version < "2.58":
        return None
    props = {"limit": types.single_param(types.non_negative_integer),
             "marker": types.single_param({"type": "string"}),
             "changes-since": types.single_param({"type": "string"})}
    if version >= "2.66":
        props["changes-before"] = types.single_param({"type": "string"})
    return {"type": "object", "properties": props,
            "additionalProperties": False}


def _instance(ctxt, server_id):
    if not uuidutils.is_uuid_like(server_id):
        raise exception.InstanceNotFound(instance_id=server_id)
    return db_api.instance_get_including_deleted(ctxt, server_id)


@bp.get("/servers/<server_id>/os-instance-actions")
@validation.query(_query_schema)
def index(server_id):
    ctxt = common.context()
    instance = _instance(ctxt, server_id)
    version = microversion.current()
    actions = db_api.action_get_all(ctxt, instance.uuid)
    if version >= "2.58":
        since = common.time_param("changes-since")
        before = common.time_param("changes-before")
        if since and before and since > before:
            raise ms_exception.Invalid(
                message="The value of changes-since must be less than or "
                        "equal to changes-before.")
        if since:
            actions = [a for a in actions
                       if (a.updated_at or a.start_time) >= since]
        if before:
            actions = [a for a in actions
                       if (a.updated_at or a.start_time) <= before]
        marker = flask.request.args.get("marker")
        actions = common.limit_marker(
            actions, lambda a: a.request_id,
            flask.current_app.config["MAX_LIMIT"],
            ms_exception.Invalid(message="Marker %s could not be found."
                                 % marker))
    return flask.jsonify({"instanceActions": [
        views.action(a, version) for a in actions]})


@bp.get("/servers/<server_id>/os-instance-actions/<request_id>")
def show(server_id, request_id):
    ctxt = common.context()
    instance = _instance(ctxt, server_id)
    version = microversion.current()
    try:
        action = db_api.action_get_by_request_id(ctxt, instance.uuid,
                                                 request_id)
    except exception.InstanceActionNotFound:
        raise ms_exception.NotFound(
            message="Action %s not found" % request_id) from None
    body = views.action(action, version)
    if views.events_visible(version, ctxt.is_admin):
        body["events"] = [
            views.event(e, version, ctxt.is_admin, instance.project_id)
            for e in db_api.action_events_get(ctxt, action.id)]
    return flask.jsonify({"instanceAction": body})
