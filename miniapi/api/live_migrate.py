"""The ``os-migrateLive`` server action (nova's migrate_server.py
``_migrate_live``): 202 with no body, admin only (upstream's default
policy ``os_compute_api:os-migrate-server:migrate_live``).

The body per microversion is ``schemas.live_migrate``'s. ``block_migration
"auto"`` (2.25+) lets the hosts decide (a block migration when the
server has a local disk). A ``host`` with ``force`` true (2.30-2.67),
or any ``host`` before 2.30, is checked directly; otherwise the scheduler
picks the destination (the named host, if any). ``force`` without a host
is a 400. An unknown host is a 400 at every microversion; the other
pre-check failures (same host, host down, no valid host, storage) are
400s below 2.34 and from 2.34 end the migration in ``error`` after a
202, as upstream's asynchronous conductor. The work is
``miniapi.compute.live_migrate``'s.
"""

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import live_migrate as schemas
from miniapi.compute import live_migrate
from minicompute import exception
from ministack import exception as ms_exception

BLOCK_AUTO_VERSION = "2.25"
FORCE_VERSION = "2.30"
ASYNC_VERSION = "2.34"
FORCE_REMOVED_VERSION = "2.68"

POLICY = "os_compute_api:os-migrate-server:migrate_live"


def _schema():
    if microversion.at_least(FORCE_REMOVED_VERSION):
        return schemas.migrate_live_v268
    if microversion.at_least(FORCE_VERSION):
        return schemas.migrate_live_v230
    if microversion.at_least(BLOCK_AUTO_VERSION):
        return schemas.migrate_live_v225
    return schemas.migrate_live


@servers.action_handler("os-migrateLive")
def migrate_live(ctxt, server_id, body):
    validation.validate(body, _schema())
    args = body["os-migrateLive"]
    block = args["block_migration"]
    block = None if block == "auto" else \
        common.parse_bool(block, "block_migration")
    host = args.get("host")
    force = None
    if "force" in args:
        force = common.parse_bool(args["force"], "force")
    if force and not host:
        raise ms_exception.Invalid(
            message="Can't force to a non-provided destination")
    instance = servers.get_instance(ctxt, server_id)
    common.require_admin(ctxt, POLICY)
    forced = bool(host) and (bool(force) or
                             not microversion.at_least(FORCE_VERSION))
    try:
        servers.compute_api().live_migrate(
            ctxt, instance, block, host=host, forced=forced,
            fail_quietly=microversion.at_least(ASYNC_VERSION))
    except exception.ComputeHostNotFound as exc:
        raise ms_exception.Invalid(message=exc.format_message()) from None
    except live_migrate.PRECHECK_ERRORS as exc:
        raise ms_exception.Invalid(message=exc.format_message()) from None
    return "", 202
