"""The keystoneauth Session nova's Cinder calls go through, one per process.

One Session keeps its connections to Cinder alive between calls (as
nova's module-level ``_SESSION``). Each request cinderclient sends through
it to Cinder's endpoint is recorded, while tracing, as one client-side
REST span named like the server's (``POST /v3/{project}/attachments``),
with the response status and Cinder's request id. keystoneauth adds
osprofiler's trace headers (``X-Trace-Info``, ``X-Trace-HMAC``) inside
that span, so minicinder's WSGI span is its child. The service account's
token requests to Keystone go through the same Session without a span:
they are not Cinder calls. Only the call's action (``os-complete``...)
is recorded, never its body (a connector, a token).
"""

from urllib import parse as urlparse

from keystoneauth1 import session as ks_session
from osprofiler import profiler
import requests

#: Idle kept-alive connections per host: the RPC executor's default thread
#: count, so concurrent attaches do not open and drop connections.
POOL_SIZE = 64


def _path(url, endpoint):
    """The path the span names: an absolute URL's path (a "next" page),
    else the endpoint's path and ``url`` as given (query string too)."""
    if "://" in url:
        return urlparse.urlsplit(url).path
    base = urlparse.urlsplit(endpoint).path.rstrip("/")
    return base + "/" + url.lstrip("/")


class Session(ks_session.Session):
    """A keystoneauth Session whose Cinder requests are REST spans.

    A request is Cinder's when it comes through cinderclient's adapter,
    which always names the endpoint (``endpoint_override``).
    """

    def request(self, url, method, **kwargs):
        endpoint = kwargs.get("endpoint_override")
        if endpoint is None or profiler.get() is None:
            return super().request(url, method, **kwargs)
        from ministack.trace import naming
        from ministack.trace import profiler as ms_profiler
        path = _path(url, endpoint)
        details = {"method": method, "path": path, "side": "client"}
        if path.endswith("/action"):
            action = naming.action_name(kwargs.get("json"))
            if action:
                details["action"] = action
        with ms_profiler.span("cinder", "REST", naming.rest_name(method, path),
                              actor="cinder", details=lambda: details) as sp:
            resp = super().request(url, method, **kwargs)
            sp.set(status=resp.status_code,
                   cinder_request_id=resp.headers.get(
                       "x-openstack-request-id"))
            return resp


def new_session(timeout):
    """A :class:`Session` keeping up to :data:`POOL_SIZE` idle
    connections per host; ``timeout`` seconds for each request."""
    http = requests.Session()
    for scheme in ("http://", "https://"):
        http.mount(scheme, ks_session.TCPKeepAliveAdapter(
            pool_maxsize=POOL_SIZE))
    return Session(session=http, timeout=timeout)
