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
    return services().conf.osapi_max_request_body_size


def drop_project(endpoint, values):
    """Blueprint url_value_preprocessor: the project in the URL is already
    in the request context (ContextMiddleware)."""
    values.pop("project_id", None)
