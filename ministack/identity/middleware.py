"""Token validation for ``auth_strategy = keystone`` (the part of
keystonemiddleware's auth_token that ministack needs).

:class:`TokenValidator` turns a request's headers into the fields of a
:class:`ministack.context.RequestContext`, or refuses it:

* ``X-Auth-Token`` is verified locally with the shared Fernet key (no call
  to the identity API): missing, tampered, foreign or expired gives 401;
* ``X-Service-Token``, when sent, must verify too (401 otherwise); when it
  carries the ``service`` role the context gets ``is_service`` and
  ``service_roles``, and the user token may be expired by up to
  ``allow_expired_window`` seconds (keystone's rule, so a long attach
  started by a user finishes);
* version discovery (``GET /``, ``GET /v2.1``, ``GET /v3/``...) needs no
  token, as upstream's pipelines route it around auth_token.

``ministack.wsgi.ContextMiddleware`` calls it; the 401 body is
keystonemiddleware's.
"""

import os
import re

from ministack.identity import conf as identity_conf
from ministack.identity import exception
from ministack.identity import tokens

# Unversioned and versioned roots: discovery, reachable without a token.
PUBLIC_PATH_RE = re.compile(r"^/(v[0-9][0-9.]*/?)?$")

# For services that build ContextMiddleware without a validator (the
# shared key's path then comes from the environment or the default).
KEY_FILE_ENV = "MINISTACK_SIGNING_KEY_FILE"

UNAUTHORIZED_MESSAGE = "The request you have made requires authentication."


def default_key_file():
    return os.environ.get(KEY_FILE_ENV) or identity_conf.DEFAULT_KEY_FILE


class TokenValidator:
    """Validate the tokens of one request.

    :param formatter: a :class:`tokens.TokenFormatter` (the shared key).
    :param allow_expired_window: seconds past expiry a user token is still
        accepted together with a valid service token.
    :param www_authenticate_uri: identity URL named in 401 responses.
    """

    def __init__(self, formatter, allow_expired_window=172800,
                 www_authenticate_uri=None):
        self.formatter = formatter
        self.allow_expired_window = allow_expired_window
        self.www_authenticate_uri = www_authenticate_uri

    @classmethod
    def from_conf(cls, conf):
        """Build from ``[identity]`` / ``[catalog]`` (registered on conf).

        :raises KeyFileInvalid: the shared key is missing or unreadable.
        """
        identity_conf.register_opts(conf)
        return cls(tokens.TokenFormatter.from_file(
                       conf.identity.signing_key_file),
                   conf.identity.allow_expired_window,
                   conf.catalog.identity_url)

    @classmethod
    def from_default_key(cls):
        return cls(tokens.TokenFormatter.from_file(default_key_file()))

    def is_public(self, environ):
        return environ.get("REQUEST_METHOD") in ("GET", "HEAD") and \
            bool(PUBLIC_PATH_RE.match(environ.get("PATH_INFO", "")))

    def context_fields(self, environ):
        """RequestContext keyword arguments for this request.

        :raises Unauthorized: no valid user token (or an invalid service
            token).
        """
        user_token_id = environ.get("HTTP_X_AUTH_TOKEN", "")
        service_token_id = environ.get("HTTP_X_SERVICE_TOKEN", "")
        fields = {}
        allow_expired = 0
        if service_token_id:
            service = self.formatter.verify(service_token_id)
            service_roles = service.role_names
            fields.update(service_token=service_token_id,
                          service_user_id=service.user_id,
                          service_user_name=service.user_name,
                          service_project_id=service.project_id,
                          service_project_name=service.project_name,
                          service_roles=service_roles,
                          is_service="service" in service_roles)
            if "service" in service_roles:
                allow_expired = self.allow_expired_window
        if not user_token_id:
            raise exception.Unauthorized()
        user = self.formatter.verify(user_token_id,
                                     allow_expired=allow_expired)
        fields.update(auth_token=user_token_id, user_id=user.user_id,
                      user_name=user.user_name, project_id=user.project_id,
                      project_name=user.project_name,
                      roles=user.role_names)
        return fields
