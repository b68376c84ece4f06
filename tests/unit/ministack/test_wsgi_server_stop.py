"""``wsgi_server.serve`` ends when its stop event is set, even when a
connection joins the server's channels after they were closed (one the
loop was accepting at that moment): the stop closes them again until
the loop has ended."""

import socket
import threading

from waitress import wasyncore

from ministack import library_behaviour
from ministack import wsgi_server


def _app(environ, start_response):
    start_response("200 OK", [("Content-Length", "0")])
    return [b""]


class _IdleChannel(wasyncore.dispatcher):
    """A connection that sends nothing and is sent nothing."""

    def writable(self):
        return False


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_in_thread(port, stop):
    runner = threading.Thread(
        target=wsgi_server.serve, args=(_app, "127.0.0.1", port),
        kwargs={"threads": 2, "stop_event": stop}, daemon=True)
    runner.start()
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return runner
        except OSError:
            stop.wait(0.02)
    raise AssertionError("the server did not listen")


def test_a_connection_that_joins_after_the_close_does_not_keep_it(
        monkeypatch):
    port = _free_port()
    stop = threading.Event()
    runner = _serve_in_thread(port, stop)
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert client.recv(64).startswith(b"HTTP/1.1 200")
    late = []
    close = library_behaviour.close_waitress_channels

    def close_then_accept_late(server):
        close(server)
        if not late:
            # As if the loop had been accepting while the map was
            # closed: a new channel joins it afterwards.
            peer_a, peer_b = socket.socketpair()
            late.append(peer_b)
            _IdleChannel(peer_a, map=server._map)
    monkeypatch.setattr(library_behaviour, "close_waitress_channels",
                        close_then_accept_late)
    try:
        stop.set()
        runner.join(5)
        assert not runner.is_alive()
        assert late
    finally:
        client.close()
        for sock in late:
            sock.close()
