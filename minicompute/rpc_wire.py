"""How instances and rows travel in compute RPC messages, and where.

Arguments are plain dicts on the wire (``minicompute.db.api.to_dict``);
a message about an instance goes to the host that holds it. Shared by the
client modules, :mod:`minicompute.rpcapi` and
:mod:`minicompute.rpcapi_moves`.
"""

from minicompute import exception
from minicompute.db import api as db_api


def host_of(instance):
    """The compute host of ``instance`` (a dict or a row).

    :raises InstanceInvalidState: it has none (never scheduled).
    """
    host = instance.get("host") if isinstance(instance, dict) \
        else getattr(instance, "host", None)
    if not host:
        # Nova raises the same when an instance was never scheduled.
        raise exception.InstanceInvalidState(
            attr="host", state=None, method="rpc",
            instance_uuid=_uuid(instance))
    return host


def _uuid(instance):
    return instance.get("uuid") if isinstance(instance, dict) \
        else getattr(instance, "uuid", None)


def primitive(obj):
    """Accept a dict or an ORM row; send a dict."""
    if isinstance(obj, dict):
        return obj
    return db_api.to_dict(obj)
