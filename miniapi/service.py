"""The miniapi daemon: start-up checks, then the WSGI server.

``build(conf)`` does every check that can fail before the port is opened
(database reachable and migrated, broker reachable), each failing with one
``ConfigError`` line naming the option, which ``ministack.service.run``
prints before exiting 1.
"""

import logging

from ministack import config as ms_config
from ministack import db
from ministack import rpc
from ministack import service
from ministack import wsgi
from miniapi import app as app_mod
from miniapi import db_setup

LOG = logging.getLogger(__name__)


class APIService(service.Service):
    """Serves the Flask app under waitress until the stop event is set."""

    def __init__(self, conf, app, transport):
        self.conf = conf
        self.app = app
        self.transport = transport

    def start(self, stop_event):
        wsgi.serve(self.app, self.conf.api.listen, self.conf.api.listen_port,
                   threads=self.conf.api.workers, stop_event=stop_event)

    def stop(self):
        if self.transport is not None:
            self.transport.cleanup()


def build(conf):
    """Check the database and broker, then build the API service."""
    engine = db.make_engine(ms_config.database_url(conf, "nova"),
                            conf.database.connect_timeout)
    db_setup.sync(engine, seed_flavors=conf.api.seed_flavors)
    transport = rpc.get_transport(conf)
    rpc.check_broker(transport)
    app = app_mod.create_app(conf, transport=transport, engine=engine)
    LOG.info("Compute API on %s:%s (microversions 2.1-%s)",
             conf.api.listen, conf.api.listen_port,
             app_mod.microversion.MAX_VERSION)
    return APIService(conf, app, transport)
