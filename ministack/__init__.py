"""Code shared by the three ministack daemons.

Nothing in here knows about volumes or servers in particular: it is the
plumbing every service needs (config loading, logging, the request context,
the exception base, the RPC transport, the database base and the command
executor). The domain code lives in ``miniapi``, ``minicompute`` and
``minicinder``.
"""

# oslo.messaging's server module imports oslo.service, whose default
# backend is eventlet: importing it prints eventlet's deprecation warning
# in every daemon and CLI and loads eventlet for nothing. ministack runs
# on native threads (oslo.messaging's ``executor='threading'``), so the
# threading backend is oslo.service's default here, chosen before
# anything imports oslo.messaging (every ministack module imports this
# package first; the service packages import it in their __init__).
#
# That backend's loopingcall imports futurist, which still probes whether
# eventlet can be imported (eventlet is installed: oslo.service depends on
# it) and so triggers the warning eventlet prints at import. Only that
# one warning, raised by that import, is filtered: ministack never runs
# eventlet, and a real use would come from elsewhere and still warn.
import warnings  # noqa: E402

from oslo_service import backend as _oslo_service_backend  # noqa: E402

warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated",
                        module="futurist._utils")
_oslo_service_backend.register_backend_default_hook(
    lambda: _oslo_service_backend.BackendType.THREADING)
