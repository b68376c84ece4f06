"""Version discovery: ``GET /`` and ``GET /v2.1[/]`` (unauthenticated).

Clients discover the microversion range here before anything else
(keystoneauth, novaclient, OSC), so these routes never need a project.
"""

import flask

from miniapi.api.views import versions as views

bp = flask.Blueprint("versions", __name__)


@bp.get("/")
def index():
    """GET /: the versions list, 200 (nova answers 200, not 300, here)."""
    return flask.jsonify(views.version_list())


@bp.get("/v2")
@bp.get("/v2/")
def show_v2():
    """GET /v2: the deprecated v2.0 version document (tempest follows every
    listed self link)."""
    return flask.jsonify(views.version_v2())


@bp.get("/v2.1")
@bp.get("/v2.1/")
def show_v21():
    """GET /v2.1: the v2.1 version document with its microversion range."""
    return flask.jsonify(views.version_v21())
