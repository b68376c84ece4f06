"""The ``migrate`` server action: a cold migration (nova's
``migrate_server.py`` ``_migrate``), 202.

Admin only, as upstream's default ``os_compute_api:os-migrate-server:
migrate`` (and ``migrate:host`` for a named host). Below 2.56 the body
is not read; from 2.56 it may name the destination ``host``. The
checks, the scheduling and the casts are ``miniapi.compute.resize``'s
(a cold migration is a resize that keeps the flavor).
"""

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import resize as schemas

#: 2.56: ``migrate`` takes a destination host.
HOST_VERSION = "2.56"


@servers.action_handler("migrate")
def migrate(ctxt, server_id, body):
    host = None
    if microversion.at_least(HOST_VERSION):
        validation.validate(body, schemas.migrate_v256)
        host = (body["migrate"] or {}).get("host")
    instance = servers.get_instance(ctxt, server_id)
    common.require_admin(ctxt, "os_compute_api:os-migrate-server:migrate")
    servers.compute_api().resize(ctxt, instance, host=host)
    return "", 202
