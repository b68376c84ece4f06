"""Every route the deployed daemons serve, read from the apps themselves.

The four Flask apps are built in-process (with placeholders for their
collaborators: nothing here talks to a database, a broker or a daemon)
only to read their URL maps, so a route added to any of them is fuzzed
without touching this tier. ``OPTIONS`` and ``HEAD`` are Flask's own; a
``GET`` route also gets ``HEAD`` requests.

Groups: ``compute`` (miniapi, :8774), ``volume`` (minicinder, :8776),
``identity`` (the keystone subset miniapi serves on :5000) and ``image``
(miniapi's Glance subset, :9292).
"""

import dataclasses
import functools
import re

import flask
from oslo_config import cfg

GROUPS = ("compute", "volume", "identity", "image")

_ARG_RE = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")

DESTRUCTIVE = ("POST", "PUT", "PATCH", "DELETE")


@dataclasses.dataclass(frozen=True)
class Route:
    group: str
    method: str
    rule: str

    @property
    def id(self):
        return "%s:%s:%s" % (self.group, self.method, self.rule)

    @property
    def arguments(self):
        return tuple(_ARG_RE.findall(self.rule))

    @property
    def destructive(self):
        return self.method in DESTRUCTIVE

    def path(self, values):
        """The rule with each ``<arg>`` replaced by ``values[arg]``
        (already percent-encoded)."""
        return _ARG_RE.sub(lambda m: values[m.group(1)], self.rule)

    def __str__(self):
        return self.id


def _conf(*register):
    conf = cfg.ConfigOpts()
    for func in register:
        func(conf)
    conf([], project="ministack-fuzz", default_config_files=[])
    return conf


def _flask_app(app):
    """Unwrap WSGI middlewares (``.app``) down to the Flask app."""
    seen = 0
    while not isinstance(app, flask.Flask):
        app = app.app
        seen += 1
        if seen > 10:
            raise TypeError("no Flask app under %r" % app)
    return app


def _compute_app():
    from miniapi import app as app_mod
    from miniapi import conf as api_conf
    from ministack import config as ms_config
    from ministack import db
    conf = _conf(ms_config.register_common_opts, api_conf.register_opts)
    return app_mod.create_app(
        conf, engine=db.make_engine("sqlite:///:memory:"),
        volume_api=object(), compute_rpcapi=object())


def _volume_app():
    from minicinder import conf as cinder_conf
    from minicinder.api import app as app_mod
    from ministack import config as ms_config
    conf = _conf(ms_config.register_common_opts, cinder_conf.register_opts)
    return app_mod.create_app(conf, object(), object(), object())


def _identity_app():
    from ministack import config as ms_config
    from ministack.identity import app as app_mod
    from ministack.identity import conf as identity_conf
    conf = _conf(ms_config.register_common_opts,
                 identity_conf.register_opts)
    return app_mod.create_app(conf, object(), object())


def _image_app():
    from miniapi import image_api
    return image_api.create_app("/nonexistent")


_BUILDERS = {"compute": _compute_app, "volume": _volume_app,
             "identity": _identity_app, "image": _image_app}


@functools.cache
def routes(group):
    """The group's routes, one per (rule, method), in URL-map order."""
    url_map = _flask_app(_BUILDERS[group]()).url_map
    found = []
    for rule in url_map.iter_rules():
        for method in sorted(rule.methods - {"OPTIONS", "HEAD"}):
            route = Route(group, method, rule.rule)
            if route not in found:
                found.append(route)
    return found
