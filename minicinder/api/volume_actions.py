"""``POST /v3/{project_id}/volumes/{id}/action``: the legacy verbs.

The body has exactly one key, the action's name; its value is validated
against that action's schema. Codes as upstream: 202 with no body, except
os-initialize_connection (200 with ``connection_info``).
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import schemas
from minicinder.api import validation

bp = flask.Blueprint("volume_actions", __name__,
                     url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)


def _reserve(actions, ctx, volume_id, _args):
    actions.reserve(ctx, volume_id)


def _unreserve(actions, ctx, volume_id, _args):
    actions.unreserve(ctx, volume_id)


def _initialize_connection(actions, ctx, volume_id, args):
    info = actions.initialize_connection(ctx, volume_id, args["connector"])
    return {"connection_info": info}


def _terminate_connection(actions, ctx, volume_id, args):
    actions.terminate_connection(ctx, volume_id, args["connector"])


def _attach(actions, ctx, volume_id, args):
    if not args.get("instance_uuid") and not args.get("host_name"):
        raise exception.InvalidInput(
            reason="Invalid request to attach volume to an invalid target")
    actions.attach(ctx, volume_id, args["mountpoint"],
                   instance_uuid=args.get("instance_uuid"),
                   host_name=args.get("host_name"),
                   mode=args.get("mode", "rw"))


def _detach(actions, ctx, volume_id, args):
    actions.detach(ctx, volume_id, (args or {}).get("attachment_id"))


def _begin_detaching(actions, ctx, volume_id, _args):
    actions.begin_detaching(ctx, volume_id)


def _roll_detaching(actions, ctx, volume_id, _args):
    actions.roll_detaching(ctx, volume_id)


def _force_detach(actions, ctx, volume_id, args):
    args = args or {}
    actions.force_detach(ctx, volume_id, args.get("attachment_id"),
                         args.get("connector"))


def _reset_status(actions, ctx, volume_id, args):
    actions.reset_status(ctx, volume_id, args.get("status"),
                         args.get("attach_status"),
                         args.get("migration_status"))


HANDLERS = {
    "os-reserve": _reserve,
    "os-unreserve": _unreserve,
    "os-initialize_connection": _initialize_connection,
    "os-terminate_connection": _terminate_connection,
    "os-attach": _attach,
    "os-detach": _detach,
    "os-begin_detaching": _begin_detaching,
    "os-roll_detaching": _roll_detaching,
    "os-force_detach": _force_detach,
    "os-reset_status": _reset_status,
}

_envelope = {"type": "object", "minProperties": 1, "maxProperties": 1}


@bp.post("/volumes/<volume_id>/action")
def action(volume_id):
    validation.uuid_arg(volume_id, lambda v: exception.VolumeNotFound(
        volume_id=v))
    data = validation.body(_envelope, common.max_body())
    (name, args), = data.items()
    if name not in HANDLERS:
        raise exception.InvalidInput(
            reason="There is no such action: %s" % name)
    validation.validate(args, schemas.volume_actions[name])
    result = HANDLERS[name](common.services().actions, common.context(),
                            volume_id, args)
    if result is not None:
        return flask.jsonify(result)
    return "", 202
