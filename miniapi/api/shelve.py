"""The ``shelve``, ``shelveOffload`` and ``unshelve`` server actions
(nova's ``shelve.py`` controller), all 202 with no body.

Policies as upstream's defaults: shelve and unshelve for the server's
project (or an admin), ``shelveOffload`` and unshelve to a given host
(2.91) for admins only. The states, the scheduling and the casts are
``miniapi.compute.shelve``'s.
"""

from miniapi.api import common
from miniapi.api import microversion
from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import shelve as schemas

#: 2.77: unshelve takes an availability zone.
AZ_VERSION = "2.77"

#: 2.91: unshelve takes a host, and a null zone to unpin.
HOST_VERSION = "2.91"


@servers.action_handler("shelve")
def shelve(ctxt, server_id, body):
    validation.validate(body, schemas.shelve)
    instance = servers.get_instance(ctxt, server_id)
    servers.compute_api().shelve(ctxt, instance)
    return "", 202


@servers.action_handler("shelveOffload")
def shelve_offload(ctxt, server_id, body):
    validation.validate(body, schemas.shelve_offload)
    instance = servers.get_instance(ctxt, server_id)
    common.require_admin(ctxt, "os_compute_api:os-shelve:shelve_offload")
    servers.compute_api().shelve_offload(ctxt, instance)
    return "", 202


@servers.action_handler("unshelve")
def unshelve(ctxt, server_id, body):
    kwargs = {}
    if microversion.at_least(HOST_VERSION):
        validation.validate(body, schemas.unshelve_v291)
    elif microversion.at_least(AZ_VERSION):
        validation.validate(body, schemas.unshelve_v277)
    args = body["unshelve"] if microversion.at_least(AZ_VERSION) else None
    if args:
        if "availability_zone" in args:
            kwargs["availability_zone"] = args["availability_zone"]
        if args.get("host"):
            kwargs["host"] = args["host"]
    instance = servers.get_instance(ctxt, server_id)
    if kwargs.get("host"):
        common.require_admin(ctxt,
                             "os_compute_api:os-shelve:unshelve_to_host")
    servers.compute_api().unshelve(ctxt, instance, **kwargs)
    return "", 202

