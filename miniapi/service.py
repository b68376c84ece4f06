"""The miniapi daemon: start-up checks, then the WSGI servers.

``build(conf)`` does every check that can fail before a port is opened
(database reachable and migrated, broker reachable, ``[keystone_authtoken]``
usable under ``auth_strategy = keystone``), each failing with one
``ConfigError`` line naming the option, which ``ministack.service.run``
prints before exiting 1.

One daemon serves two small APIs, each on its own port as upstream:

* the compute API (``[api] listen_port``, 8774), in the main thread;
* the image API (``[api] image_listen_port``, 9292) unless 0;
* the network API that reports no networks (``[api]
  network_listen_port``, 9696) unless 0.

The journey page (``[trace]`` of the same config) is the
``ministack-course`` daemon's (:mod:`ministack_course.server`).

Identity is upstream Keystone's (devstack/lib/keystone); both APIs
validate tokens with keystonemiddleware.
"""

import contextlib
import logging
import socket
import threading

from miniapi import app as app_mod
from miniapi import db_setup
from miniapi import image_api
from miniapi import network_api
from ministack import config as ms_config
from ministack import db
from ministack import exception
from ministack import rpc
from ministack import service
from ministack import wsgi_server

LOG = logging.getLogger(__name__)


class APIService(service.Service):
    """Serves the Flask apps under waitress until the stop event is set.

    :param extra: ``[(name, app, host, port)]`` served in threads.
    """

    def __init__(self, conf, app, transport, extra=()):
        self.conf = conf
        self.app = app
        self.transport = transport
        self.extra = list(extra)

    def start(self, stop_event):
        for name, app, host, port in self.extra:
            LOG.info("%s API on %s:%s", name, host, port)
            threading.Thread(
                target=wsgi_server.serve, args=(app, host, port),
                kwargs={"threads": 4, "stop_event": stop_event},
                name="wsgi-%s" % name, daemon=True).start()
        wsgi_server.serve(self.app, self.conf.api.listen,
                          self.conf.api.listen_port,
                          threads=self.conf.api.workers,
                          stop_event=stop_event)

    def stop(self):
        if self.transport is not None:
            self.transport.cleanup()


def _check_port(host, port, option):
    """Fail at start-up, naming the option, if the port is taken (the
    extra servers run in threads, where a bind error would go unseen)."""
    with contextlib.closing(socket.socket()) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise exception.ConfigError(
                reason="%s: cannot listen on %s:%s (%s)"
                       % (option, host, port, exc.strerror)) from None


def _extra_apps(conf):
    """The image and network apps this daemon also serves."""
    extra = []
    if conf.api.image_listen_port:
        _check_port(conf.api.listen, conf.api.image_listen_port,
                    "[api] image_listen_port")
        extra.append(("image", image_api.create_app(
            conf.api.image_dir, conf.api.auth_strategy, conf,
            ms_config.max_request_body_size(conf)),
            conf.api.listen, conf.api.image_listen_port))
    if conf.api.network_listen_port:
        _check_port(conf.api.listen, conf.api.network_listen_port,
                    "[api] network_listen_port")
        extra.append(("network", network_api.create_app(
            conf.api.auth_strategy, conf,
            ms_config.max_request_body_size(conf)),
            conf.api.listen, conf.api.network_listen_port))
    return extra


def build(conf):
    """Check the database, broker and auth config, then build the API
    service."""
    engine = db.make_engine(ms_config.database_url(conf, "nova"),
                            conf.database.connect_timeout)
    db_setup.sync(engine, seed_flavors=conf.api.seed_flavors)
    extra = _extra_apps(conf)
    transport = rpc.get_transport(conf)
    rpc.check_broker(transport)
    app = app_mod.create_app(conf, transport=transport, engine=engine)
    LOG.info("Compute API on %s:%s (microversions 2.1-%s)",
             conf.api.listen, conf.api.listen_port,
             app_mod.microversion.MAX_VERSION)
    return APIService(conf, app, transport, extra)
