"""Helpers shared by the blueprints: context, links, time formats, paging."""

import hashlib

import flask
from oslo_utils import timeutils

from ministack import exception
from ministack import wsgi

ISO_Z = "%Y-%m-%dT%H:%M:%SZ"


def context():
    """The RequestContext built by the middleware for this request."""
    return wsgi.get_context(flask.request)


def require_admin(ctxt, action):
    """403 for a non-admin, naming the upstream policy ``action``."""
    if not ctxt.is_admin:
        raise exception.Forbidden(action=action)


def isotime(value):
    """Servers and flavors show second precision with a Z (upstream)."""
    return value.strftime(ISO_Z) if value else None


def isotime_micro(value):
    """Instance actions show microseconds and no zone (upstream)."""
    return value.isoformat() if value else None


def _base():
    return flask.request.host_url.rstrip("/")


def _project_segment():
    # Legacy URLs carry the project; links then keep it, as nova does.
    project = flask.g.get("url_project_id")
    return "/%s" % project if project else ""


def resource_links(collection, resource_id):
    """``self`` (versioned) and ``bookmark`` (unversioned) links."""
    tail = "%s/%s/%s" % (_project_segment(), collection, resource_id)
    return [{"rel": "self", "href": "%s/v2.1%s" % (_base(), tail)},
            {"rel": "bookmark", "href": "%s%s" % (_base(), tail)}]


def resource_url(collection, resource_id):
    return "%s/v2.1%s/%s/%s" % (_base(), _project_segment(), collection,
                                resource_id)


def host_id(project_id, host):
    """An opaque per-project host identifier, as nova's ``hostId``."""
    if not host:
        return ""
    return hashlib.sha224(("%s%s" % (project_id, host)).encode()).hexdigest()


def parse_bool(value, name):
    """Query booleans arrive as True/False (SDK) or 1/0 (cinderclient)."""
    if value is None:
        return False
    lowered = str(value).strip().lower()
    if lowered in ("1", "true", "t", "yes", "y", "on"):
        return True
    if lowered in ("0", "false", "f", "no", "n", "off", "none", ""):
        return False
    raise exception.Invalid(
        message="Invalid value '%s' for the '%s' query parameter."
                % (value, name))


def limit_offset(items, max_limit):
    """Slice ``items`` by ``?limit=&offset=`` (offset paging)."""
    try:
        offset = int(flask.request.args.get("offset", 0))
        limit = int(flask.request.args.get("limit", max_limit))
    except ValueError:
        raise exception.Invalid(
            message="limit and offset must be integers") from None
    if offset < 0 or limit < 0:
        raise exception.Invalid(
            message="limit and offset must be >= 0")
    limit = min(limit, max_limit)
    return items[offset:offset + limit]


def limit_marker(items, key, max_limit, marker_error):
    """Slice ``items`` by ``?limit=&marker=`` (marker paging).

    :param key: function giving an item's marker value.
    :param marker_error: exception raised for an unknown marker (400).
    """
    marker = flask.request.args.get("marker")
    try:
        limit = int(flask.request.args.get("limit", max_limit))
    except ValueError:
        raise exception.Invalid(message="limit must be an integer") from None
    if limit < 0:
        raise exception.Invalid(message="limit must be >= 0")
    limit = min(limit, max_limit)
    if marker:
        for index, item in enumerate(items):
            if key(item) == marker:
                items = items[index + 1:]
                break
        else:
            raise marker_error
    return items[:limit]


def time_param(name):
    """The query's time ``name`` (``changes-since``...), naive UTC, or
    None; 400 for a value that is no ISO 8601 time."""
    value = flask.request.args.get(name)
    if not value:
        return None
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(value))
    except ValueError:
        raise exception.Invalid(
            message="Invalid input for query parameters %s. Value: %s."
                    % (name, value)) from None
