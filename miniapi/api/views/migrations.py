"""Migration views: ``os-migrations`` items and a server's live
migrations (nova's migrations.py and server_migrations.py output).

``os-migrations`` names the server ``instance_uuid`` and shows the
flavors' ids; from 2.23 ``migration_type`` and, for a live migration
still under way, ``links`` to it under its server; from 2.59 ``uuid``;
from 2.80 ``user_id`` and ``project_id``. A server's migration names the
server ``server_uuid`` and shows the memory and disk progress in bytes.
Host fields are an admin's to see. Times carry microseconds, no zone.
"""

import datetime

from miniapi.api import common
from minicompute.db import migration_records

_HOST_FIELDS = ("source_compute", "source_node", "dest_compute",
                "dest_node", "dest_host")


def _time(value):
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f")


def _common(row, version, is_admin):
    body = {"id": row["id"], "status": row["status"],
            "created_at": _time(row["created_at"]),
            "updated_at": _time(row["updated_at"])}
    for field in _HOST_FIELDS:
        body[field] = row[field] if is_admin else None
    if version >= "2.59":
        body["uuid"] = row["uuid"]
    if version >= "2.80":
        body["user_id"] = row["user_id"]
        body["project_id"] = row["project_id"]
    return body


def is_live_in_progress(row):
    return (row["migration_type"] == "live-migration"
            and row["status"] in migration_records.LIVE_IN_PROGRESS)


def migration(row, version, is_admin):
    """One ``os-migrations`` item."""
    body = _common(row, version, is_admin)
    body.update({"instance_uuid": row["instance_uuid"],
                 "old_instance_type_id": row["old_instance_type_id"],
                 "new_instance_type_id": row["new_instance_type_id"]})
    if version >= "2.23":
        body["migration_type"] = row["migration_type"]
        if is_live_in_progress(row):
            body["links"] = common.resource_links(
                "servers/%s/migrations" % row["instance_uuid"], row["id"])
    return body


def server_migration(row, version, is_admin):
    """One item of ``/servers/{id}/migrations``."""
    body = _common(row, version, is_admin)
    body["server_uuid"] = row["instance_uuid"]
    for kind in ("memory", "disk"):
        for part in ("total", "processed", "remaining"):
            body["%s_%s_bytes" % (kind, part)] = row["%s_%s" % (kind, part)]
    return body
