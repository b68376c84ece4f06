"""The compute host's RPC endpoint for faults: arm, list, disarm.

Served by the host's RPC server next to the compute manager (the same
topic and server name, ``compute.<host>``), for the calls of
``minicompute.rpcapi.ComputeAPI`` 1.4. The arming request comes from
miniapi's ``/v2.1/os-ministack-faults`` (admin only); miniapi builds the
record, this endpoint only holds it (``registry.ArmedFaults``).
"""

import oslo_messaging as messaging

from minicompute import rpcapi
from minicompute.faults import catalog
from ministack import rpc


def _who(ctxt):
    return "user %s (%s) of project %s [%s]" % (
        getattr(ctxt, "user_name", None), getattr(ctxt, "user_id", None),
        getattr(ctxt, "project_id", None),
        getattr(ctxt, "request_id", None))


@rpc.traced_endpoint("nova-compute")
class FaultEndpoint:
    """RPC endpoints ``arm_fault``, ``list_faults`` and ``disarm_faults``.

    :param faults: the host's :class:`~minicompute.faults.registry.
        ArmedFaults`.
    """

    target = messaging.Target(version=rpcapi.ComputeAPI.VERSION)

    def __init__(self, faults):
        self.faults = faults

    @messaging.expected_exceptions(ValueError)
    def arm_fault(self, ctxt, fault):
        """Arm ``fault`` (a record built by miniapi) on this host (call).

        :returns: the fault as this host holds it (with ``host`` and
            ``seconds_left``).
        :raises ValueError: not one of ``catalog.NAMES``.
        """
        if catalog.get(fault.get("name")) is None or not fault.get("id"):
            raise ValueError("not a fault: %r" % (fault,))
        return self.faults.arm(fault, by=_who(ctxt))

    def list_faults(self, ctxt):
        """The armed faults and the recent firings of this host (call)."""
        return self.faults.listing()

    def disarm_faults(self, ctxt, name=None, fault_id=None, reason=None):
        """Disarm ``name``'s faults, or fault ``fault_id``, or all (call;
        also a fanout cast, after a one-shot fault fired elsewhere).

        :param reason: why, for the log (default "disarmed").
        """
        return self.faults.disarm(name=name, fault_id=fault_id,
                                  by=_who(ctxt), why=reason or "disarmed")
