"""The WSGI entry span of each API: osprofiler's WsgiMiddleware.

Upstream puts ``osprofiler.web.WsgiMiddleware`` first in every API's
paste pipeline. This is that middleware (same header check: a trace
starts only for an ``X-Trace-Info`` signed with one of ``[profiler]
hmac_keys``; same ``wsgi`` span and ``request`` info), as plain WSGI, so
its stop notification can also carry what the journey view needs: the
response status, the request ids the context middleware gave the
request and the daemon's ``[DEFAULT] host``
(:func:`ministack.trace.profiler.host_info`). Without a valid header it
is one dictionary lookup.

Inside a trace, a ``POST .../action`` request (Cinder's volume and
attachment actions, nova's server actions) also records its action
(``os-begin_detaching``, ``os-complete``...): the only key of its JSON
body, read ahead here when the declared body is at most
:data:`ACTION_BODY_MAX` bytes and handed on unchanged to the
application. Nothing else of the body is kept, and a body that is not
read (too large, chunked, not JSON) just leaves the hop without action.
"""

import io
import json

from osprofiler import profiler
from osprofiler import web

from ministack import library_behaviour
from ministack import wsgi
from ministack.trace import profiler as ms_profiler

#: The largest action body read ahead for its action name (an action with
#: a connector is well under 2 KiB; the APIs accept up to 112 KiB).
ACTION_BODY_MAX = 16384


def request_action(environ):
    """The action of a traced ``POST .../action`` request, or None.

    Reads the body (declared ``Content-Length`` of at most
    :data:`ACTION_BODY_MAX` bytes) and puts the same bytes back as
    ``wsgi.input``; never raises.
    """
    if environ.get("REQUEST_METHOD") != "POST" or \
            not environ.get("PATH_INFO", "").endswith("/action"):
        return None
    length = wsgi.content_length(environ)
    stream = environ.get("wsgi.input")
    if not length or length > ACTION_BODY_MAX or stream is None:
        return None
    try:
        data = stream.read(length)
    except Exception:  # the application meets the same broken stream
        return None
    environ["wsgi.input"] = io.BytesIO(data)
    try:
        body = json.loads(data)
    except Exception:  # not JSON, not UTF-8, nested too deep...
        return None
    from ministack.trace import naming
    return naming.action_name(body)


class TraceMiddleware(web.WsgiMiddleware):
    """osprofiler's WsgiMiddleware, recording status and request ids."""

    def __init__(self, application, hmac_keys=None, enabled=False):
        super().__init__(application, hmac_keys=hmac_keys, enabled=enabled)
        # wsgi_server.server_body_limit reads the app's body limit on this, the
        # outermost middleware: carried over, as the one thing it needs.
        limit = getattr(application, "max_request_body_size", None)
        if isinstance(limit, int):
            self.max_request_body_size = limit

    def __call__(self, environ, start_response):
        trace_info = library_behaviour.osprofiler_trace_info(self, environ)
        if trace_info is None:
            return self.application(environ, start_response)
        profiler.clean()  # init() would keep a stale one
        profiler.init(hmac_key=trace_info["hmac_key"],
                      base_id=trace_info.get("base_id"),
                      parent_id=trace_info.get("parent_id"))
        seen = {}

        def _start_response(status, headers, exc_info=None):
            seen["status"] = int(status.split(" ", 1)[0])
            return start_response(status, headers, exc_info)

        info = {"request": {
            "path": environ.get("PATH_INFO", ""),
            "query": environ.get("QUERY_STRING", ""),
            "method": environ.get("REQUEST_METHOD", ""),
            "scheme": environ.get("wsgi.url_scheme", "http")}}
        action = request_action(environ)
        if action:
            info["ministack"] = {"action": action}
        stop = {}
        try:
            profiler.start(self.name, info=info)
            try:
                body = self.application(environ, _start_response)
                # Flask has built the whole body; reading it here keeps
                # the span's stop after the response is known.
                chunks = list(body)
                close = getattr(body, "close", None)
                if close is not None:
                    close()
                body = chunks
            except Exception as exc:
                stop.update(etype=type(exc).__name__,
                            message=profiler_mask(str(exc)))
                raise
            finally:
                own = {"status": seen.get("status"),
                       "request_id": environ.get(wsgi.ENV_REQUEST_ID),
                       "global_request_id":
                           environ.get(wsgi.ENV_GLOBAL_REQUEST_ID)}
                own.update(ms_profiler.host_info())
                stop["ministack"] = own
                profiler.stop(info=stop)
            return body
        finally:
            profiler.clean()


def profiler_mask(text):
    return ms_profiler.mask(text)[:500]


def wrap(app, log=True):
    """An API app as upstream serves it: the trace entry first, then
    (``log``) the access log (:mod:`ministack.request_log`)."""
    if log:
        from ministack import request_log
        app = request_log.RequestLog(app)
    return TraceMiddleware(app)
