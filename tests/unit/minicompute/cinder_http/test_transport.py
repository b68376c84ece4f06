"""minicompute.volume.cinder_transport's connections: kept alive and reused,
never reused once the server closed them or an answer was cut short;
a silent server is a timeout, a refused port or an undecodable answer a
Cinder connection failure; gzip answers are decoded. Against a real HTTP
server (``tests.support.cinder_http_server``) or raw sockets.
"""

import gzip
import json
import socket
import threading
import time

import pytest

from minicompute import exception
from minicompute.volume import cinder_http
from minicompute.volume import cinder_transport
from tests.support.cinder_http_server import ANSWER, GOT_VOLUME, nova_api

# --- connections -------------------------------------------------------------


def test_a_kept_alive_connection_is_reused(cinder_server, api, ctxt):
    api.get(ctxt, "v1")
    api.attachment_update(ctxt, "a1", {"host": "h"})
    api.attachment_complete(ctxt, "a1")
    worker = threading.Thread(target=api.get, args=(ctxt, "v1"))
    worker.start()
    worker.join(10)
    api.attachment_delete(ctxt, "a1")
    assert len(cinder_server.requests) == 5
    assert len(cinder_server.connections) == 1


def test_a_connection_the_server_closed_is_not_reused(cinder_server, api,
                                                      ctxt):
    cinder_server.close_after = 1
    api.get(ctxt, "v1")
    assert cinder_server.closed.wait(5)
    assert api.get(ctxt, "v1") == GOT_VOLUME
    assert len(cinder_server.connections) == 2
    api.get(ctxt, "v1")
    assert len(cinder_server.connections) == 2


def test_an_error_answer_keeps_the_connection(cinder_server, api, ctxt):
    cinder_server.answers = [("404 Not Found", {"itemNotFound": {
        "message": "Volume v9 could not be found.", "code": 404}})]
    with pytest.raises(exception.VolumeNotFound):
        api.get(ctxt, "v9")
    api.get(ctxt, "v1")
    assert len(cinder_server.connections) == 1


def test_pool_is_lifo_and_bounded():
    pool = cinder_transport._Pool(size=2)
    conns = [_Idle() for _ in range(3)]
    for conn in conns:
        pool.put(("http", "h", 1), conn)
    assert conns[2].closed and pool.idle(("http", "h", 1)) == 2
    assert pool.get(("http", "h", 1)) is conns[1]
    assert pool.get(("http", "h", 1)) is conns[0]
    assert pool.get(("http", "h", 1)) is None


class _Idle:
    """An idle connection whose socket has nothing to read."""

    def __init__(self):
        self.sock, self._peer = socket.socketpair()
        self.closed = False

    def close(self):
        self.closed = True
        self.sock.close()
        self._peer.close()


def _listener():
    """A socket that accepts connections; its port's volume URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    return listener, port, "http://127.0.0.1:%d/v3/p/volumes/v1" % port


def test_a_truncated_answer_closes_the_connection():
    """A response not read to its end (the server sent less than its
    Content-Length) fails the call and its connection is not pooled."""
    listener, port, url = _listener()

    def serve():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    transport = cinder_http.Transport(environ={})
    try:
        with pytest.raises(cinder_http.CinderConnectFailure):
            transport.request("GET", url, {}, timeout=5)
    finally:
        thread.join(5)
        listener.close()
    assert transport.pool.idle(("http", "127.0.0.1", port)) == 0


def test_a_silent_server_is_a_timeout():
    listener, _port, url = _listener()
    transport = cinder_http.Transport(environ={})
    started = time.monotonic()
    try:
        with pytest.raises(cinder_http.CinderTimeout):
            transport.request("GET", url, {}, timeout=0.2)
    finally:
        listener.close()
    assert time.monotonic() - started < 5


def test_a_refused_port_is_cinder_connection_failed(ctxt):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    api = nova_api(port)
    with pytest.raises(exception.CinderConnectionFailed) as err:
        api.get(ctxt, "v1")
    assert isinstance(err.value.__cause__, cinder_http.CinderConnectFailure)
    with pytest.raises(exception.CinderConnectionFailed):
        api.attachment_delete(ctxt, "a1")    # retried, then given up


def test_a_gzip_answer_is_decoded(cinder_server, api, ctxt):
    """requests asked for gzip and decoded it; so does the transport."""
    cinder_server.answers = [("200 OK", gzip.compress(json.dumps(
        ANSWER).encode()), [("Content-Encoding", "gzip")])]
    assert api.get(ctxt, "v1") == GOT_VOLUME


def test_an_undecodable_answer_is_cinder_connection_failed(cinder_server,
                                                           api, ctxt):
    cinder_server.answers = [("200 OK", b"not gzip",
                              [("Content-Encoding", "gzip")])]
    with pytest.raises(exception.CinderConnectionFailed,
                       match="Cannot decode"):
        api.get(ctxt, "v1")
