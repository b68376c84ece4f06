"""The small APIs the miniapi daemon serves next to the compute API.

The image API (Glance subset, :9292) and the network API (reports no
networks, :9696) are each one Flask blueprint with its own error shape,
behind the same ContextMiddleware as the compute API (tokens, request
ids, oslo.middleware's body size limit).
"""

import flask
from werkzeug import exceptions as wz_exceptions

from ministack import exception
from ministack import wsgi
from ministack.trace import middleware as trace_middleware


def build(name, blueprint, domain_error, http_error, *,
          auth_strategy="noauth", conf=None, max_request_body_size=None,
          config=None):
    """``blueprint`` as a WSGI app wrapped in the context middleware.

    :param domain_error, http_error: the API's handlers of
        :class:`~ministack.exception.MinistackException` and werkzeug's
        HTTP exceptions (each answers in its API's error shape).
    :param conf: the daemon's ConfigOpts; ``keystone`` validates tokens
        with its ``[keystone_authtoken]``.
    :param max_request_body_size: ``[oslo_middleware]
        max_request_body_size``; oslo.middleware's default when None.
    :param config: extra ``app.config`` entries.
    """
    app = flask.Flask(name)
    app.json.sort_keys = False
    app.url_map.strict_slashes = False
    # No redirect for "//": its Location would echo any long path back.
    app.url_map.merge_slashes = False
    app.config.update(config or {})
    app.register_blueprint(blueprint)
    app.register_error_handler(exception.MinistackException, domain_error)
    app.register_error_handler(wz_exceptions.HTTPException, http_error)
    return trace_middleware.wrap(wsgi.ContextMiddleware(
        app, auth_strategy=auth_strategy, conf=conf,
        max_request_body_size=(max_request_body_size or
                               wsgi.DEFAULT_MAX_REQUEST_BODY_SIZE)))
