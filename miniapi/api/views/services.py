"""os-services view (nova's services.py controller output).

From 2.53 ``id`` is the service UUID; before, the integer id. ``forced_down``
appears from 2.11.
"""

from miniapi.api import common


def service(row, is_up, version):
    body = {
        "id": (row.uuid or row.id) if version >= "2.53" else row.id,
        "binary": row.binary,
        "host": row.host,
        "zone": "internal" if row.topic != "compute" else "nova",
        "status": "disabled" if row.disabled else "enabled",
        "state": "up" if is_up else "down",
        "updated_at": common.isotime_micro(row.updated_at or
                                           row.last_seen_up or
                                           row.created_at),
        "disabled_reason": row.disabled_reason,
    }
    if version >= "2.11":
        body["forced_down"] = bool(row.forced_down)
    return body
