"""/servers/{server_id}/os-volume_attachments (nova's volume_attachments).

``{volume_id}`` in the URL is the volume id (not the BDM or the Cinder
attachment). Codes: list/show 200; POST 200 with the attachment (below
2.101, which we never reach); PUT and DELETE 202 without a body.
"""

import flask
from oslo_utils import uuidutils

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import volume_attachments as schemas
from miniapi.api.views import volume_attachments as views
from minicompute import exception
from minicompute.db import api as db_api

bp = flask.Blueprint("volume_attachments", __name__, url_prefix="/v2.1")

_BASE = "/servers/<server_id>/os-volume_attachments"


def _get_bdm(ctxt, instance, volume_id):
    """The BDM of ``volume_id`` on the instance, or 404 (not attached)."""
    if not uuidutils.is_uuid_like(volume_id):
        raise exception.VolumeBDMNotFound(volume_id=volume_id,
                                          instance_uuid=instance.uuid)
    return db_api.bdm_get_by_volume_and_instance(ctxt, volume_id,
                                                 instance.uuid)


@bp.get(_BASE)
@validation.query(schemas.index_query)
def index(server_id):
    """GET: the server's volume attachments (offset paging)."""
    ctxt = common.context()
    instance = servers.get_instance(ctxt, server_id)
    version = microversion.current()
    bdms = [b for b in servers.volume_bdms(ctxt, instance.uuid)
            if views.visible(b, version)]
    bdms = common.limit_offset(bdms, flask.current_app.config["MAX_LIMIT"])
    return flask.jsonify({"volumeAttachments": [
        views.attachment(b, instance.uuid, version) for b in bdms]})


@bp.get(_BASE + "/<volume_id>")
def show(server_id, volume_id):
    """GET one: 404 unless the volume is attached to this server."""
    ctxt = common.context()
    instance = servers.get_instance(ctxt, server_id)
    version = microversion.current()
    bdm = _get_bdm(ctxt, instance, volume_id)
    if not views.visible(bdm, version):
        raise exception.VolumeBDMNotFound(volume_id=volume_id,
                                          instance_uuid=instance.uuid)
    return flask.jsonify({"volumeAttachment": views.attachment(
        bdm, instance.uuid, version)})


@bp.post(_BASE)
@validation.body(schemas.create)
def create(server_id, body):
    """POST: attach; 200 with device, id, serverId, volumeId (+tag/dot)."""
    ctxt = common.context()
    instance = servers.get_instance(ctxt, server_id)
    version = microversion.current()
    att = body["volumeAttachment"]
    bdm = servers.compute_api().attach_volume(
        ctxt, instance, att["volumeId"], device=att.get("device"),
        tag=att.get("tag"),
        delete_on_termination=att.get("delete_on_termination", False),
        version=version)
    return flask.jsonify({"volumeAttachment": views.attachment(
        bdm, instance.uuid, version, for_create=True)})


@bp.put(_BASE + "/<volume_id>")
@validation.body(schemas.update)
def update(server_id, volume_id, body):
    """PUT: 2.85+ delete_on_termination update; below, swap (refused)."""
    ctxt = common.context()
    instance = servers.get_instance(ctxt, server_id)
    if not uuidutils.is_uuid_like(volume_id):
        raise exception.VolumeNotFound(volume_id=volume_id)
    servers.compute_api().update_volume_attachment(
        ctxt, instance, volume_id, body["volumeAttachment"],
        microversion.current())
    return "", 202


@bp.delete(_BASE + "/<volume_id>")
def delete(server_id, volume_id):
    """DELETE: detach; 202, the host unplugs and frees the volume."""
    ctxt = common.context()
    instance = servers.get_instance(ctxt, server_id)
    if not uuidutils.is_uuid_like(volume_id):
        raise exception.VolumeNotFound(volume_id=volume_id)
    servers.compute_api().check_shelved_volume_version(
        instance, "detach_volume", microversion.current())
    servers.compute_api().detach_volume(ctxt, instance, volume_id)
    return "", 202
