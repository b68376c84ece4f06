"""``GET /os-migrations``: every move of every server (nova's
migrations.py), newest first.

Policy ``os_compute_api:os-migrations:index``: an admin sees every
project's moves and their hosts; a project manager sees their own
project's, hosts hidden; anyone else gets 403. Filters from the start:
``host``, ``instance_uuid``, ``source_compute``, ``status``,
``migration_type`` and ``hidden``. From 2.59 unknown query parameters
are 400, the list pages with ``limit`` and ``marker`` (a migration's
uuid; ``migrations_links`` point at the next page) and filters with
``changes-since`` (and ``changes-before`` from 2.66); from 2.80
``user_id`` and ``project_id`` filter too.
"""

import flask
from oslo_utils import timeutils
from oslo_utils import uuidutils

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import validation
from miniapi.api.schemas import types
from miniapi.api.views import migrations as views
from minicompute.db import api as db_api
from ministack import exception as ms_exception

bp = flask.Blueprint("migrations", __name__, url_prefix="/v2.1")

POLICY = "os_compute_api:os-migrations:index"
_FILTERS = ("host", "instance_uuid", "source_compute", "status",
            "migration_type")


def _query_schema(version):
    if version < "2.59":
        return None
    props = {name: types.single_param({"type": "string"})
             for name in _FILTERS}
    props.update({"hidden": types.single_param(types.boolean),
                  "limit": types.single_param(types.non_negative_integer),
                  "marker": types.single_param({"type": "string"}),
                  "changes-since": types.single_param({"type": "string"})})
    if version >= "2.66":
        props["changes-before"] = types.single_param({"type": "string"})
    if version >= "2.80":
        props["user_id"] = types.single_param({"type": "string"})
        props["project_id"] = types.single_param({"type": "string"})
    return {"type": "object", "properties": props,
            "additionalProperties": False}


def _since_before(rows):
    since = common.time_param("changes-since")
    before = common.time_param("changes-before")
    if since and before and since > before:
        raise ms_exception.Invalid(
            message="The value of changes-since must be less than or "
                    "equal to changes-before.")

    def stamp(row):
        return timeutils.normalize_time(timeutils.parse_isotime(
            row["updated_at"] or row["created_at"]))
    if since:
        rows = [r for r in rows if stamp(r) >= since]
    if before:
        rows = [r for r in rows if stamp(r) <= before]
    return rows


def _filters(ctxt, version):
    args = flask.request.args
    filters = {name: args[name] for name in _FILTERS if args.get(name)}
    filters["hidden"] = common.parse_bool(args.get("hidden"), "hidden")
    if version >= "2.80":
        for name in ("user_id", "project_id"):
            if args.get(name):
                filters[name] = args[name]
    if not ctxt.is_admin:
        filters["project_id"] = ctxt.project_id
    return filters


@bp.get("/os-migrations")
@validation.query(_query_schema)
def index():
    ctxt = common.context()
    if not (ctxt.is_admin or "manager" in (ctxt.roles or [])):
        raise ms_exception.Forbidden(action=POLICY)
    version = microversion.current()
    rows = db_api.migration_get_all(ctxt, _filters(ctxt, version))
    body = {}
    if version >= "2.59":
        rows = _since_before(rows)
        marker = flask.request.args.get("marker")
        if marker and not uuidutils.is_uuid_like(marker):
            raise ms_exception.Invalid(
                message="Marker %s could not be found." % marker)
        max_limit = flask.current_app.config["MAX_LIMIT"]
        limit = flask.request.args.get("limit")
        rows = common.limit_marker(
            rows, lambda r: r["uuid"], max_limit,
            ms_exception.Invalid(message="Marker %s could not be found."
                                 % marker))
        if rows and limit is not None and len(rows) == min(int(limit),
                                                           max_limit):
            body["migrations_links"] = [{
                "rel": "next",
                "href": "%s?limit=%s&marker=%s" % (
                    flask.request.base_url, limit, rows[-1]["uuid"])}]
    body["migrations"] = [views.migration(r, version, ctxt.is_admin)
                          for r in rows]
    return flask.jsonify(body)
