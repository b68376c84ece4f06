"""The ``ministack-course`` daemon: the journey page on its own port.

It reads the ``[trace]`` and ``[profiler]`` sections of the config it
is given (devstack: miniapi's, where both are written) and serves the
page (:func:`ministack_course.web.app_from_conf`) under waitress on
``[trace] listen:listen_port`` until SIGTERM. A daemon of its own, not a
thread of miniapi: the services know nothing of the course above them.
"""

import sys

from ministack import exception
from ministack import service
from ministack import wsgi_server
from ministack_course import web


class PageService(service.Service):
    """Serves the journey page in the calling thread until stopped."""

    def __init__(self, app, host, port, threads=4):
        self.app = app
        self.host = host
        self.port = port
        self.threads = threads

    def start(self, stop_event):
        try:
            wsgi_server.serve(self.app, self.host, self.port,
                              threads=self.threads, stop_event=stop_event,
                              ident="ministack-course")
        except OSError as exc:      # the port is taken: one line, exit 1
            raise exception.ConfigError(
                reason="[trace] listen_port: cannot listen on %s:%s (%s)"
                       % (self.host, self.port, exc.strerror)) from None


def build(conf):
    """The page service of ``conf``'s ``[trace]`` (a ConfigError when
    ``listen_port`` is 0: there is nothing to serve)."""
    if not conf.trace.listen_port:
        raise exception.ConfigError(
            reason="[trace] listen_port is 0: the journey page is off")
    return PageService(web.app_from_conf(conf), conf.trace.listen,
                       conf.trace.listen_port)


def main(argv=None):
    sys.exit(service.run("ministack-course", build, argv=argv,
                         register_opts=web.register_opts))


if __name__ == "__main__":
    main()
