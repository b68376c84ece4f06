"""Serving a WSGI app with waitress (threaded, production-grade) until
:mod:`ministack.service` asks it to stop."""

import logging
import threading

from ministack import library_behaviour

LOG = logging.getLogger(__name__)

# waitress receives a whole body before the application sees it; it is
# told to refuse (with its own terse 413) a body this much larger than
# the application's limit, so a client cannot fill the disk with one
# request, while anything up to that gets the service's own fault body.
_SERVER_BODY_SLACK = 1024 * 1024


def server_body_limit(app):
    """The body limit waitress should enforce for ``app``: a little above
    the application's own (found on its limiter, or on a Flask app's
    wrapped ``wsgi_app``), or None for waitress's default."""
    for candidate in (app, getattr(app, "wsgi_app", None)):
        limit = getattr(candidate, "max_request_body_size", None)
        if isinstance(limit, int):
            return limit + _SERVER_BODY_SLACK
    return None


# How often a stopping server's channels are closed again until its
# loop has ended.
STOP_RECHECK_SECONDS = 0.1


def serve(app, host, port, threads=8, stop_event=None, ident="ministack",
          sockets=None):
    """Serve ``app`` on host:port until ``stop_event`` is set.

    Runs waitress in the calling thread. ``stop_event`` (a threading.Event)
    is watched by a small thread that stops the worker threads and closes
    *every* channel, not just the listening socket: a client holding a
    keep-alive connection (any ``requests.Session``) would otherwise keep
    the loop, and the daemon, alive after SIGTERM.

    :param sockets: listening sockets to serve instead of binding
        host:port (an API worker process serves its parent's,
        :mod:`ministack.workers`).
    """
    from waitress.server import create_server

    options = {}
    body_limit = server_body_limit(app)
    if body_limit is not None:
        options["max_request_body_size"] = body_limit
    if sockets:
        options["sockets"] = sockets
    else:
        options.update(host=host, port=port)
    server = create_server(app, threads=threads, ident=ident,
                           clear_untrusted_proxy_headers=True, **options)
    stopped = threading.Event()
    if stop_event is not None:
        def _watch():
            stop_event.wait()
            server.task_dispatcher.shutdown()
            # Again until the loop has ended: a connection the loop was
            # accepting while the channels closed joins the map after
            # them, and would keep the loop (and the daemon) running.
            while not stopped.is_set():
                library_behaviour.close_waitress_channels(server)
                stopped.wait(STOP_RECHECK_SECONDS)
        threading.Thread(target=_watch, daemon=True, name="wsgi-stop").start()
    LOG.info("Serving on http://%s:%s", host, port)
    try:
        server.run()
    except (OSError, ValueError):
        # Closing the channels from the watcher ends the loop with a
        # closed-socket error; anything before the stop was asked is real.
        if stop_event is None or not stop_event.is_set():
            raise
    finally:
        stopped.set()
