"""Calling another service on a user's behalf, with a service token.

Upstream nova sends two tokens to Cinder: the user's (``X-Auth-Token``,
from the request context) and its own (``X-Service-Token``, from the
``[service_user]`` account). Cinder then knows the call is driven by Nova
and can refuse users who try the same call directly (OSSA-2023-003,
https://bugs.launchpad.net/cinder/+bug/2004555); the service token also
keeps an expired user token usable mid-operation.

Both helpers below use keystoneauth's own machinery (``v3.Password`` for
the service account, ``ServiceTokenAuthWrapper`` to add the header), so
token caching and re-authentication before expiry are keystoneauth's:

* :func:`get_auth_plugin` -- a keystoneauth auth plugin for a Session
  (what ``minicompute/volume/cinder.py`` should hand to cinderclient);
* :func:`auth_headers` -- the two headers as a dict, for raw HTTP.
"""

import threading

from keystoneauth1 import plugin as ks_plugin
from keystoneauth1 import service_token
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from ministack.identity import conf as identity_conf

_LOCK = threading.Lock()
_SERVICE_AUTH = {}


def _service_auth(conf):
    """One cached ``v3.Password`` per service account (keystoneauth
    re-authenticates it shortly before its token expires)."""
    group = conf.service_user
    key = (group.auth_url, group.username, group.project_name)
    with _LOCK:
        auth = _SERVICE_AUTH.get(key)
        if auth is None:
            auth = v3.Password(
                auth_url=group.auth_url, username=group.username,
                password=group.password, project_name=group.project_name,
                user_domain_name=group.user_domain_name,
                project_domain_name=group.project_domain_name)
            _SERVICE_AUTH[key] = auth
        return auth


class _UserToken(ks_plugin.BaseAuthPlugin):
    """The caller's token (from the request context) on a fixed endpoint.

    Unlike ``token_endpoint.Token`` it never tries to re-authenticate: a
    service cannot renew a user's token, it can only pass it on.
    """

    def __init__(self, token, endpoint):
        super().__init__()
        self._token = token
        self._endpoint = endpoint

    def get_token(self, session, **kwargs):
        return self._token

    def get_endpoint(self, session, **kwargs):
        return self._endpoint


def get_auth_plugin(conf, ctxt, endpoint):
    """A keystoneauth plugin sending ``ctxt``'s token to ``endpoint``.

    With ``[service_user] send_service_user_token`` the plugin adds
    ``X-Service-Token`` (the service account's token, cached).

    :param conf: ConfigOpts; ``[service_user]`` is registered if needed.
    :param ctxt: the RequestContext whose ``auth_token`` is forwarded.
    :param endpoint: the service URL (e.g. Cinder's ``.../v3/<project>``).
    """
    identity_conf.register_opts(conf)
    user_auth = _UserToken(ctxt.auth_token, endpoint)
    if not conf.service_user.send_service_user_token:
        return user_auth
    return service_token.ServiceTokenAuthWrapper(user_auth,
                                                 _service_auth(conf))


def service_auth_plugin(conf):
    """The service account's own auth plugin, for work with no user token.

    A compute host reconciling its disks at start-up acts on its own
    behalf, as nova-compute's periodic tasks do upstream.
    """
    identity_conf.register_opts(conf)
    return _service_auth(conf)


def auth_headers(conf, ctxt):
    """``{"X-Auth-Token": ..., "X-Service-Token": ...}`` for raw HTTP.

    :raises keystoneauth1.exceptions.ClientException: the service account
        could not authenticate (translate it in your adapter).
    """
    identity_conf.register_opts(conf)
    headers = {"X-Auth-Token": ctxt.auth_token}
    if conf.service_user.send_service_user_token:
        sess = ks_session.Session()
        headers["X-Service-Token"] = _service_auth(conf).get_token(sess)
    return headers
