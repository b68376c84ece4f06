"""JSON views of volumes, attachments and types, shaped as upstream's
(``cinder/api/v3/views``), including the per-microversion fields."""

import functools
import json

import flask
import werkzeug.sansio.utils

from minicinder.api import microversions as mv
from minicinder.volume import metadata as volume_metadata
from minicinder.volume import states

# Extra specs a non-admin may see (upstream's user-visible keys).
USER_VISIBLE_SPECS = ("multiattach", "RESKEY:availability_zones",
                      "replication_enabled")


def timestamp(value):
    """Upstream renders naive UTC datetimes with microseconds.

    ``isoformat`` makes the same text several times faster than
    ``strftime`` for a naive datetime of a four-digit year (every row's);
    anything else keeps ``strftime``'s rendering.
    """
    if not value:
        return None
    if getattr(value, "tzinfo", False) is None and value.year >= 1000:
        return value.isoformat(timespec="microseconds")
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f")


@functools.lru_cache(maxsize=256)
def _host_url(scheme, host):
    """``request.host_url`` (IRI decoding included), memoised: it is the
    same few values on every request and cost more than the rest of
    ``_links``. ``host`` is already validated by werkzeug."""
    return werkzeug.sansio.utils.get_current_url(scheme, host).rstrip("/")


def links(project_id, collection, item_id):
    request = flask.request
    base = _host_url(request.scheme, request.host)
    return [{"href": "%s/v3/%s/%s/%s" % (base, project_id, collection,
                                         item_id), "rel": "self"},
            {"href": "%s/%s/%s/%s" % (base, project_id, collection,
                                      item_id), "rel": "bookmark"}]


# --- volumes ---


def volume_summary(volume):
    return {"id": volume.id, "name": volume.display_name,
            "links": links(volume.project_id, "volumes", volume.id)}


def volume_attachments(volume, ctx):
    """Only *attached* attachments are listed; ``id`` is the volume id and
    ``host_name`` is hidden from non-admins (bug 1740950)."""
    privileged = ctx.is_admin or "service" in (ctx.roles or [])
    return [{"id": volume.id, "attachment_id": a.id,
             "volume_id": volume.id, "server_id": a.instance_uuid,
             "host_name": a.attached_host if privileged else None,
             "device": a.mountpoint,
             "attached_at": timestamp(a.attach_time)}
            for a in sorted(volume.volume_attachment,
                            key=lambda a: a.created_at)
            if a.attach_status == states.ATT_ATTACHED]


def volume_detail(volume, ctx, version, extended=True):
    """A volume as upstream's detail view builder renders it.

    :param extended: add the attributes upstream's volume extensions add
        to ``show`` and ``detail`` (but not to ``create`` or ``update``):
        ``os-vol-tenant-attr:tenant_id`` for everyone,
        ``volume_image_metadata`` for a volume made from an image, the
        host and migration attributes for admins.
    """
    view = {
        "id": volume.id,
        "status": volume.status,
        "size": volume.size,
        "availability_zone": volume.availability_zone,
        "created_at": timestamp(volume.created_at),
        "updated_at": timestamp(volume.updated_at),
        "name": volume.display_name,
        "description": volume.display_description,
        "volume_type": volume.volume_type.name if volume.volume_type
        else None,
        "snapshot_id": volume.snapshot_id,
        "source_volid": volume.source_volid,
        "metadata": volume_metadata.visible_metadata(volume),
        "links": links(volume.project_id, "volumes", volume.id),
        "user_id": volume.user_id,
        "bootable": str(bool(volume.bootable)).lower(),
        "encrypted": bool(volume.encryption_key_id),
        "replication_status": volume.replication_status,
        "consistencygroup_id": volume.consistencygroup_id,
        "multiattach": bool(volume.multiattach),
        "attachments": volume_attachments(volume, ctx),
    }
    if ctx.is_admin:
        view["migration_status"] = volume.migration_status
    if extended:
        view["os-vol-tenant-attr:tenant_id"] = volume.project_id
    image_metadata = {item.key: item.value
                      for item in volume.volume_glance_metadata}
    if extended and image_metadata:
        view["volume_image_metadata"] = image_metadata
    if extended and ctx.is_admin:
        view["os-vol-host-attr:host"] = volume.host
        view["os-vol-mig-status-attr:migstat"] = volume.migration_status
        view["os-vol-mig-status-attr:name_id"] = None
    if version.matches(mv.GROUP_VOLUME):
        view["group_id"] = volume.group_id
    if ctx.is_admin and version.matches(mv.VOLUME_DETAIL_PROVIDER_ID):
        view["provider_id"] = volume.provider_id
    if version.matches(mv.VOLUME_SHARED_TARGETS_AND_SERVICE_FIELDS):
        view["shared_targets"] = _shared_targets(volume, version)
        view["service_uuid"] = volume.service_uuid
    if ctx.is_admin and version.matches(mv.VOLUME_CLUSTER_NAME):
        view["cluster_name"] = volume.cluster_name
    if version.matches(mv.VOLUME_TYPE_ID_IN_VOLUME_DETAIL):
        view["volume_type_id"] = volume.volume_type_id
    if version.matches(mv.ENCRYPTION_KEY_ID_IN_DETAILS) and \
            volume.encryption_key_id:
        view["encryption_key_id"] = volume.encryption_key_id
    if version.matches(mv.USE_QUOTA):
        view["consumes_quota"] = bool(volume.use_quota)
    return view


def _shared_targets(volume, version):
    """A tristate from 3.69 (null: lock whatever the initiator); before,
    upstream shows an unknown (null) value as true."""
    shared = volume.shared_targets
    if shared is None:
        return None if version.matches(mv.SHARED_TARGETS_TRISTATE) else True
    return bool(shared)


def volume_list(volumes, ctx, version, detail, limit=None):
    render = ((lambda v: volume_detail(v, ctx, version)) if detail
              else volume_summary)
    body = {"volumes": [render(v) for v in volumes]}
    _next_link(body, "volumes", volumes, limit, detail)
    return body


def next_link(body, collection, items, limit):
    """``<collection>_links`` (a ``next`` link) when a page is full."""
    _next_link(body, collection, items, limit, True)


def _next_link(body, collection, items, limit, detail):
    """``<collection>_links`` when a page is full, so the SDK asks again."""
    if limit and len(items) == limit:
        url = flask.request.base_url
        args = flask.request.args.to_dict()
        args["marker"] = items[-1].id
        query = "&".join("%s=%s" % kv for kv in sorted(args.items()))
        body["%s_links" % collection] = [{"rel": "next",
                                          "href": "%s?%s" % (url, query)}]


# --- attachments ---


def attachment_summary(attachment):
    return {"id": attachment.id, "status": attachment.attach_status,
            "instance": attachment.instance_uuid,
            "volume_id": attachment.volume_id}


def attachment_detail(attachment):
    """Unset times are ``""`` (not null) and connection_info ``{}`` until
    the attachment is connected, exactly as upstream renders them."""
    view = attachment_summary(attachment)
    view.update({
        "attached_at": timestamp(attachment.attach_time) or "",
        "detached_at": timestamp(attachment.detach_time) or "",
        "attach_mode": attachment.attach_mode,
        "connection_info": json.loads(attachment.connection_info)
        if attachment.connection_info else {},
    })
    return view


def attachment_list(attachments, detail, limit=None):
    render = attachment_detail if detail else attachment_summary
    body = {"attachments": [render(a) for a in attachments]}
    _next_link(body, "attachments", attachments, limit, detail)
    return body


# --- volume types ---


def type_extra_specs(vtype, ctx):
    """Every spec for admins, the user-visible ones for others."""
    specs = {spec.key: spec.value for spec in vtype.extra_specs}
    if not ctx.is_admin:
        specs = {k: v for k, v in specs.items() if k in USER_VISIBLE_SPECS}
    return specs


def volume_type(vtype, ctx, action="show"):
    """A volume type as upstream renders it for ``action``: ``show``
    (also each item of the list) adds ``qos_specs_id`` for admins and the
    type-access extension's ``os-volume-type-access:is_public``;
    ``create`` has that extension's key but no ``qos_specs_id``;
    ``update`` has neither."""
    view = {"id": vtype.id, "name": vtype.name,
            "is_public": bool(vtype.is_public),
            "description": vtype.description,
            "extra_specs": type_extra_specs(vtype, ctx)}
    if action in ("show", "create"):
        view["os-volume-type-access:is_public"] = bool(vtype.is_public)
    if action == "show" and ctx.is_admin:
        view["qos_specs_id"] = vtype.qos_specs_id
    return view
