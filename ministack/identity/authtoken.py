"""``auth_strategy = keystone``: keystonemiddleware's auth_token in front
of a REST service, and the request context built from what it says.

Upstream nova and cinder run, in every API pipeline, ``authtoken``
(keystonemiddleware's :class:`~keystonemiddleware.auth_token.AuthProtocol`)
then ``keystonecontext`` (``NovaKeystoneContext``,
``CinderKeystoneContext``). ministack does the same:

* :func:`auth_protocol` builds the real AuthProtocol on the service's
  ``ConfigOpts`` (its ``[keystone_authtoken]`` section, as upstream's
  ``oslo_config_project``): it strips any identity headers the client
  sent, validates ``X-Auth-Token`` (and ``X-Service-Token``) at keystone
  as the service user, caches the answer in the process for
  ``token_cache_time`` seconds, answers 401 with its own body and
  ``WWW-Authenticate`` header, and sets ``X-User-Id``, ``X-Project-Id``,
  ``X-Roles``, ``X-Service-Roles``, ``X-Identity-Status``...;
* :func:`context_from_environ` is the keystonecontext step: the request
  context from those headers (oslo.context's ``from_environ``, as
  upstream), refused when no user was confirmed;
* :func:`is_public` says which requests skip both: version discovery
  (``GET /``, ``GET /v2.1``, ``GET /v3/``), which upstream's paste
  pipelines route around auth_token;
* :func:`malformed_token` names a token no keystone could have issued
  (too long, or not printable ASCII): it gets auth_token's 401 without
  a trip to keystone. Passed on, a 20000-byte token overflows keystone's
  header limit and auth_token answers 503 "Keystone unavailable" to a
  client error (a ministack deviation, docs/deviations.md).

``ministack.wsgi.ContextMiddleware`` wires them together.
"""

import re

from keystonemiddleware import auth_token

from ministack import context as ms_context
from ministack import exception

GROUP = "keystone_authtoken"

# Unversioned and versioned roots: discovery, reachable without a token.
PUBLIC_PATH_RE = re.compile(r"^/(v[0-9][0-9.]*/?)?$")

UNAUTHORIZED_BODY = {"error": {
    "code": 401, "title": "Unauthorized",
    "message": "The request you have made requires authentication."}}


#: Fernet tokens are about 200 bytes (keystone's ``max_token_size`` is
#: 255) and JWS tokens under 1 KiB; keystone's server refuses header
#: fields past 16 KiB, which auth_token would report as keystone down.
MAX_TOKEN_BYTES = 8192
_TOKEN_RE = re.compile(r"[\x21-\x7e]{1,%d}\Z" % MAX_TOKEN_BYTES)
_TOKEN_HEADERS = (("HTTP_X_AUTH_TOKEN", "X-Auth-Token"),
                  ("HTTP_X_SERVICE_TOKEN", "X-Service-Token"))


def malformed_token(environ):
    """The header carrying a token keystone cannot have issued (longer
    than :data:`MAX_TOKEN_BYTES`, or with bytes outside printable ASCII),
    or None. An absent or empty header is auth_token's to judge."""
    for key, name in _TOKEN_HEADERS:
        value = environ.get(key)
        if value and not _TOKEN_RE.match(value):
            return name
    return None


def unauthorized_headers(conf):
    """auth_token's ``WWW-Authenticate`` header for a 401 answered
    before it (``[keystone_authtoken] www_authenticate_uri``)."""
    group = conf[GROUP]
    uri = getattr(group, "www_authenticate_uri", None) or \
        getattr(group, "auth_uri", None)
    return [("WWW-Authenticate", 'Keystone uri="%s"' % uri)] if uri else []


def is_public(environ):
    """Version discovery: answered without a token."""
    return environ.get("REQUEST_METHOD") in ("GET", "HEAD") and \
        bool(PUBLIC_PATH_RE.match(environ.get("PATH_INFO", "")))


def auth_protocol(app, conf):
    """keystonemiddleware's auth_token around ``app``, configured from
    ``conf``'s ``[keystone_authtoken]`` (registered there if needed).

    :raises ministack.exception.ConfigError: no ``auth_type`` (the
        middleware could not authenticate itself to keystone, and every
        request would fail).
    """
    protocol = auth_token.AuthProtocol(app, {"oslo_config_config": conf})
    if not conf[GROUP].auth_type:
        raise exception.ConfigError(
            reason="auth_strategy = keystone needs [%s] auth_type "
                   "(password) and the service user's credentials" % GROUP)
    return protocol


def context_from_environ(environ, **kwargs):
    """The request context auth_token's headers describe, or None when
    no user was confirmed (the caller answers 401).

    As upstream's keystonecontext: oslo.context's ``from_environ`` reads
    ``X-User-Id``, ``X-Project-Id``, ``X-Roles``, ``X-Auth-Token``,
    ``X-Service-Token``, ``X-Service-Roles``... A service token reaches
    the headers only when keystonemiddleware accepted it, which with
    ``service_token_roles_required`` means it carries the ``service``
    role: the call is then a service's (``is_service``).
    """
    if environ.get("HTTP_X_IDENTITY_STATUS") != "Confirmed":
        return None
    ctxt = ms_context.RequestContext.from_environ(environ, **kwargs)
    if ctxt.user_id is None:
        return None
    ctxt.is_service = "service" in (ctxt.service_roles or [])
    return ctxt

