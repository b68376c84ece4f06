"""The keystone v3 subset as a Flask app: ``create_app(conf, store,
formatter)``.

Routes (what the clients use, openstack-clients.md §1):

* ``GET /`` 300 and ``GET /v3`` 200: version discovery (no token);
* ``POST /v3/auth/tokens``: password, token and application credential
  methods; 201 with ``X-Subject-Token``;
* ``GET|HEAD /v3/auth/tokens``: validate ``X-Subject-Token`` (the caller's
  own token, or any token for the admin and service roles);
* ``GET /v3/auth/catalog``: the catalog of the caller's token.

Errors use keystone's body ``{"error": {"code", "title", "message"}}``;
a 401 also carries ``WWW-Authenticate: Keystone uri="..."``. No response
or log line ever contains a password, a secret or a token.
"""

import json
import logging

import flask
from werkzeug import exceptions as wz_exceptions

from ministack import config as ms_config
from ministack import exception as ms_exception
from ministack import wsgi
from ministack.identity import auth
from ministack.identity import exception
from ministack.identity import views

LOG = logging.getLogger(__name__)

_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
           404: "Not Found", 405: "Method Not Allowed",
           413: "Request Entity Too Large", 500: "Internal Server Error"}

bp = flask.Blueprint("identity", __name__)


def error_body(code, message):
    """Keystone's error body (``keystone/exception.py`` Error)."""
    return {"error": {"code": code, "title": _TITLES.get(code, "Error"),
                      "message": message}}


def error_response(code, message):
    """A response carrying keystone's error body."""
    body = error_body(code, message)
    response = flask.Response(json.dumps(body), status=code,
                              mimetype="application/json")
    if code == 401:
        response.headers["WWW-Authenticate"] = 'Keystone uri="%s"' % \
            flask.request.host_url.rstrip("/")
    return response


def _ext():
    return flask.current_app.extensions["ministack.identity"]


@bp.get("/")
def versions():
    """Multiple choices, as keystone's root answers."""
    body = {"versions": {"values": [views.version(flask.request.host_url)]}}
    return flask.Response(json.dumps(body), status=300,
                          mimetype="application/json")


@bp.get("/v3")
def version_v3():
    return flask.jsonify({"version": views.version(flask.request.host_url)})


def _json_body():
    data = flask.request.get_data(cache=False)
    try:
        body = json.loads(data) if data else None
    except ValueError:
        raise exception.ValidationError(
            field="body", reason="the request body is not valid JSON"
        ) from None
    found = wsgi.bad_text(body)
    if found is not None:
        # A lone surrogate (a "\ud800" escape) or a NUL reaches no
        # database query and no log line.
        path, _, reason = found
        raise exception.ValidationError(
            field=".".join(str(p) for p in path) or "body", reason=reason)
    return body


@bp.post("/v3/auth/tokens")
def issue_token():
    """Authenticate; 201 with the token in ``X-Subject-Token``."""
    ext = _ext()
    body = _json_body()
    if not isinstance(body, dict):
        raise exception.ValidationError(field="auth",
                                        reason="expected an object")
    token_id, token = ext.authenticator.authenticate(body)
    LOG.info("Issued token for user %s in project %s (audit %s)",
             token.user_id, token.project_id, token.audit_id)
    include_catalog = "nocatalog" not in flask.request.args
    response = flask.jsonify(views.token_body(token, ext.catalog_conf,
                                              include_catalog))
    response.status_code = 201
    response.headers["X-Subject-Token"] = token_id
    return response


def _caller():
    """The caller's verified token (401 without a valid one)."""
    return _ext().formatter.verify(
        flask.request.headers.get("X-Auth-Token", ""))


@bp.route("/v3/auth/tokens", methods=["GET", "HEAD"])
def validate_token():
    """Validate ``X-Subject-Token`` (keystone's identity:validate_token).

    ``?allow_expired=1`` accepts a recently expired subject, for admin
    and service callers only.
    """
    caller = _caller()
    privileged = {"admin", "service"} & set(caller.role_names)
    allow_expired = 0
    if flask.request.args.get("allow_expired", "").lower() in ("1", "true"):
        if not privileged:
            raise ms_exception.Forbidden(
                action="identity:validate_token with allow_expired")
        allow_expired = _ext().allow_expired_window
    subject_id = flask.request.headers.get("X-Subject-Token", "")
    try:
        subject = _ext().formatter.verify(subject_id,
                                          allow_expired=allow_expired)
    except exception.Unauthorized:
        raise exception.TokenNotFound() from None
    if not privileged and subject.user_id != caller.user_id:
        raise ms_exception.Forbidden(action="identity:validate_token")
    include_catalog = "nocatalog" not in flask.request.args
    response = flask.jsonify(views.token_body(subject, _ext().catalog_conf,
                                              include_catalog))
    response.headers["X-Subject-Token"] = subject_id
    if flask.request.method == "HEAD":
        response.set_data(b"")
    return response


@bp.get("/v3/auth/catalog")
def get_catalog():
    caller = _caller()
    return flask.jsonify({
        "catalog": views.catalog(_ext().catalog_conf, caller.project_id),
        "links": {"self": flask.request.base_url, "previous": None,
                  "next": None}})


def _domain_error(exc):
    code = getattr(exc, "code", 500) or 500
    if code >= 500:
        LOG.error("Identity API failure: %s", exc.format_message())
        return error_response(500, "An unexpected error prevented the "
                                   "server from fulfilling your request.")
    return error_response(code, exc.format_message())


def _http_error(exc):
    return error_response(exc.code or 500, exc.description or exc.name)


def _unexpected(exc):
    LOG.exception("Unexpected identity API error")
    return error_response(500, "An unexpected error prevented the server "
                               "from fulfilling your request.")


class _Ext:
    def __init__(self, authenticator, formatter, catalog_conf,
                 allow_expired_window):
        self.authenticator = authenticator
        self.formatter = formatter
        self.catalog_conf = catalog_conf
        self.allow_expired_window = allow_expired_window


def create_app(conf, store, formatter):
    """The identity WSGI app.

    :param conf: ConfigOpts with ``[identity]`` and ``[catalog]``
        registered (``ministack.identity.conf``).
    :param store: an :class:`~ministack.identity.store.IdentityStore`.
    :param formatter: a :class:`~ministack.identity.tokens.TokenFormatter`.
    """
    app = flask.Flask("ministack.identity")
    app.json.sort_keys = False
    app.url_map.strict_slashes = False
    app.extensions["ministack.identity"] = _Ext(
        auth.Authenticator(store, formatter, conf.identity.token_expiration),
        formatter, conf.catalog, conf.identity.allow_expired_window)
    app.register_blueprint(bp)
    app.register_error_handler(ms_exception.MinistackException,
                               _domain_error)
    app.register_error_handler(wz_exceptions.HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
    app.after_request(_request_log)
    # oslo.middleware's sizelimit, as in keystone's pipeline: 413 in
    # keystone's error shape before the body is read.
    app.wsgi_app = wsgi.RequestBodySizeLimiter(
        app.wsgi_app, ms_config.max_request_body_size(conf),
        render=lambda exc: error_body(exc.code, exc.format_message()))
    return app


def _request_log(response):
    # Method, path and status only: headers carry tokens, bodies passwords.
    LOG.info('"%s %s" status: %s', flask.request.method, flask.request.path,
             response.status_code)
    return response
