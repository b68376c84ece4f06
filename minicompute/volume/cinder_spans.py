"""Each REST call nova's Cinder client makes, as a REST span.

:func:`request` runs one Cinder request as a span named like the
server's (``POST /v3/{project}/attachments``) with the response status
and Cinder's request id, and hands the request osprofiler's trace headers
(``X-Trace-Info``, ``X-Trace-HMAC``) from inside it, so minicinder's WSGI
span is its child (keystoneauth added them the same way before). The
service account's token requests to Keystone go through keystoneauth's
own session: they are not Cinder calls and not spans. Only the call's
action (``os-complete``...) is recorded, never its body (a connector, a
token).
"""

from urllib import parse as urlparse

from osprofiler import profiler
from osprofiler import web as osprofiler_web


def _path(url, endpoint):
    """The path the span names: an absolute URL's path (a "next" page),
    else the endpoint's path and ``url`` as given (query string too, as
    the keystoneauth-based client named it)."""
    if "://" in url:
        return urlparse.urlsplit(url).path
    base = urlparse.urlsplit(endpoint or "").path.rstrip("/")
    return base + "/" + url.lstrip("/")


def _action(path, body):
    if not path.endswith("/action"):
        return None
    from ministack.trace import naming
    return naming.action_name(body)


def request(send, method, url, endpoint, body=None):
    """``send(trace_headers)`` -> the response, as a span when tracing.

    Outside a trace ``send(None)`` is all there is to it (nothing built).

    :param url: the request's URL as the client has it (relative to
        ``endpoint``, or absolute).
    :param body: the request's body (for its action name only).
    """
    if profiler.get() is None:
        return send(None)
    from ministack.trace import naming
    from ministack.trace import profiler as ms_profiler
    path = _path(url, endpoint)
    details = {"method": method, "path": path, "side": "client"}
    action = _action(path, body)
    if action:
        details["action"] = action
    name = naming.rest_name(method, path)
    with ms_profiler.span("cinder", "REST", name, actor="cinder",
                          details=lambda: details) as sp:
        resp = send(osprofiler_web.get_trace_id_headers())
        sp.set(status=resp.status,
               cinder_request_id=resp.headers.get("x-openstack-request-id"))
        return resp
