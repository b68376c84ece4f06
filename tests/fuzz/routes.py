"""Every route the deployed daemons serve, read from the code itself.

Each API's routes are Flask blueprints in its package; every blueprint
found in the package's modules is registered on a bare Flask app, only
to read its URL map, so a route added to any of them is fuzzed without
touching this tier. (Building the real apps would need each one's
configuration and collaborators, which change more often than the
routes do.) ``OPTIONS`` and ``HEAD`` are Flask's own; a ``GET`` route
also gets ``HEAD`` requests.

Groups: ``compute`` (miniapi, :8774), ``volume`` (minicinder, :8776),
``identity`` (keystone, :5000: the blueprints of ``ministack.identity``
if it has any, plus the v3 routes clients use), ``image`` (miniapi's
Glance subset, :9292) and ``network`` (miniapi's Networking v2.0 API
that reports no networks, :9696).
"""

import dataclasses
import functools
import importlib
import pkgutil
import re

import flask

from miniapi import network_api

GROUPS = ("compute", "volume", "identity", "image", "network")

# Where each API's blueprints live: a package (all its modules) or one
# module.
SOURCES = {"compute": "miniapi.api", "volume": "minicinder.api",
           "identity": "ministack.identity", "image": "miniapi.image_api",
           "network": "miniapi.network_api"}

# Keystone v3 routes the clients use, fuzzed whatever serves :5000 (the
# subset in ministack/identity, or a real keystone): the read-only ones
# only (DELETE /v3/auth/tokens would revoke the run's own tokens).
KEYSTONE_ROUTES = [
    ("GET", "/"), ("GET", "/v3"), ("POST", "/v3/auth/tokens"),
    ("GET", "/v3/auth/tokens"), ("GET", "/v3/auth/catalog"),
    ("GET", "/v3/auth/projects"), ("GET", "/v3/auth/domains"),
    ("GET", "/v3/auth/system"), ("GET", "/v3/users/<user_id>"),
    ("GET", "/v3/users/<user_id>/projects"),
    ("GET", "/v3/users/<user_id>/application_credentials"),
    ("GET", "/v3/projects/<project_id>"), ("GET", "/v3/domains"),
    ("GET", "/v3/roles"), ("GET", "/v3/services"), ("GET", "/v3/endpoints"),
]

# Path arguments that name a kind of resource (a collection), not one
# resource, by (group, argument): the words the API knows for them. The
# network API serves all its collections with one ``/v2.0/<name>``.
KIND_ARGUMENTS = {("network", "name"): sorted(network_api.COLLECTIONS)}

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

    def words(self, arg):
        """The API's words for path argument ``arg`` when it names a kind
        of resource (:data:`KIND_ARGUMENTS`), else ``[]``."""
        return list(KIND_ARGUMENTS.get((self.group, arg), ()))

    @property
    def collection(self):
        """Whether the path ends with a collection (a POST there creates
        a resource, a GET lists): ``/v3/<project_id>/volumes`` and the
        network API's ``/v2.0/<name>`` yes; ``.../<volume_id>`` and
        ``.../action`` no."""
        last = self.rule.rstrip("/").rsplit("/", 1)[-1]
        if last.startswith("<"):
            match = _ARG_RE.match(last)
            return bool(match and self.words(match.group(1)))
        return last != "action"

    def path(self, values):
        """The rule with each ``<arg>`` replaced by ``values[arg]``
        (already percent-encoded)."""
        return _ARG_RE.sub(lambda m: values[m.group(1)], self.rule)

    def __str__(self):
        return self.id


def _modules(name):
    module = importlib.import_module(name)
    yield module
    for info in pkgutil.walk_packages(getattr(module, "__path__", []),
                                      name + "."):
        yield importlib.import_module(info.name)


def blueprints(group):
    """The blueprints defined in the group's source, once each."""
    found = {}
    for module in _modules(SOURCES[group]):
        for value in vars(module).values():
            if isinstance(value, flask.Blueprint):
                found.setdefault(id(value), (module.__name__, value))
    return list(found.values())


@functools.cache
def routes(group):
    """The group's routes, one per (rule, method), in URL-map order."""
    app = flask.Flask("fuzz-" + group)
    for module_name, blueprint in blueprints(group):
        app.register_blueprint(blueprint, name="%s.%s" % (
            module_name.replace(".", "_"), blueprint.name))
    found = []
    for rule in app.url_map.iter_rules():
        for method in sorted(rule.methods - {"OPTIONS", "HEAD"}):
            route = Route(group, method, rule.rule)
            if route not in found:
                found.append(route)
    if group == "identity":
        found += [r for r in (Route(group, m, rule)
                              for m, rule in KEYSTONE_ROUTES)
                  if r not in found]
    return found
