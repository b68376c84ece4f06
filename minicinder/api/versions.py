"""Version discovery: ``GET /`` (300) and ``GET /v3/`` (200).

Both answer the same ``{"versions": [...]}`` list; cinderclient reads the
entry whose ``version`` contains ``3.`` and keystoneauth needs ``id``,
``status`` and a ``self`` link.
"""

import flask

from minicinder.api import microversions as mv

bp = flask.Blueprint("versions", __name__)


def _versions():
    base = flask.request.host_url.rstrip("/")
    return {"versions": [{
        "id": "v3.0", "status": "CURRENT",
        "version": mv.MAX_VERSION, "min_version": mv.MIN_VERSION,
        "updated": "2023-08-31T00:00:00Z",
        "links": [{"rel": "describedby", "type": "text/html",
                   "href": "https://docs.openstack.org/"},
                  {"rel": "self", "href": base + "/v3/"}],
        "media-types": [{
            "base": "application/json",
            "type": "application/vnd.openstack.volume+json;version=3"}],
    }]}


@bp.get("/")
def list_versions():
    """300 Multiple Choices, as upstream."""
    return flask.jsonify(_versions()), 300


@bp.get("/v3")
@bp.get("/v3/")
def show_version():
    return flask.jsonify(_versions())
