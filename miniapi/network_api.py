"""A read-only Networking v2.0 (Neutron) subset that says: no networks.

ministack's guests have no NIC (servers boot as with ``"networks":
"none"``), and there is no network service. Clients still look for one:
upstream tempest, with dynamic credentials, lists and deletes each test
project's ``default`` security group when it tears the project down, and
the network-aware compute test classes (the volume-attach tests among
them) only run when the cloud has a network endpoint; ``openstack network
list`` asks the same question. This API gives them the true answer, in
Neutron's shapes: every collection is empty, every resource id is a 404
``NeutronError``, and nothing can be created (403, as a Neutron policy
refusal reads). The miniapi daemon serves it on its own port (``[api]
network_listen_port``, Neutron's 9696) behind the same ContextMiddleware
as the compute API.
"""

import flask
from werkzeug import exceptions as wz_exceptions

from miniapi import side_app

bp = flask.Blueprint("network_api", __name__)

VERSION_ID = "v2.0"

# Collection (URL name) -> (JSON key, Neutron's not-found type).
COLLECTIONS = {
    "networks": ("networks", "NetworkNotFound"),
    "subnets": ("subnets", "SubnetNotFound"),
    "subnetpools": ("subnetpools", "SubnetPoolNotFound"),
    "ports": ("ports", "PortNotFound"),
    "routers": ("routers", "RouterNotFound"),
    "floatingips": ("floatingips", "FloatingIPNotFound"),
    "security-groups": ("security_groups", "SecurityGroupNotFound"),
    "security-group-rules": ("security_group_rules",
                             "SecurityGroupRuleNotFound"),
    "trunks": ("trunks", "TrunkNotFound"),
}


def _error(status, error_type, message):
    response = flask.jsonify({"NeutronError": {
        "type": error_type, "message": message, "detail": ""}})
    response.status_code = status
    return response


def _version(href):
    return {"id": VERSION_ID, "status": "CURRENT",
            "links": [{"rel": "self", "href": href}]}


@bp.get("/")
def versions():
    href = flask.request.host_url.rstrip("/") + "/v2.0/"
    return flask.jsonify({"versions": [_version(href)]})


@bp.get("/v2.0")
def version_v2():
    base = flask.request.host_url.rstrip("/") + "/v2.0/"
    return flask.jsonify({"resources": [
        {"name": key[:-1] if key.endswith("s") else key, "collection": key,
         "links": [{"rel": "self", "href": base + name}]}
        for name, (key, _) in sorted(COLLECTIONS.items())]})


@bp.get("/v2.0/extensions")
def extensions():
    return flask.jsonify({"extensions": []})


@bp.get("/v2.0/extensions/<alias>")
def extension(alias):
    return _error(404, "ExtensionNotFound",
                  "Extension with alias %s does not exist" % alias)


def _collection(name):
    if name not in COLLECTIONS:
        raise wz_exceptions.NotFound()
    return COLLECTIONS[name]


@bp.get("/v2.0/<name>")
def index(name):
    key, _ = _collection(name)
    return flask.jsonify({key: []})


@bp.get("/v2.0/<name>/<resource_id>")
def show(name, resource_id):
    _, not_found = _collection(name)
    return _error(404, not_found, "%s %s could not be found." % (
        name.rstrip("s").replace("-", " ").capitalize(), resource_id))


@bp.route("/v2.0/<name>", methods=["POST"])
def create(name):
    _collection(name)
    return _error(403, "PolicyNotAuthorized",
                  "ministack has no network service: %s cannot be "
                  "created." % name)


@bp.route("/v2.0/<name>/<resource_id>", methods=["PUT", "DELETE"])
def change(name, resource_id):
    return show(name, resource_id)


def _domain_error(exc):
    return _error(exc.code or 500, type(exc).__name__, exc.format_message())


def _http_error(exc):
    return _error(exc.code or 500, exc.name.replace(" ", ""),
                  exc.description or exc.name)


def create_app(auth_strategy="noauth", conf=None,
               max_request_body_size=None):
    """The network WSGI app (wrapped in the context middleware)."""
    return side_app.build("miniapi.network", bp, _domain_error, _http_error,
                          auth_strategy=auth_strategy, conf=conf,
                          max_request_body_size=max_request_body_size)
