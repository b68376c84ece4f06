"""The ``resize``, ``confirmResize`` and ``revertResize`` server actions
(nova's ``ServersController._action_resize``,
``_action_confirm_resize`` and ``_action_revert_resize``).

``resize`` answers 202 (status ``RESIZE``, then ``VERIFY_RESIZE``),
``confirmResize`` 204 (then ``ACTIVE``, or ``SHUTOFF`` for a server
resized while stopped), ``revertResize`` 202 (``REVERT_RESIZE``, then
the old flavor back). Any project member may resize its server, as
upstream's default policy. The checks, the scheduling and the casts are
``miniapi.compute.resize``'s.
"""

from miniapi.api import servers
from miniapi.api import validation
from miniapi.api.schemas import resize as schemas


@servers.action_handler("resize")
def resize(ctxt, server_id, body):
    validation.validate(body, schemas.resize)
    instance = servers.get_instance(ctxt, server_id)
    servers.compute_api().resize(ctxt, instance,
                                 flavor_ref=str(body["resize"]["flavorRef"]))
    return "", 202


@servers.action_handler("confirmResize")
def confirm_resize(ctxt, server_id, body):
    instance = servers.get_instance(ctxt, server_id)
    servers.compute_api().confirm_resize(ctxt, instance)
    return "", 204


@servers.action_handler("revertResize")
def revert_resize(ctxt, server_id, body):
    instance = servers.get_instance(ctxt, server_id)
    servers.compute_api().revert_resize(ctxt, instance)
    return "", 202
