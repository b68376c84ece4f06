"""Who nova's Cinder requests say they come from, and where they go.

Used by ``minicompute.volume.cinder`` (the only module that talks to
Cinder). The caller's identity travels as ``[cinder] auth_strategy``
says: with ``keystone``, the caller's token plus nova's service token
(``X-Service-Token``, so Cinder knows the call comes from Nova;
OSSA-2023-003), from keystoneauth's cached service-account plugin (it
re-authenticates before expiry; one keystoneauth Session per
:class:`Identity` fetches the tokens); with ``noauth``, the headers
minicinder reads (``X-Auth-Token: user:project``, ``X-User-Id``,
``X-Project-Id``, ``X-Roles``). Either way the URL is
``[cinder] endpoint_template`` for the caller's project.
"""

import threading

from keystoneauth1 import exceptions as ks_exception
from keystoneauth1 import session as ks_session


def _token_headers(auth, session):
    """``X-Auth-Token`` of the plugin, as keystoneauth's Session asked
    it for its headers."""
    headers = auth.get_headers(session)
    if headers is None:
        raise ks_exception.AuthorizationFailure(
            "No valid authentication is available")
    return headers


def _service_headers(service, session):
    """``X-Service-Token``, as keystoneauth's ServiceTokenAuthWrapper adds
    it (nothing if the service plugin gives no token)."""
    token = service.get_token(session)
    return {"X-Service-Token": token} if token else {}


def _renew(service, session, user):
    """On a 401: drop the service account's cached token and give the
    headers again with a new one (None: nothing was dropped, no retry).

    :param user: the caller's ``X-Auth-Token`` header, or None when the
        service account's token is the only one.
    """
    def reauth():
        if not service.invalidate():
            return None
        if user is None:
            return dict(service.get_headers(session),
                        **_service_headers(service, session))
        return dict(user, **_service_headers(service, session))
    return reauth


class Identity:
    """The endpoint URL and identity headers of a context's requests.

    :param conf: a ConfigOpts with ``[cinder]`` registered.
    """

    def __init__(self, conf):
        self.conf = conf
        self._token_session = None
        self._token_lock = threading.Lock()

    def of(self, ctxt):
        """``(url, headers, reauth)`` for ``ctxt``: ``reauth`` renews the
        service token on a 401 (None: no renewal, a 401 is final)."""
        if self.conf.cinder.auth_strategy == "keystone":
            return self._keystone_auth(ctxt)
        url, identity = self._noauth(ctxt)
        return url, identity, None

    def _noauth(self, ctxt):
        """The URL and the identity headers of a noauth deployment
        (minicinder's ContextMiddleware builds the caller's context from
        them, as cinderclient's own ``noauth`` plugin sends them)."""
        project = ctxt.project_id or "admin"
        url = self.conf.cinder.endpoint_template % {"project_id": project}
        return url, {
            "X-Auth-Token": "%s:%s" % (ctxt.user_id or "nova", project),
            "X-User-Id": ctxt.user_id or "nova",
            "X-Project-Id": project,
            "X-Roles": ",".join(ctxt.roles or []),
            "X-Service-Token": "nova",   # Nova's call, not the user's
        }

    def _keystone_auth(self, ctxt):
        """The URL, the caller's token and nova's service token, and how
        to renew the service token on a 401 (as keystoneauth's Session
        did: once, after the plugin dropped its cached token).

        The headers are those of ``identity_client.get_auth_plugin``'s
        plugin, taken from the same cached ``v3.Password``
        (``identity_client.service_auth_plugin``).

        Work the host starts itself (reconciliation, start-up recovery)
        has no user token: it runs as the service account alone, in the
        service account's project.
        """
        from ministack.identity import client as identity_client
        session = self._tokens()
        template = self.conf.cinder.endpoint_template
        if ctxt.auth_token:
            url = template % {"project_id": ctxt.project_id}
            user = {"X-Auth-Token": ctxt.auth_token}
            if not self.conf.service_user.send_service_user_token:
                return url, user, None    # a user's token is not renewed
            service = identity_client.service_auth_plugin(self.conf)
            return url, dict(user, **_service_headers(service, session)), \
                _renew(service, session, user)
        service = identity_client.service_auth_plugin(self.conf)
        url = template % {"project_id": service.get_project_id(session)}
        headers = _token_headers(service, session)
        if self.conf.service_user.send_service_user_token:
            # Nova's own work, as nova's cinder client sends it: its
            # account's token, and the same as the service token, so
            # Cinder knows Nova asks (a start-up recovery deleting an
            # attachment of Nova's is allowed; OSSA-2023-003).
            headers = dict(headers, **_service_headers(service, session))
        return url, headers, _renew(service, session, None)

    def _tokens(self):
        """The one keystoneauth Session the service account's token is
        fetched (and renewed) through; ``[service_user]`` registered."""
        with self._token_lock:
            if self._token_session is None:
                from ministack.identity import conf as identity_conf
                identity_conf.register_opts(self.conf)
                self._token_session = ks_session.Session(
                    timeout=self.conf.cinder.http_timeout)
            return self._token_session
