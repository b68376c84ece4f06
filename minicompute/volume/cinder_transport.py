"""Kept-alive ``http.client`` connections to Cinder, one request at a time.

The transport under nova's Cinder client (``cinder_http.Client`` builds
the requests; this module sends them). :class:`Transport` keeps idle
connections per ``(scheme, host, port)`` in a small thread-safe LIFO pool
(:data:`HTTP_POOL_SIZE` at most). An idle connection is checked without
waiting before reuse: a readable socket means the server closed it (or
spoke out of turn), so it is closed and another taken. A connection that
raised, or whose response was not read to its end, is closed and never
pooled. (A server closing a connection between that check and the
request still fails the request, as it did with urllib3's same check;
the idempotent calls' retries cover it.) No answer is
:class:`CinderTransportError`: :class:`CinderConnectFailure`,
:class:`CinderTimeout` or :class:`CinderSSLError`.

No HTTP proxy support: the old requests-based path honoured the
``*_proxy`` environment variables (and ``~/.netrc``); this one always
connects directly, as nova's Cinder endpoint is on the management
network. For https, the CA bundle is ``REQUESTS_CA_BUNDLE`` or
``CURL_CA_BUNDLE`` (read once, when the transport is made), else the
system's.
"""

import http.client
import json
import os
import ssl
import string
import threading
import zlib
from urllib import parse as urlparse

from ministack import sockets

#: Idle kept-alive connections per host: the RPC executor's default thread
#: count (a connection returned beyond it is closed).
HTTP_POOL_SIZE = 64


class CinderTransportError(Exception):
    """No answer from Cinder (the base of the failures below)."""

    def __init__(self, message):
        self.message = message
        super().__init__(message)


class CinderConnectFailure(CinderTransportError):
    """Refused, reset or dropped connection, or a garbled answer."""


class CinderTimeout(CinderTransportError):
    """Cinder did not answer within ``[cinder] http_timeout``."""


class CinderSSLError(CinderTransportError):
    """The TLS handshake failed (a certificate problem: not retried)."""


class Response:
    """Status, headers (case-insensitive ``get``) and the body's bytes."""

    __slots__ = ("status", "reason", "headers", "data")

    def __init__(self, status, reason, headers, data):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.data = data

    def json(self):
        """The decoded body; None when there is none or it is not JSON
        (as keystoneauth's LegacyJsonAdapter gave cinderclient)."""
        if not self.data:
            return None
        try:
            return json.loads(self.data)
        except ValueError:      # not JSON: the caller has status and reason
            return None


def _socket_readable(conn):
    """True if an idle connection's socket has something to read, which
    for an idle HTTP connection means the server closed it (or sent what
    was not asked for); True too if it has no socket any more."""
    sock = conn.sock
    return sock is None or sockets.readable_now(sock.fileno())


class _Pool:
    """Idle connections per ``(scheme, host, port)``, last in first out
    (the most recently used socket is the least likely to be closed)."""

    def __init__(self, size=HTTP_POOL_SIZE):
        self.size = size
        self._idle = {}
        self._lock = threading.Lock()

    def get(self, key):
        """An idle connection that is still open, or None."""
        while True:
            with self._lock:
                idle = self._idle.get(key)
                conn = idle.pop() if idle else None
            if conn is None or not _socket_readable(conn):
                return conn
            conn.close()

    def put(self, key, conn):
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < self.size:
                idle.append(conn)
                return
        conn.close()

    def idle(self, key):
        """How many connections to ``key`` are idle (for tests)."""
        with self._lock:
            return len(self._idle.get(key) or ())


def _decode(data, encoding):
    """The body as sent, whatever ``Accept-Encoding: gzip, deflate`` got."""
    if encoding == "gzip":
        return zlib.decompress(data, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        try:
            return zlib.decompress(data)
        except zlib.error:      # raw deflate, no zlib header (as urllib3)
            return zlib.decompress(data, -zlib.MAX_WBITS)
    return data


def _failure(exc, method, url, timeout):
    """The transport error standing for ``exc`` (None: not one of ours,
    e.g. KeyboardInterrupt), classified as keystoneauth classified what
    requests raised: timeouts, TLS failures, and the rest (refused,
    reset, garbled or truncated answers) as connect failures."""
    if isinstance(exc, TimeoutError):
        return CinderTimeout("Cinder did not answer %s %s within %ss: %s"
                             % (method, url, timeout, exc))
    if isinstance(exc, ssl.SSLError):
        return CinderSSLError("SSL failure talking to %s: %s" % (url, exc))
    if isinstance(exc, (OSError, http.client.HTTPException)):
        return CinderConnectFailure(
            "Unable to establish connection to %s: %s: %s"
            % (url, type(exc).__name__, exc))
    if isinstance(exc, zlib.error):
        return CinderTransportError("Cannot decode the answer of %s: %s"
                                    % (url, exc))
    return None


#: What a URL may carry unquoted (RFC 3986's reserved and unreserved
#: characters), with and without ``%``: requests' ``requote_uri`` sets.
_SAFE_WITH_PERCENT = "!#$%&'()*+,/:;=?@[]~"
_SAFE_WITHOUT_PERCENT = "!#$&'()*+,/:;=?@[]~"
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")


def requote(target):
    """``target`` (a request's path and query) quoted as requests quoted
    every URL it sent: percent-escapes of unreserved characters undone,
    every other escape kept, every character a URL cannot carry (control
    characters, spaces, non-ASCII) escaped; a ``%`` that starts no valid
    escape is escaped too. Ids in the path come from the API's caller: a
    NUL or a space in one must reach Cinder as ``%00`` or ``%20`` (its
    404), not make ``http.client`` refuse the request line."""
    pieces = target.split("%")
    out = [pieces[0]]
    for piece in pieces[1:]:
        code = piece[:2]
        if len(code) == 2 and code.isalnum():
            try:
                char = chr(int(code, 16))
            except ValueError:      # "%zz": quote every "%" instead
                return urlparse.quote(target, safe=_SAFE_WITHOUT_PERCENT)
            out.append(char + piece[2:] if char in _UNRESERVED
                       else "%" + piece)
        else:
            out.append("%" + piece)
    return urlparse.quote("".join(out), safe=_SAFE_WITH_PERCENT)


class Transport:
    """Kept-alive HTTP(S) connections, one request at a time on each.

    :param environ: where the CA bundle variables are read (once).
    """

    def __init__(self, environ=None, pool_size=HTTP_POOL_SIZE):
        environ = os.environ if environ is None else environ
        self.cafile = (environ.get("REQUESTS_CA_BUNDLE")
                       or environ.get("CURL_CA_BUNDLE"))
        self.pool = _Pool(pool_size)
        self._ssl_context = None
        self._ssl_lock = threading.Lock()

    def _context(self):
        with self._ssl_lock:
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context(
                    cafile=self.cafile)
            return self._ssl_context

    def _connect(self, scheme, host, port, timeout):
        if scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout,
                                               context=self._context())
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def request(self, method, url, headers, data=None, timeout=None):
        """Send one request; the :class:`Response`, body read whole.

        :param url: absolute URL (``http://host:port/path?query``).
        :param data: the body's bytes (``Content-Length`` is set).
        :raises CinderTransportError: no (usable) answer; the subclasses
            CinderTimeout, CinderConnectFailure, CinderSSLError say why.
        """
        parts = urlparse.urlsplit(url)
        scheme = parts.scheme
        host = parts.hostname
        port = parts.port or (443 if scheme == "https" else 80)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        target = requote(target)
        key = (scheme, host, port)
        conn = self.pool.get(key)
        if conn is None:
            conn = self._connect(scheme, host, port, timeout)
        else:
            conn.sock.settimeout(timeout)
        try:
            resp = self._send(conn, method, target, headers, data)
            body = _decode(resp.read(), resp.headers.get("Content-Encoding"))
        except BaseException as exc:
            conn.close()        # never pooled: its state is unknown
            failure = _failure(exc, method, url, timeout)
            if failure is None:
                raise
            raise failure from exc
        # A response that said "Connection: close" took the socket away.
        if conn.sock is not None and not resp.will_close:
            self.pool.put(key, conn)
        else:
            conn.close()
        return Response(resp.status, resp.reason, resp.headers, body)

    @staticmethod
    def _send(conn, method, target, headers, data):
        conn.putrequest(method, target, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        elif method not in ("GET", "HEAD"):
            conn.putheader("Content-Length", "0")     # as requests sends
        conn.endheaders(data)
        return conn.getresponse()
