"""Which keystoneauth auth plugin and endpoint a context's Cinder calls use.

Used by ``minicompute.volume.cinder`` (nova's ``_get_auth`` and
``_get_cinderclient_parameters``). The caller's identity travels as
``[cinder] auth_strategy`` says: with ``keystone``, the caller's token
plus nova's service token (``X-Service-Token``, so Cinder knows the call
comes from Nova; OSSA-2023-003), keystoneauth's ServiceTokenAuthWrapper
around the cached service-account plugin (re-authenticated before expiry,
and once more on a 401); with ``noauth``, the headers minicinder's noauth
middleware reads. Either way the URL is ``[cinder] endpoint_template``
for the caller's project.
"""

from keystoneauth1 import plugin as ks_plugin
from keystoneauth1 import service_token


class NoAuth(ks_plugin.BaseAuthPlugin):
    """The caller's identity as minicinder's noauth headers.

    cinderclient's own ``CinderNoAuthPlugin`` sends the user and project
    only; minicinder also reads the roles, and ``X-Service-Token`` marks
    the call as Nova's.
    """

    def __init__(self, ctxt):
        super().__init__()
        self.user_id = ctxt.user_id or "nova"
        self.project_id = ctxt.project_id or "admin"
        self.roles = ",".join(ctxt.roles or [])

    def get_headers(self, session, **kwargs):
        return {
            "X-Auth-Token": "%s:%s" % (self.user_id, self.project_id),
            "X-User-Id": self.user_id,
            "X-Project-Id": self.project_id,
            "X-Roles": self.roles,
            "X-Service-Token": "nova",   # Nova's call, not the user's
        }

    def get_project_id(self, session, **kwargs):
        return self.project_id


def plugin(conf, ctxt, session):
    """``(auth plugin, endpoint URL)`` of ``ctxt``'s calls.

    Work the host starts itself (reconciliation, start-up recovery) has
    no user token: with ``keystone`` it runs as the service account, in
    its project, its token also sent as the service token (as nova's
    cinder client does), so Cinder knows Nova asks.

    :param session: the keystoneauth Session the service account's token
        is fetched through (the one the Cinder calls go through).
    """
    template = conf.cinder.endpoint_template
    if conf.cinder.auth_strategy != "keystone":
        auth = NoAuth(ctxt)
        return auth, template % {"project_id": auth.project_id}
    from ministack.identity import client as identity_client
    if ctxt.auth_token:
        url = template % {"project_id": ctxt.project_id}
        return identity_client.get_auth_plugin(conf, ctxt, url), url
    service = identity_client.service_auth_plugin(conf)
    url = template % {"project_id": service.get_project_id(session)}
    if conf.service_user.send_service_user_token:
        return service_token.ServiceTokenAuthWrapper(service, service), url
    return service, url
