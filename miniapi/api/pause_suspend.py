"""The ``pause``, ``unpause``, ``suspend`` and ``resume`` server actions
(nova's pause_server.py and suspend_server.py).

Each answers 202 with no body; the body's value is null (or ``{}``).
A server in the wrong state is a 409 "Cannot 'pause' instance ... while
it is in vm_state ...", an unknown server a 404; the checks and the cast
are ``miniapi.compute.pause_suspend``'s.
"""

from miniapi.api import servers


@servers.action_handler("pause")
def _pause(ctxt, server_id, body):
    """pause (202): PAUSED once the host has stopped the vCPUs."""
    servers.no_argument("pause", body)
    servers.compute_api().pause(ctxt, servers.get_instance(ctxt, server_id))
    return "", 202


@servers.action_handler("unpause")
def _unpause(ctxt, server_id, body):
    """unpause (202): ACTIVE again."""
    servers.no_argument("unpause", body)
    servers.compute_api().unpause(ctxt,
                                  servers.get_instance(ctxt, server_id))
    return "", 202


@servers.action_handler("suspend")
def _suspend(ctxt, server_id, body):
    """suspend (202): SUSPENDED once the host has saved the memory."""
    servers.no_argument("suspend", body)
    servers.compute_api().suspend(ctxt,
                                  servers.get_instance(ctxt, server_id))
    return "", 202


@servers.action_handler("resume")
def _resume(ctxt, server_id, body):
    """resume (202): ACTIVE once the host has restored the guest."""
    servers.no_argument("resume", body)
    servers.compute_api().resume(ctxt, servers.get_instance(ctxt, server_id))
    return "", 202
