"""Each REST call nova's Cinder client makes, as a REST span.

:class:`Session` is keystoneauth's Session whose ``request`` is a span
named like the server's (``POST /v3/{project}/attachments``) with the
response status; keystoneauth adds osprofiler's ``X-Trace-Info`` header
inside it, so minicinder's WSGI span is its child. Keystone's own token
requests (``authenticated=False``) are not Cinder calls and are not
spans. Only the call's action (``os-complete``...) is recorded, never its
body (a connector, a token).
"""

import json
from urllib import parse as urlparse

from keystoneauth1 import session as ks_session
from osprofiler import profiler


def _path(url, endpoint_override):
    if "://" in url:
        return urlparse.urlsplit(url).path
    base = urlparse.urlsplit(endpoint_override or "").path.rstrip("/")
    return base + "/" + url.lstrip("/")


def _action(path, kwargs):
    if not path.endswith("/action"):
        return None
    data = kwargs.get("json") or kwargs.get("data")
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError:
            return None
    from ministack.trace import naming
    return naming.action_name(data)


class Session(ks_session.Session):
    """keystoneauth's Session, one REST span per Cinder call."""

    def request(self, url, method, **kwargs):
        if profiler.get() is None or kwargs.get("authenticated") is False:
            return super().request(url, method, **kwargs)
        from ministack.trace import naming
        from ministack.trace import profiler as ms_profiler
        path = _path(url, kwargs.get("endpoint_override"))
        details = {"method": method, "path": path,
                   "side": "client"}
        action = _action(path, kwargs)
        if action:
            details["action"] = action
        name = naming.rest_name(method, path)
        with ms_profiler.span("cinder", "REST", name, actor="cinder",
                              details=lambda: details) as sp:
            resp = super().request(url, method, **kwargs)
            sp.set(status=resp.status_code,
                   cinder_request_id=resp.headers.get(
                       "x-openstack-request-id"))
            return resp
