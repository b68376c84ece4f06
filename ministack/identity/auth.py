"""``POST /v3/auth/tokens``: check the request body, run the methods,
resolve the scope, issue the token.

Accepted exactly as keystoneauth sends them (see
/work/shared/reference/openstack-clients.md §1.3):

* ``password``: ``user`` by ``id``, or by ``name`` with an optional
  ``domain`` (``id`` or ``name``; absent means Default);
* ``token``: ``token.id`` (also sent as ``X-Auth-Token``); the new token
  never outlives the old one;
* ``application_credential``: by ``id``, or by ``name`` + ``user``; no
  ``scope`` allowed; the token is scoped to the credential's project with
  the credential's roles (those the user still holds).

A malformed body is 400; every credential failure is the same 401
sentence, so a caller cannot probe which users exist. ministack issues
project-scoped tokens only: with no scope the user's default project is
used; domain, system and trust scopes are refused with 401 (a documented
deviation).
"""

import datetime
import logging

from ministack.identity import exception
from ministack.identity import passwords
from ministack.identity import store as store_mod

LOG = logging.getLogger(__name__)

METHODS = ("password", "token", "application_credential")

# Hashed once so a lookup of an unknown user costs what a real check
# costs (no timing oracle for user names).
_DUMMY_HASH = passwords.hash_password("ministack-timing-equaliser")


def _require(container, key, kind, field):
    value = container.get(key) if isinstance(container, dict) else None
    if not isinstance(value, kind):
        raise exception.ValidationError(
            field=field, reason="expected %s" % (
                "an object" if kind is dict else
                "a list" if kind is list else "a string"))
    return value


def _unauthorized(log_reason, *args):
    # The reason goes to the log (no secrets in it), never to the caller.
    LOG.info("Authentication refused: " + log_reason, *args)
    return exception.Unauthorized()


class Authenticator:
    """Runs one authentication request against the identity store.

    :param store: an :class:`IdentityStore`.
    :param formatter: a :class:`tokens.TokenFormatter`.
    :param lifetime: token lifetime in seconds.
    """

    def __init__(self, store, formatter, lifetime):
        self.store = store
        self.formatter = formatter
        self.lifetime = lifetime

    def authenticate(self, body):
        """The new ``(token_id, Token)`` for a request body.

        :raises ValidationError: malformed body (400).
        :raises Unauthorized: bad credentials, scope or access (401).
        """
        auth = _require(body, "auth", dict, "auth")
        identity = _require(auth, "identity", dict, "auth.identity")
        methods = _require(identity, "methods", list, "identity.methods")
        if not methods or not all(isinstance(m, str) for m in methods):
            raise exception.ValidationError(
                field="identity.methods",
                reason="a non-empty list of method names")
        for method in methods:
            if method not in METHODS:
                raise _unauthorized("unsupported method %s", method)
            _require(identity, method, dict, "identity.%s" % method)
        scope = auth.get("scope")
        if "application_credential" in methods:
            if len(methods) > 1 or scope is not None:
                raise _unauthorized("application credential with %s",
                                    "other methods or a scope")
            return self._app_cred(identity["application_credential"])
        # With several methods they must all name the same user.
        user, previous = None, None
        for method in methods:
            if method == "password":
                found = self._password(identity["password"])
            else:
                previous = self._token(identity["token"])
                found = self.store.user(user_id=previous.user_id)
            if found is None or (user is not None and user.id != found.id):
                raise _unauthorized("methods disagree on the user")
            user = found
        if not user.enabled:
            raise _unauthorized("user %s is disabled", user.id)
        project = self._project(scope, user)
        roles = self.store.roles(user.id, project.id)
        if not roles:
            raise _unauthorized("user %s has no role on project %s",
                                user.id, project.id)
        all_methods = list(dict.fromkeys(
            list(previous.methods if previous else []) + methods))
        return self.formatter.issue(
            user.id, user.name, project.id, project.name, roles,
            all_methods, self.lifetime,
            expires_at=previous.expires_at if previous else None,
            audit_id=None)

    # -- methods ------------------------------------------------------------

    def _password(self, data):
        user_ref = _require(data, "user", dict, "password.user")
        secret = _require(user_ref, "password", str, "password.user.password")
        user = self._user_by_ref(user_ref, "password.user")
        if user is None:
            passwords.check_password(secret, _DUMMY_HASH)
            raise _unauthorized("unknown user")
        if not passwords.check_password(secret, user.password):
            raise _unauthorized("wrong password for user %s", user.id)
        return user

    def _user_by_ref(self, user_ref, field):
        """The user a request's ``user`` object names (by ``id``, or by
        ``name`` with an optional ``domain`` object), or None.

        Every member is type-checked before it reaches a query: a list, an
        object or a number where a string belongs is a 400 naming the
        field (it used to reach the database driver: 500).
        """
        if "id" in user_ref:
            return self.store.user(
                user_id=_require(user_ref, "id", str, field + ".id"))
        name = _require(user_ref, "name", str, field + ".name")
        domain_id = _domain_id(user_ref.get("domain"), field + ".domain")
        return self.store.user(name=name, domain_id=domain_id) \
            if domain_id else None

    def _token(self, data):
        token_id = _require(data, "id", str, "token.id")
        try:
            token = self.formatter.verify(token_id)
        except exception.Unauthorized:
            raise _unauthorized("invalid or expired token") from None
        if token.app_cred_id:
            # Keystone forbids rescoping application credential tokens.
            raise _unauthorized("rescoping an application credential token")
        return token

    def _app_cred(self, data):
        secret = _require(data, "secret", str,
                          "application_credential.secret")
        if "id" in data:
            cred, roles = self.store.application_credential(
                cred_id=_require(data, "id", str,
                                 "application_credential.id"))
        else:
            name = _require(data, "name", str, "application_credential.name")
            user_ref = _require(data, "user", dict,
                                "application_credential.user")
            user = self._user_by_ref(user_ref,
                                     "application_credential.user")
            cred, roles = self.store.application_credential(
                user_id=user.id, name=name) if user else (None, [])
        if cred is None:
            passwords.check_password(secret, _DUMMY_HASH)
            raise _unauthorized("unknown application credential")
        if not passwords.check_password(secret, cred.secret_hash):
            raise _unauthorized("wrong secret for application credential "
                                "%s", cred.id)
        if cred.expires_at and cred.expires_at <= datetime.datetime.now(
                datetime.UTC).replace(tzinfo=None):
            raise _unauthorized("application credential %s expired", cred.id)
        user = self.store.user(user_id=cred.user_id)
        project = self.store.project(project_id=cred.project_id)
        if user is None or not user.enabled or project is None or \
                not project.enabled:
            raise _unauthorized("application credential owner disabled")
        # Delegated roles the user no longer holds are dropped.
        held = {role_id for role_id, _ in
                self.store.roles(user.id, project.id)}
        roles = [r for r in roles if r[0] in held]
        if not roles:
            raise _unauthorized("application credential %s has no roles left",
                                cred.id)
        return self.formatter.issue(
            user.id, user.name, project.id, project.name, roles,
            ["application_credential"], self.lifetime, app_cred_id=cred.id,
            expires_at=_aware(cred.expires_at))

    # -- scope ----------------------------------------------------------------

    def _project(self, scope, user):
        if scope is None or scope == "unscoped":
            if not user.default_project_id:
                raise _unauthorized("unscoped request and no default project "
                                    "for user %s", user.id)
            project = self.store.project(project_id=user.default_project_id)
        else:
            if not isinstance(scope, dict):
                raise exception.ValidationError(
                    field="auth.scope", reason="expected an object")
            if "project" not in scope:
                raise _unauthorized("unsupported scope %s", sorted(scope))
            ref = _require(scope, "project", dict, "scope.project")
            if "id" in ref:
                project = self.store.project(project_id=_require(
                    ref, "id", str, "scope.project.id"))
            else:
                name = _require(ref, "name", str, "scope.project.name")
                domain_id = _domain_id(ref.get("domain"),
                                       "scope.project.domain")
                project = self.store.project(name=name, domain_id=domain_id) \
                    if domain_id else None
        if project is None or not project.enabled:
            raise _unauthorized("scope names no enabled project")
        return project


def _domain_id(domain, field):
    """The domain id a ``domain`` object names (None: not Default).

    :raises ValidationError: not an object, or its ``id``/``name`` not
        strings.
    """
    if domain is None:
        return store_mod.domain_id_of(None)
    if not isinstance(domain, dict):
        raise exception.ValidationError(field=field,
                                        reason="expected an object")
    for key in ("id", "name"):
        if key in domain:
            _require(domain, key, str, "%s.%s" % (field, key))
    return store_mod.domain_id_of(domain)


def _aware(value):
    return value.replace(tzinfo=datetime.UTC) if value else None
