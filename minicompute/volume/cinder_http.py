"""The HTTP client of nova's Cinder client: JSON requests, kept alive.

Why not python-cinderclient on keystoneauth and requests: that stack cost
about 1.2 ms of client CPU per call (five layers of request preparation,
hooks and response wrapping) against 0.24 ms for the same GET on a
kept-alive ``http.client`` connection, on every one of the four Cinder
calls of an attach and three of a detach. ``minicompute.volume.cinder``
builds the requests cinderclient 9.10.0 built at microversion 3.44 (same
URLs, methods, bodies and headers); this module sends them, through the
kept-alive connections of ``cinder_transport`` (whose :class:`Transport`,
:class:`Response`, :func:`requote` and transport errors are re-exported
here).

:class:`Client` is one caller's view of Cinder: the endpoint of the
caller's project, the identity headers, the request id. It JSON-encodes
bodies, decodes answers, re-authenticates once on a 401 when the auth
plugin can (as keystoneauth did), follows ``<collection>_links`` "next"
pages of list calls (as cinderclient did) and raises :class:`CinderError`
for an HTTP status >= 400, :class:`CinderConnectFailure` or
:class:`CinderTimeout` when there is no answer.
"""

import datetime
import json
import uuid

from minicompute.volume import cinder_spans
from minicompute.volume.cinder_transport import (  # noqa: F401 (re-exported)
    HTTP_POOL_SIZE, CinderConnectFailure, CinderSSLError, CinderTimeout,
    CinderTransportError, Response, Transport, requote)

#: What cinderclient's session client sent (keystoneauth's own suffix is
#: not added when a client names itself).
USER_AGENT = "python-cinderclient"
#: Headers of every request, as cinderclient/keystoneauth/requests sent
#: them (requests' Accept-Encoding and Connection included).
BASE_HEADERS = {
    "Accept": "application/json",
    "Accept-Encoding": "gzip, deflate",
    "Connection": "keep-alive",
    "User-Agent": USER_AGENT,
}


class CinderError(Exception):
    """Cinder answered with an HTTP status >= 400.

    :ivar code: the HTTP status.
    :ivar message: the fault's message (``{"itemNotFound": {"message":
        ...}}``), else the status' reason phrase.
    :ivar request_id: Cinder's ``X-OpenStack-Request-ID`` of the answer.
    """

    def __init__(self, code, message, request_id=None):
        self.code = code
        self.message = message
        self.request_id = request_id
        text = "%s (HTTP %s)" % (message, code)
        if request_id:
            text += " (Request-ID: %s)" % request_id
        super().__init__(text)


def _json_default(value):
    """What keystoneauth's JSON encoder made of non-JSON values."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError("%s is not JSON serializable" % type(value).__name__)


def fault_message(body, reason):
    """The message of Cinder's fault body, as cinderclient read it:
    ``{"message": ...}`` or ``{"<fault>": {"message": ...}}``; "n/a" for
    a JSON body of another shape; the reason phrase without a body."""
    if not body:
        return reason
    message = "n/a"
    if isinstance(body, dict):
        if "message" in body:
            message = body["message"]
        else:
            fault = next(iter(body.values()))
            if isinstance(fault, dict):
                message = fault.get("message", message)
    return message or reason


class Client:
    """Cinder as one caller sees it: endpoint, identity, request id.

    :param transport: the process' :class:`Transport`.
    :param endpoint: ``[cinder] endpoint_template`` for the project.
    :param headers: every request's headers (identity, microversion,
        request id, :data:`BASE_HEADERS`).
    :param reauth: called on a 401: new identity headers for one more
        try, or None when the credentials cannot be renewed.
    """

    def __init__(self, transport, endpoint, headers, timeout, reauth=None):
        self.transport = transport
        self.endpoint = endpoint.rstrip("/")
        self.headers = headers
        self.timeout = timeout
        self.reauth = reauth

    def get(self, url):
        return self.request("GET", url)

    def post(self, url, body):
        return self.request("POST", url, body)

    def put(self, url, body):
        return self.request("PUT", url, body)

    def delete(self, url):
        return self.request("DELETE", url)

    def list(self, url, key):
        """Every item of a list call, page after page (``<key>_links``
        "next"), empty items dropped, as cinderclient's ``_list``."""
        items = []
        while url:
            body = self.get(url)
            items.extend(item for item in body[key] if item)
            url = next((link["href"] for link in body.get(key + "_links")
                        or () if link.get("rel") == "next"), None)
        return items

    def request(self, method, url, body=None):
        """The decoded JSON answer (None for an empty body).

        :param url: relative to the endpoint (``/volumes/<id>``), or an
            absolute URL (a "next" link).
        :raises CinderError: HTTP status >= 400.
        """
        full = url if "://" in url else self.endpoint + url
        data = None
        headers = self.headers
        if body is not None:
            data = json.dumps(body, default=_json_default).encode("ascii")
            headers = dict(headers, **{"Content-Type": "application/json"})

        def send(trace_headers):
            if trace_headers:
                headers_sent = dict(headers, **trace_headers)
            else:
                headers_sent = headers
            resp = self.transport.request(method, full, headers_sent, data,
                                          self.timeout)
            if resp.status == 401 and self.reauth is not None:
                renewed = self.reauth()     # keystoneauth's one re-try
                if renewed is not None:
                    resp = self.transport.request(
                        method, full, dict(headers_sent, **renewed), data,
                        self.timeout)
            return resp

        resp = cinder_spans.request(send, method, url, self.endpoint, body)
        decoded = resp.json()
        if resp.status >= 400:
            raise CinderError(resp.status, fault_message(decoded,
                                                         resp.reason),
                              resp.headers.get("x-openstack-request-id"))
        return decoded
