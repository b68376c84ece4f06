"""Casts as calls, so a unit test of the compute manager needs no polling.

``cast_as_call(compute_rpcapi)`` wraps the client of a real
``minicompute.rpcapi.ComputeAPI``: every cast it prepares is sent as a
call, so it returns once the manager has handled it, over the same real
oslo.messaging transport (serialisation, context, the RPC server and its
executor). What the handler raises is dropped, as a cast's caller never
sees it: the test asserts the manager's own undo, as before. Upstream
nova's tests have the same fixture (``CastAsCallFixture``).
"""


class _CastAsCallContext:
    """A prepared call context whose ``cast`` waits for the handler."""

    def __init__(self, cctxt):
        self._cctxt = cctxt

    def cast(self, ctxt, method, **kwargs):
        try:
            self._cctxt.call(ctxt, method, **kwargs)
        except Exception:   # noqa: BLE001 - a cast's caller never sees it
            pass

    def __getattr__(self, name):
        return getattr(self._cctxt, name)


class _CastAsCallClient:
    def __init__(self, client):
        self._client = client

    def prepare(self, **kwargs):
        return _CastAsCallContext(self._client.prepare(**kwargs))

    def __getattr__(self, name):
        return getattr(self._client, name)


def cast_as_call(compute_rpcapi):
    """``compute_rpcapi`` (a ComputeAPI), its casts now calls."""
    compute_rpcapi.client = _CastAsCallClient(compute_rpcapi.client)
    return compute_rpcapi
