"""One access-log line per API request, as nova's requestlog middleware.

Upstream nova logs every request of the compute API (and eventlet's wsgi
server did before it)::

    127.0.0.1 "GET /v2.1/servers/<id>" status: 200 len: 1234 \
        microversion: 2.89 time: 0.012345

with the request's context in oslo.log's ``[req-... global user project]``
prefix, so ``grep <request id>`` finds it next to the lines the same
request made in minicompute and minicinder. :class:`RequestLog` wraps the
WSGI application outside the context middleware: it sees every answer,
the 401s and 413s the middleware gives too, and reads the context (or at
least the request ids) the middleware left in the environ.
"""

import logging
import time

from ministack import context as ms_context
from ministack import wsgi

LOG = logging.getLogger(__name__)

_FORMAT = ('%(REMOTE_ADDR)s "%(REQUEST_METHOD)s %(REQUEST_URI)s" '
           'status: %(status)s len: %(len)s microversion: %(microversion)s '
           'time: %(time).6f')


def _request_uri(environ):
    uri = (environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")) \
        or "/"
    if environ.get("QUERY_STRING"):
        uri += "?" + environ["QUERY_STRING"]
    return uri


def _microversion(headers):
    for name, value in headers:
        lower = name.lower()
        if lower == "openstack-api-version":
            return value.split()[-1]
        if lower == "x-openstack-nova-api-version":
            return value
    return "-"


def _context(environ):
    """The request's context; for a request refused before one was built
    (401, 413), one with the request ids only."""
    ctxt = environ.get(wsgi.ENV_CONTEXT)
    if ctxt is not None:
        return ctxt
    request_id = environ.get(wsgi.ENV_REQUEST_ID)
    if request_id is None:
        return None
    return ms_context.RequestContext(
        request_id=request_id,
        global_request_id=environ.get(wsgi.ENV_GLOBAL_REQUEST_ID),
        overwrite=False)


class _LoggedBody:
    """The response body, counted as the server sends it; the line is
    logged when the server closes it (the time includes sending)."""

    def __init__(self, body, done):
        self._body = body
        self._done = done
        self.length = 0

    def __iter__(self):
        for chunk in self._body:
            self.length += len(chunk)
            yield chunk

    def close(self):
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._done(self.length)


class RequestLog:
    """WSGI middleware: log each request once it has been answered."""

    def __init__(self, app, logger=None):
        self.app = app
        self.log = logger or LOG
        # wsgi_server.server_body_limit reads the app's body limit on the
        # outermost middleware: carried over, as the one thing it needs.
        limit = getattr(app, "max_request_body_size", None)
        if isinstance(limit, int):
            self.max_request_body_size = limit


    def __call__(self, environ, start_response):
        started = time.monotonic()
        seen = {"status": "-", "headers": []}

        def _start_response(status, headers, exc_info=None):
            seen["status"] = status.split(" ", 1)[0]
            seen["headers"] = headers
            return start_response(status, headers, exc_info)

        def _done(length):
            ctxt = _context(environ)
            self.log.info(_FORMAT, {
                "REMOTE_ADDR": environ.get("REMOTE_ADDR", "-"),
                "REQUEST_METHOD": environ.get("REQUEST_METHOD", "-"),
                "REQUEST_URI": _request_uri(environ),
                "status": seen["status"],
                "len": length,
                "microversion": _microversion(seen["headers"]),
                "time": time.monotonic() - started,
            }, extra={"context": ctxt} if ctxt is not None else None)

        try:
            body = self.app(environ, _start_response)
        except Exception:
            seen["status"] = "500"
            _done(0)
            raise
        return _LoggedBody(body, _done)
