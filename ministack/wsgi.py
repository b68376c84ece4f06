"""WSGI plumbing shared by the two REST services (miniapi, minicinder).

* :class:`ContextMiddleware` builds the :class:`RequestContext` for every
  request and stamps the request-id headers on every response, faults
  included, as oslo.middleware's RequestId does upstream.
* :func:`fault` renders upstream's fault body
  ``{"badRequest": {"code": 400, "message": "..."}}``.
* :func:`serve` runs a Flask app under waitress (threaded, production-grade)
  until :func:`ministack.service` asks it to stop.
"""

import json
import logging
import re
import uuid

from ministack import context as ms_context
from ministack import exception

LOG = logging.getLogger(__name__)

ENV_CONTEXT = "ministack.context"

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

_REASONS = {401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}

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


class ContextMiddleware:
    """Build the request context and add request-id response headers.

    ``auth_strategy='noauth'`` trusts the caller, as upstream's noauth2
    does: the project comes from the URL (``project_re`` group 1), the user
    from an ``X-Auth-Token`` of the form ``user:project`` (or ``X-User-Id``)
    and the roles from ``X-Roles``; the user named ``admin`` gets the admin
    role.

    ``auth_strategy='keystone'`` validates ``X-Auth-Token`` (and
    ``X-Service-Token``) locally with the shared identity key
    (:class:`ministack.identity.middleware.TokenValidator`): the user,
    project and roles come from the token only. A missing, tampered or
    expired token gets 401 with keystonemiddleware's body; a project in
    the URL that is not the token's gets 404 (admins excepted). Version
    discovery (``GET /``, ``GET /v3/``...) needs no token.

    :param extra_request_id_headers: further header names that echo the
        request id (nova adds ``x-compute-request-id``).
    :param token_validator: the TokenValidator for ``keystone``; when
        omitted it is built from the key file named by
        ``$MINISTACK_SIGNING_KEY_FILE`` or the default path.
    :raises ministack.exception.ConfigError: ``keystone`` and the key file
        is unusable (at construction, i.e. at daemon start-up).
    """

    def __init__(self, app, project_re=None, extra_request_id_headers=(),
                 auth_strategy="noauth", token_validator=None):
        self.app = app
        self.project_re = re.compile(project_re) if project_re else None
        self.extra_headers = tuple(extra_request_id_headers)
        self.auth_strategy = auth_strategy
        self.validator = None
        if auth_strategy == "keystone":
            from ministack.identity import middleware
            self.validator = token_validator or \
                middleware.TokenValidator.from_default_key()
        elif auth_strategy != "noauth":
            raise exception.ConfigError(
                reason="unknown auth_strategy %r" % auth_strategy)

    def __call__(self, environ, start_response):
        request_id = new_request_id()
        inbound = environ.get("HTTP_X_OPENSTACK_REQUEST_ID", "")
        global_request_id = inbound if _GLOBAL_ID_RE.match(inbound) else None

        def _start_response(status, headers, exc_info=None):
            headers = list(headers)
            headers.append(("x-openstack-request-id", request_id))
            for name in self.extra_headers:
                headers.append((name, request_id))
            return start_response(status, headers, exc_info)

        if self.validator is not None:
            try:
                ctxt = self._keystone_context(environ, request_id,
                                              global_request_id)
            except exception.MinistackException as exc:
                return self._refuse(exc, _start_response)
        else:
            ctxt = self._build_context(environ, request_id,
                                       global_request_id)
        environ[ENV_CONTEXT] = ctxt
        return self.app(environ, _start_response)

    def _url_project(self, environ):
        if self.project_re:
            match = self.project_re.match(environ.get("PATH_INFO", ""))
            if match:
                return match.group(1)
        return None

    def _keystone_context(self, environ, request_id, global_request_id):
        """The context from validated tokens (see the class docstring)."""
        from ministack.identity import exception as id_exception
        ids = {"request_id": request_id,
               "global_request_id": global_request_id, "overwrite": True}
        try:
            fields = self.validator.context_fields(environ)
        except id_exception.Unauthorized:
            if not self.validator.is_public(environ):
                raise
            # Discovery without (or with a bad) token: an anonymous context.
            return ms_context.RequestContext(roles=[], **ids)
        ctxt = ms_context.RequestContext(**fields, **ids)
        url_project = self._url_project(environ)
        if url_project and url_project != ctxt.project_id and \
                not ctxt.is_admin:
            LOG.info("Refused: URL project %s is not the token's (%s)",
                     url_project, ctxt.project_id)
            raise exception.NotFound(
                message="Project %s could not be found." % url_project)
        return ctxt

    def _refuse(self, exc, start_response):
        """Answer 401 (keystonemiddleware's body) or the error's code."""
        code = getattr(exc, "code", 500) or 500
        headers = [("Content-Type", "application/json")]
        if code == 401:
            body = {"error": {"code": 401, "title": "Unauthorized",
                              "message": exc.format_message()}}
            uri = self.validator.www_authenticate_uri
            headers.append(("WWW-Authenticate",
                            'Keystone uri="%s"' % uri if uri else
                            "Keystone"))
        else:
            body = fault_body(code, exc.format_message())
        data = json.dumps(body).encode()
        headers.append(("Content-Length", str(len(data))))
        start_response("%d %s" % (code, _REASONS.get(code, "Error")),
                       headers)
        return [data]

    def _build_context(self, environ, request_id, global_request_id):
        project_id = None
        if self.project_re:
            match = self.project_re.match(environ.get("PATH_INFO", ""))
            if match:
                project_id = match.group(1)
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


def get_context(flask_request):
    """The RequestContext the middleware attached to this request."""
    return flask_request.environ[ENV_CONTEXT]


def serve(app, host, port, threads=8, stop_event=None, ident="ministack"):
    """Serve ``app`` on host:port until ``stop_event`` is set.

    Runs waitress in the calling thread. ``stop_event`` (a threading.Event)
    is watched by a small thread that stops the worker threads and closes
    *every* channel, not just the listening socket: a client holding a
    keep-alive connection (any ``requests.Session``) would otherwise keep
    the loop, and the daemon, alive after SIGTERM.
    """
    import threading

    from waitress import wasyncore
    from waitress.server import create_server

    server = create_server(app, host=host, port=port, threads=threads,
                           ident=ident, clear_untrusted_proxy_headers=True)
    if stop_event is not None:
        def _watch():
            stop_event.wait()
            server.task_dispatcher.shutdown()
            wasyncore.close_all(server._map)
        threading.Thread(target=_watch, daemon=True, name="wsgi-stop").start()
    LOG.info("Serving on http://%s:%s", host, port)
    try:
        server.run()
    except (OSError, ValueError):
        # Closing the channels from the watcher ends the loop with a
        # closed-socket error; anything before the stop was asked is real.
        if stop_event is None or not stop_event.is_set():
            raise
