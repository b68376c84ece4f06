"""os-volumes views (nova's ``_translate_volume_summary_view``).

The volume comes from ``minicompute.volume.cinder`` in nova's internal
shape (``attachments`` keyed by instance uuid). Summary and detail are
the same view upstream. A volume without attachments shows
``"attachments": [{}]``: one empty object, not an empty list (upstream's
long-standing quirk, which tempest's schema allows for).
"""


def attachment(volume_id, instance_uuid, mountpoint):
    body = {"id": volume_id, "volumeId": volume_id,
            "serverId": instance_uuid}
    if mountpoint:
        body["device"] = mountpoint
    return body


def volume(vol):
    attachments = vol.get("attachments") or {}
    if vol.get("attach_status") == "attached" and attachments:
        shown = [attachment(vol["id"], uuid, att.get("mountpoint"))
                 for uuid, att in attachments.items()]
    else:
        shown = [{}]
    return {
        "id": vol["id"],
        "status": vol["status"],
        "size": vol["size"],
        "availabilityZone": vol.get("availability_zone") or "",
        "createdAt": vol.get("created_at"),
        "attachments": shown,
        "displayName": vol.get("display_name", vol.get("name")),
        "displayDescription": vol.get("description"),
        "volumeType": vol.get("volume_type"),
        "snapshotId": vol.get("snapshot_id"),
        "metadata": dict(vol.get("metadata") or {}),
    }
