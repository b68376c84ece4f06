"""``/v3/{project_id}/attachments`` (3.27+; os-complete 3.44; mode 3.54).

Status codes are upstream's: POST 200 (not 201), DELETE 200 with the
volume's remaining attachments, os-complete 204. Every response shows the
state *after* the change (upstream's PUT returns a stale copy; see
``minicinder/README.md``, "Deviations from upstream").
"""

import flask

from minicinder import exception
from minicinder.api import common
from minicinder.api import microversions as mv
from minicinder.api import schemas
from minicinder.api import validation
from minicinder.api import views

bp = flask.Blueprint("attachments", __name__, url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)

LIST_PARAMS = ("volume_id", "instance_id", "all_tenants", "status",
               "attach_status", "project_id", "limit", "marker", "sort",
               "sort_key", "sort_dir")


@bp.before_request
def _at_least_new_attach():
    common.require_version(mv.NEW_ATTACH)


def _not_found(attachment_id):
    return exception.VolumeAttachmentNotFound(attachment_id=attachment_id)


@bp.post("/attachments")
def create():
    """Reserve (no connector) or reserve-and-connect (with one)."""
    with_mode = common.version().matches(mv.ATTACHMENT_CREATE_MODE_ARG)
    schema = (schemas.attachment_create_v354 if with_mode
              else schemas.attachment_create)
    data = validation.body(schema, common.max_body())["attachment"]
    attachment = common.services().attachments.create(
        common.context(), data["volume_uuid"],
        instance_uuid=data.get("instance_uuid"),
        connector=data.get("connector") or None,
        attach_mode=data.get("mode"))
    return flask.jsonify({"attachment": views.attachment_detail(attachment)})


def _list(detail):
    ctx = common.context()
    params = validation.query(LIST_PARAMS)
    page = validation.paging(params)
    all_tenants = validation.boolean(params.pop("all_tenants", False),
                                     "all_tenants")
    for key in ("sort", "sort_key", "sort_dir"):
        params.pop(key, None)   # newest first, always
    if "status" in params:
        # Upstream matches no column here and returns []; mean it.
        params["attach_status"] = params.pop("status")
    if "project_id" in params and not (ctx.is_admin and all_tenants):
        raise exception.InvalidInput(
            reason="project_id is only valid with all_tenants for admins")
    attachments = common.services().attachments.get_all(
        ctx, params, all_tenants, **page)
    return flask.jsonify(views.attachment_list(attachments, detail,
                                               page.get("limit")))


@bp.get("/attachments")
def index():
    return _list(detail=False)


@bp.get("/attachments/detail")
def detail():
    return _list(detail=True)


@bp.get("/attachments/<attachment_id>")
def show(attachment_id):
    validation.query(())
    validation.uuid_arg(attachment_id, _not_found)
    attachment = common.services().attachments.get(common.context(),
                                                   attachment_id)
    return flask.jsonify({"attachment": views.attachment_detail(attachment)})


@bp.put("/attachments/<attachment_id>")
def update(attachment_id):
    """Send the connector; answers with ``connection_info``."""
    validation.uuid_arg(attachment_id, _not_found)
    data = validation.body(schemas.attachment_update, common.max_body())
    attachment = common.services().attachments.update(
        common.context(), attachment_id, data["attachment"]["connector"])
    return flask.jsonify({"attachment": views.attachment_detail(attachment)})


@bp.delete("/attachments/<attachment_id>")
def delete(attachment_id):
    validation.uuid_arg(attachment_id, _not_found)
    remaining = common.services().attachments.delete(common.context(),
                                                     attachment_id)
    return flask.jsonify(views.attachment_list(remaining, detail=False))


@bp.post("/attachments/<attachment_id>/action")
def action(attachment_id):
    """Only ``os-complete`` (3.44+), answered with 204 and no body."""
    common.require_version(mv.NEW_ATTACH_COMPLETION)
    validation.uuid_arg(attachment_id, _not_found)
    validation.body(schemas.attachment_complete, common.max_body())
    common.services().attachments.complete(common.context(), attachment_id)
    return "", 204
