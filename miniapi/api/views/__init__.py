"""Response views: DB rows -> upstream's JSON, per microversion."""


def field(obj, name, default=None):
    """Read ``name`` from an ORM row or from a dict (an RPC primitive)."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)
