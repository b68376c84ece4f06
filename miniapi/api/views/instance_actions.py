"""Instance action views (nova's instance_actions.py controller output).

Action keys: action, instance_uuid, request_id, user_id, project_id,
start_time, message (+ updated_at from 2.58). Event keys: event,
start_time, finish_time, result, traceback (admin only); host (admin) and
hostId from 2.62; details from 2.84 (admin). Before 2.51 only admins see
the events at all.
"""

from miniapi.api import common


def action(row, version):
    body = {
        "action": row.action,
        "instance_uuid": row.instance_uuid,
        "request_id": row.request_id,
        "user_id": row.user_id,
        "project_id": row.project_id,
        "start_time": common.isotime_micro(row.start_time),
        "message": row.message,
    }
    if version >= "2.58":
        body["updated_at"] = common.isotime_micro(
            row.updated_at or row.start_time)
    return body


def event(row, version, is_admin, project_id):
    body = {
        "event": row.event,
        "start_time": common.isotime_micro(row.start_time),
        "finish_time": common.isotime_micro(row.finish_time),
        "result": row.result,
    }
    if is_admin:
        body["traceback"] = row.traceback
    if version >= "2.62":
        body["hostId"] = common.host_id(project_id, row.host)
        if is_admin:
            body["host"] = row.host
    if version >= "2.84" and is_admin:
        body["details"] = row.details
    return body


def events_visible(version, is_admin):
    """Before 2.51, events are an admin-only detail (policy ``events``)."""
    return is_admin or version >= "2.51"
