"""``/servers/{id}/migrations[/{migration_id}]`` (2.23+): a server's
live migrations still under way (nova's server_migrations.py).

The list holds the server's live migrations that are queued,
preparing, running or post-migrating; ``show`` of another kind of move
or of one that ended is 404, as upstream. Policy
``os_compute_api:servers:migrations:index`` and ``:show``: a project
manager or an admin; the host fields are an admin's to see.
"""

import flask

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import servers
from miniapi.api.views import migrations as views
from minicompute import exception
from minicompute.db import api as db_api
from ministack import exception as ms_exception

bp = flask.Blueprint("server_migrations", __name__, url_prefix="/v2.1")

MIN_VERSION = "2.23"
POLICY = "os_compute_api:servers:migrations:%s"


def _begin(action, server_id):
    if microversion.current() < MIN_VERSION:
        raise ms_exception.NotFound(message="The resource could not be "
                                            "found.")
    ctxt = common.context()
    if not (ctxt.is_admin or "manager" in (ctxt.roles or [])):
        raise ms_exception.Forbidden(action=POLICY % action)
    return ctxt, servers.get_instance(ctxt, server_id)


@bp.get("/servers/<server_id>/migrations")
def index(server_id):
    ctxt, instance = _begin("index", server_id)
    version = microversion.current()
    rows = db_api.migration_get_in_progress_by_instance(
        ctxt, instance.uuid, migration_type="live-migration")
    return flask.jsonify({"migrations": [
        views.server_migration(r, version, ctxt.is_admin) for r in rows]})


def get_migration(ctxt, instance, migration_id):
    """The server's migration ``migration_id`` (404 when it is not the
    server's, not a live migration or no longer under way)."""
    try:
        row = db_api.migration_get(ctxt, int(migration_id))
    except (ValueError, exception.MigrationNotFound):
        row = None
    if row is None or row["instance_uuid"] != instance.uuid:
        raise ms_exception.NotFound(
            message="Migration %s not found for instance %s"
                    % (migration_id, instance.uuid))
    if row["migration_type"] != "live-migration":
        raise ms_exception.NotFound(
            message="Migration %s for server %s is not live-migration."
                    % (migration_id, instance.uuid))
    if not views.is_live_in_progress(row):
        raise ms_exception.NotFound(
            message="Live migration %s for server %s is not in progress."
                    % (migration_id, instance.uuid))
    return row


@bp.get("/servers/<server_id>/migrations/<migration_id>")
def show(server_id, migration_id):
    ctxt, instance = _begin("show", server_id)
    row = get_migration(ctxt, instance, migration_id)
    return flask.jsonify({"migration": views.server_migration(
        row, microversion.current(), ctxt.is_admin)})
