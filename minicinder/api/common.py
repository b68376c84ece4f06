"""Per-request helpers shared by the blueprints."""

import flask

from minicinder import exception
from ministack import wsgi

EXTENSION = "minicinder"


def services():
    """The collaborators ``create_app`` was given (volumes, attachments,
    actions, conf)."""
    return flask.current_app.extensions[EXTENSION]


def version():
    """The microversion this request runs at."""
    return flask.g.api_version


def require_version(minimum):
    """404 below ``minimum``, as upstream's versioned methods."""
    if not version().matches(minimum):
        raise exception.VersionNotFoundForAPIMethod()


def context():
    return wsgi.get_context(flask.request)


def max_body():
    """``[oslo_middleware] max_request_body_size`` (read once by
    ``create_app``): the limit the WSGI middleware enforces, applied
    again where a body is read."""
    return services().max_body


def drop_project(endpoint, values):
    """Blueprint url_value_preprocessor: the project in the URL is not a
    view argument; it is remembered for the app's check that it is the
    request context's (``app._check_url_project``)."""
    flask.g.url_project_id = values.pop("project_id", None)
