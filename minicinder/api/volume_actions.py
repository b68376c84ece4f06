"""``POST /v3/{project_id}/volumes/{id}/action``: the legacy verbs.

The body has exactly one key, the action's name; its value is validated
against that action's schema. Codes as upstream: 202 with no body, except
os-initialize_connection (200 with ``connection_info``), the image
metadata actions (200, with the ``metadata`` but for unset) and
os-set_bootable (200, no body).
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import microversions as mv
from minicinder.api import schemas
from minicinder.api import validation
from minicinder.volume import api as volume_api
from minicinder.volume import image as volume_image

bp = flask.Blueprint("volume_actions", __name__,
                     url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)


def _reserve(svc, ctx, volume_id, _args):
    svc.actions.reserve(ctx, volume_id)


def _unreserve(svc, ctx, volume_id, _args):
    svc.actions.unreserve(ctx, volume_id)


def _initialize_connection(svc, ctx, volume_id, args):
    info = svc.actions.initialize_connection(ctx, volume_id,
                                             args["connector"])
    return {"connection_info": info}


def _terminate_connection(svc, ctx, volume_id, args):
    svc.actions.terminate_connection(ctx, volume_id, args["connector"])


def _attach(svc, ctx, volume_id, args):
    if not args.get("instance_uuid") and not args.get("host_name"):
        raise exception.InvalidInput(
            reason="Invalid request to attach volume to an invalid target")
    svc.actions.attach(ctx, volume_id, args["mountpoint"],
                       instance_uuid=args.get("instance_uuid"),
                       host_name=args.get("host_name"),
                       mode=args.get("mode", "rw"))


def _detach(svc, ctx, volume_id, args):
    svc.actions.detach(ctx, volume_id, (args or {}).get("attachment_id"))


def _begin_detaching(svc, ctx, volume_id, _args):
    svc.actions.begin_detaching(ctx, volume_id)


def _roll_detaching(svc, ctx, volume_id, _args):
    svc.actions.roll_detaching(ctx, volume_id)


def _force_detach(svc, ctx, volume_id, args):
    args = args or {}
    svc.actions.force_detach(ctx, volume_id, args.get("attachment_id"),
                             args.get("connector"))


def _reset_status(svc, ctx, volume_id, args):
    svc.actions.reset_status(ctx, volume_id, args.get("status"),
                             args.get("attach_status"),
                             args.get("migration_status"))


def _force_delete(svc, ctx, volume_id, _args):
    volume_api.require_admin(
        ctx, "volume_extension:volume_admin_actions:force_delete")
    svc.volumes.delete(ctx, volume_id, force=True)


def _extend(svc, ctx, volume_id, args):
    # The schema lets a string of digits of any length through; one too
    # long to be a size is refused before int() (which gives up past
    # 4300 digits).
    digits = str(args["new_size"]).lstrip("0") or "0"
    if len(digits) > len(str(schemas.volume_size["maximum"])):
        raise exception.InvalidInput(
            reason="New size for extend must be an integer of at most %s."
            % schemas.volume_size["maximum"])
    # 3.42: an in-use volume grows too (nova is told to resize the disk
    # in the guest); below it only an available one.
    svc.volumes.extend(ctx, volume_id, int(digits),
                       attached=common.version().matches(
                           mv.VOLUME_EXTEND_INUSE))


def _reimage(svc, ctx, volume_id, args):
    # An unknown image is a 404, as upstream's image service answers.
    image = volume_image.get(svc.conf, ctx, args["image_id"])
    svc.reimager.reimage(ctx, volume_id, image, validation.boolean(
        args.get("reimage_reserved", False), "reimage_reserved"))


def _extend_volume_completion(svc, ctx, volume_id, args):
    svc.volumes.extend_volume_completion(
        ctx, volume_id, validation.boolean((args or {}).get("error") or
                                           False, "error"))


def _retype(svc, ctx, volume_id, args):
    svc.volumes.retype(ctx, volume_id, args["new_type"],
                       args.get("migration_policy") or "never")


def _set_bootable(svc, ctx, volume_id, args):
    svc.metadata.set_bootable(
        ctx, volume_id, validation.boolean(args["bootable"], "bootable"))


def _update_readonly_flag(svc, ctx, volume_id, args):
    svc.metadata.set_readonly(
        ctx, volume_id, validation.boolean(args["readonly"], "readonly"))


def _set_image_metadata(svc, ctx, volume_id, args):
    return {"metadata": svc.metadata.image_metadata_update(
        ctx, volume_id, args["metadata"])}


def _show_image_metadata(svc, ctx, volume_id, _args):
    return {"metadata": svc.metadata.image_metadata_get(ctx, volume_id)}


def _unset_image_metadata(svc, ctx, volume_id, args):
    svc.metadata.image_metadata_delete(ctx, volume_id, args["key"])


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
    "os-force_delete": _force_delete,
    "os-extend": _extend,
    "os-extend_volume_completion": _extend_volume_completion,
    "os-retype": _retype,
    "os-set_bootable": _set_bootable,
    "os-update_readonly_flag": _update_readonly_flag,
    "os-set_image_metadata": _set_image_metadata,
    "os-show_image_metadata": _show_image_metadata,
    "os-unset_image_metadata": _unset_image_metadata,
    "os-reimage": _reimage,
}
# Actions that exist only from a microversion on.
MIN_VERSIONS = {"os-extend_volume_completion": mv.EXTEND_VOLUME_COMPLETION,
                "os-reimage": mv.SUPPORT_REIMAGE_VOLUME}
# Status of an action answered without a body (202 unless named).
EMPTY_STATUS = {"os-set_bootable": 200, "os-unset_image_metadata": 200}

_envelope = {"type": "object", "minProperties": 1, "maxProperties": 1}


@bp.post("/volumes/<volume_id>/action")
def action(volume_id):
    validation.uuid_arg(volume_id, lambda v: exception.VolumeNotFound(
        volume_id=v))
    data = validation.body(_envelope, common.max_body())
    (name, args), = data.items()
    if name not in HANDLERS or (name in MIN_VERSIONS and not
                                common.version().matches(
                                    MIN_VERSIONS[name])):
        raise exception.InvalidInput(
            reason="There is no such action: %s" % name)
    validation.validate(args, schemas.volume_actions[name])
    result = HANDLERS[name](common.services(), common.context(),
                            volume_id, args)
    if result is not None:
        return flask.jsonify(result)
    return "", EMPTY_STATUS.get(name, 202)
