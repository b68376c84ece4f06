"""Acting on a server's running live migration (nova's
server_migrations.py ``_force_complete`` and ``delete``), admin only:

* ``POST /servers/{id}/migrations/{mid}/action {"force_complete": null}``
  (2.22): the source pauses the guest so the migration converges; the
  server must be ACTIVE and ``migrating`` (409), the migration
  ``running`` (400);
* ``DELETE /servers/{id}/migrations/{mid}`` (2.24, abort): the source
  cancels it, which ends ``cancelled`` with the server on the source;
  the server must be ``migrating`` (409), the migration ``running``
  (from 2.65 also ``queued`` or ``preparing``; else 400).

Both answer 202 with no body; a migration that is not the server's is
a 404. The casts are ``minicompute.rpcapi``'s.
"""

import flask

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import servers
from miniapi.api import validation
from miniapi.compute import checks
from minicompute import exception
from minicompute import task_states
from minicompute import vm_states
from minicompute.db import api as db_api
from ministack import exception as ms_exception

bp = flask.Blueprint("server_migration_actions", __name__,
                     url_prefix="/v2.1")

FORCE_COMPLETE_VERSION = "2.22"
ABORT_VERSION = "2.24"
ABORT_QUEUED_VERSION = "2.65"
POLICY = "os_compute_api:servers:migrations:%s"

_force_complete_body = {
    "type": "object",
    "properties": {"force_complete": {"type": "null"}},
    "required": ["force_complete"], "additionalProperties": False}


def _begin(version, action, server_id, migration_id):
    if not microversion.at_least(version):
        raise ms_exception.NotFound(message="The resource could not be "
                                            "found.")
    ctxt = common.context()
    instance = servers.get_instance(ctxt, server_id)
    common.require_admin(ctxt, POLICY % action)
    try:
        migration = db_api.migration_get(ctxt, int(migration_id))
    except (ValueError, exception.MigrationNotFound):
        migration = None
    if migration is None or migration["instance_uuid"] != instance.uuid:
        raise ms_exception.NotFound(
            message="Migration %s not found for instance %s"
                    % (migration_id, instance.uuid))
    return ctxt, instance, migration


def _check_migration(instance, migration, allowed, method):
    if migration["migration_type"] != "live-migration" or \
            migration["status"] not in allowed:
        raise exception.InvalidMigrationState(
            migration_id=migration["id"], instance_uuid=instance.uuid,
            state=migration["status"], method=method)


@bp.post("/servers/<server_id>/migrations/<migration_id>/action")
def force_complete(server_id, migration_id):
    ctxt, instance, migration = _begin(FORCE_COMPLETE_VERSION,
                                       "force_complete", server_id,
                                       migration_id)
    validation.validate(validation.request_json(), _force_complete_body)
    checks.check_instance_state(instance, "force_complete",
                                vm_state=[vm_states.ACTIVE],
                                task_state=[task_states.MIGRATING])
    _check_migration(instance, migration, ("running",), "force complete")
    servers.compute_api().compute_rpcapi.live_migration_force_complete(
        ctxt, db_api.to_dict(instance))
    return "", 202


@bp.delete("/servers/<server_id>/migrations/<migration_id>")
def abort(server_id, migration_id):
    ctxt, instance, migration = _begin(ABORT_VERSION, "delete", server_id,
                                       migration_id)
    checks.check_instance_state(instance, "abort live migration",
                                task_state=[task_states.MIGRATING])
    allowed = ("running",)
    if microversion.at_least(ABORT_QUEUED_VERSION):
        allowed = ("queued", "preparing", "running")
    _check_migration(instance, migration, allowed, "abort live migration")
    servers.compute_api().compute_rpcapi.live_migration_abort(
        ctxt, db_api.to_dict(instance), migration["id"])
    return "", 202
