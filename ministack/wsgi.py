"""WSGI plumbing shared by the two REST services (miniapi, minicinder).

* :class:`ContextMiddleware` builds the :class:`RequestContext` for every
  request and stamps the request-id headers on every response, faults
  included, as oslo.middleware's RequestId does upstream.
* :func:`fault` renders upstream's fault body
  ``{"badRequest": {"code": 400, "message": "..."}}``.
* :class:`RequestBodySizeLimiter` refuses bodies larger than
  ``[oslo_middleware] max_request_body_size`` with 413, as
  oslo.middleware's sizelimit does in front of every upstream API.

Serving an app is :mod:`ministack.wsgi_server`'s.
"""

import json
import logging
import re
import uuid

from ministack import context as ms_context
from ministack import exception

LOG = logging.getLogger(__name__)

ENV_CONTEXT = "ministack.context"
# oslo.middleware's request_id keys (oslo.context reads them).
ENV_REQUEST_ID = "openstack.request_id"
ENV_GLOBAL_REQUEST_ID = "openstack.global_request_id"

# The fault names of cinder/api/openstack/wsgi.py and nova's equivalent.
FAULT_NAMES = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    405: "badMethod",
    406: "notAcceptable",
    409: "conflictingRequest",
    413: "overLimit",
    415: "badMediaType",
    501: "notImplemented",
}

_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
            404: "Not Found", 413: "Request Entity Too Large"}

# oslo.middleware's default for [oslo_middleware] max_request_body_size
# (112 KiB), which nova, cinder, keystone and glance all run with.
DEFAULT_MAX_REQUEST_BODY_SIZE = 114688

_GLOBAL_ID_RE = re.compile(
    r"^req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$")


def new_request_id():
    return "req-%s" % uuid.uuid4()


def fault_body(code, message, fallback="computeFault"):
    """Upstream's JSON fault body for HTTP status ``code``."""
    name = FAULT_NAMES.get(code, fallback)
    return {name: {"code": code, "message": message}}


def fault(code, message, fallback="computeFault"):
    """A Flask response carrying the fault body (import Flask lazily)."""
    import flask
    response = flask.Response(
        json.dumps(fault_body(code, message, fallback)), status=code,
        mimetype="application/json")
    return response


class RequestBodyTooLarge(exception.MinistackException):
    """413 with oslo.middleware's sizelimit message."""
    msg_fmt = ("Request is too large. Larger than max_request_body_size "
               "(%(limit)s).")
    code = 413


def content_length(environ):
    """CONTENT_LENGTH as an int, None when absent or not a number (the
    framework then treats the body as empty or unterminated). A length
    too long to convert is too large anyway."""
    raw = (environ.get("CONTENT_LENGTH") or "").strip()
    if not raw or not raw.isascii() or not raw.isdigit():
        return None
    return int(raw) if len(raw) <= 18 else 10 ** 18


class LimitingReader:
    """``wsgi.input`` of a body of unknown length (chunked): reading past
    ``limit`` bytes raises :class:`RequestBodyTooLarge` (oslo.middleware's
    LimitingReader). A read never asks the stream for more than one byte
    past the limit, so an endless body costs at most ``limit + 1`` bytes
    of memory."""

    def __init__(self, stream, limit):
        self.stream = stream
        self.limit = limit
        self.bytes_read = 0

    def _budget(self, size):
        left = self.limit + 1 - self.bytes_read
        return left if size is None or size < 0 or size > left else size

    def _count(self, data):
        self.bytes_read += len(data)
        if self.bytes_read > self.limit:
            raise RequestBodyTooLarge(limit=self.limit)
        return data

    def read(self, size=-1):
        return self._count(self.stream.read(self._budget(size)))

    def readline(self, size=-1):
        return self._count(self.stream.readline(self._budget(size)))

    def __iter__(self):
        while True:
            line = self.readline()
            if not line:
                return
            yield line


def _json_response(start_response, code, body, headers=()):
    data = json.dumps(body).encode()
    headers = [("Content-Type", "application/json"),
               ("Content-Length", str(len(data)))] + list(headers)
    start_response("%d %s" % (code, _REASONS.get(code, "Error")), headers)
    return [data]


class RequestBodySizeLimiter:
    """Refuse request bodies larger than ``max_request_body_size`` bytes.

    oslo.middleware's ``RequestBodySizeLimiter`` semantics, which every
    upstream API pipeline runs before authentication: a declared
    ``Content-Length`` above the limit is answered 413 without reading
    the body; a body of unknown length (chunked) is read through a
    :class:`LimitingReader`, and reading past the limit raises
    :class:`RequestBodyTooLarge`, which the application's error handler
    renders as its 413 fault. ``render(exc)`` gives the JSON body of the
    413 (default: the compute/volume fault ``overLimit``; a service with
    another error shape passes its own).
    """

    def __init__(self, app, max_request_body_size=None, render=None):
        self.app = app
        self.max_request_body_size = (
            max_request_body_size or DEFAULT_MAX_REQUEST_BODY_SIZE)
        self.render = render or (
            lambda exc: fault_body(exc.code, exc.format_message()))

    def refusal(self, environ):
        """The RequestBodyTooLarge to answer with, or None (the body of
        unknown length is then wrapped in a LimitingReader)."""
        limit = self.max_request_body_size
        length = content_length(environ)
        if length is not None:
            if length > limit:
                LOG.info("Refused a %s-byte request body (limit %s)",
                         length, limit)
                return RequestBodyTooLarge(limit=limit)
        elif environ.get("wsgi.input") is not None:
            environ["wsgi.input"] = LimitingReader(environ["wsgi.input"],
                                                   limit)
        return None

    def __call__(self, environ, start_response):
        refused = self.refusal(environ)
        if refused is not None:
            return _json_response(start_response, refused.code,
                                  self.render(refused))
        return self.app(environ, start_response)


class ContextMiddleware:
    """Build the request context and add request-id response headers.

    ``auth_strategy='noauth'`` trusts the caller, as upstream's noauth2
    does: the project comes from the URL (``project_re`` group 1), the user
    from an ``X-Auth-Token`` of the form ``user:project`` (or ``X-User-Id``)
    and the roles from ``X-Roles``; the user named ``admin`` gets the admin
    role.

    ``auth_strategy='keystone'`` runs upstream's ``authtoken`` and
    ``keystonecontext`` steps (:mod:`ministack.identity.authtoken`):
    keystonemiddleware validates ``X-Auth-Token`` (and ``X-Service-Token``)
    at keystone with the ``[keystone_authtoken]`` options of ``conf``, and
    the context comes from the headers it sets, never from the client's. A
    missing, invalid, expired or revoked token gets keystonemiddleware's
    401, and so does, without asking keystone, a token no keystone could
    have issued (:func:`~ministack.identity.authtoken.malformed_token`).
    Version discovery (``GET /``, ``GET /v3/``...) needs no token.
    Whether a project in the URL is the token's is the application's
    check, made once the route is known (:func:`url_project_mismatch`), as
    upstream's ``Resource`` makes it.

    With ``max_request_body_size`` a body larger than that is refused
    with 413 before anything else (oslo.middleware's sizelimit runs
    before authentication upstream), still with the request-id headers.

    :param extra_request_id_headers: further header names that echo the
        request id (nova adds ``x-compute-request-id``).
    :param conf: the service's ConfigOpts (``keystone``: its
        ``[keystone_authtoken]`` section configures auth_token).
    :param max_request_body_size: bytes (:class:`RequestBodySizeLimiter`);
        None: no limit here.
    :raises ministack.exception.ConfigError: an unknown strategy, or
        ``keystone`` without a usable ``[keystone_authtoken]``.
    """

    def __init__(self, app, project_re=None, extra_request_id_headers=(),
                 auth_strategy="noauth", conf=None,
                 max_request_body_size=None):
        self.app = app
        self.body_limiter = None
        self.max_request_body_size = None
        if max_request_body_size is not None:
            self.body_limiter = RequestBodySizeLimiter(
                None, max_request_body_size)
            self.max_request_body_size = \
                self.body_limiter.max_request_body_size
        self.project_re = re.compile(project_re) if project_re else None
        self.extra_headers = tuple(extra_request_id_headers)
        self.auth_strategy = auth_strategy
        self.auth_token = None
        if auth_strategy == "keystone":
            if conf is None:
                raise exception.ConfigError(
                    reason="auth_strategy = keystone needs the service's "
                           "config ([keystone_authtoken])")
            from ministack.identity import authtoken
            self.auth_token = authtoken.auth_protocol(self._keystone_context,
                                                      conf)
            self.unauthorized_headers = authtoken.unauthorized_headers(conf)
        elif auth_strategy != "noauth":
            raise exception.ConfigError(
                reason="unknown auth_strategy %r" % auth_strategy)

    def __call__(self, environ, start_response):
        request_id = new_request_id()
        inbound = environ.get("HTTP_X_OPENSTACK_REQUEST_ID", "")
        global_request_id = inbound if _GLOBAL_ID_RE.match(inbound) else None
        # Where oslo.middleware's RequestId leaves them (oslo.context's
        # from_environ reads them there).
        environ[ENV_REQUEST_ID] = request_id
        environ[ENV_GLOBAL_REQUEST_ID] = global_request_id

        def _start_response(status, headers, exc_info=None):
            headers = list(headers)
            headers.append(("x-openstack-request-id", request_id))
            for name in self.extra_headers:
                headers.append((name, request_id))
            return start_response(status, headers, exc_info)

        if self.body_limiter is not None:
            refused = self.body_limiter.refusal(environ)
            if refused is not None:
                return _json_response(_start_response, refused.code,
                                      fault_body(refused.code,
                                                 refused.format_message()))
        if self.auth_token is None:
            environ[ENV_CONTEXT] = self._build_context(
                environ, request_id, global_request_id)
            return self.app(environ, _start_response)
        from ministack.identity import authtoken
        if authtoken.is_public(environ):
            # Discovery: no token needed, none looked at.
            environ[ENV_CONTEXT] = ms_context.RequestContext(
                roles=[], request_id=request_id,
                global_request_id=global_request_id, overwrite=True)
            return self.app(environ, _start_response)
        if authtoken.malformed_token(environ):
            return _json_response(_start_response, 401,
                                  authtoken.UNAUTHORIZED_BODY,
                                  self.unauthorized_headers)
        return self.auth_token(environ, _start_response)

    def _keystone_context(self, environ, start_response):
        """keystonecontext: behind auth_token, the context from the
        headers it set (401 if it confirmed no user)."""
        from ministack.identity import authtoken
        ctxt = authtoken.context_from_environ(
            environ, request_id=environ[ENV_REQUEST_ID],
            global_request_id=environ[ENV_GLOBAL_REQUEST_ID],
            overwrite=True)
        if ctxt is None:
            return _json_response(start_response, 401,
                                  authtoken.UNAUTHORIZED_BODY)
        environ[ENV_CONTEXT] = ctxt
        return self.app(environ, start_response)

    def _url_project(self, environ):
        if self.project_re:
            match = self.project_re.match(environ.get("PATH_INFO", ""))
            if match:
                return match.group(1)
        return None

    def _build_context(self, environ, request_id, global_request_id):
        project_id = self._url_project(environ)
        token = environ.get("HTTP_X_AUTH_TOKEN", "")
        user_id = environ.get("HTTP_X_USER_ID")
        if ":" in token:
            user_id, token_project = token.split(":", 1)
            project_id = project_id or token_project
        user_id = user_id or "admin"
        roles = [r.strip() for r in
                 environ.get("HTTP_X_ROLES", "").split(",") if r.strip()]
        if user_id == "admin" and "admin" not in roles:
            roles.append("admin")
        if "member" not in roles:
            roles.append("member")
        is_service = "service" in roles
        return ms_context.RequestContext(
            user_id=user_id, project_id=project_id, roles=roles,
            request_id=request_id, global_request_id=global_request_id,
            is_service=is_service, overwrite=True)


def url_project_mismatch(ctxt, url_project):
    """Whether a URL naming ``url_project`` must be refused for ``ctxt``.

    Upstream's ``Resource._process_stack`` (nova and cinder alike): once
    the route matched, a project id in the URL that is not the request
    context's is a malformed URL (400), whoever asks, admins included.
    Each service words the message as its upstream does.
    """
    return bool(ctxt is not None and url_project and
                url_project != ctxt.project_id)


def get_context(flask_request):
    """The RequestContext the middleware attached to this request."""
    return flask_request.environ[ENV_CONTEXT]
