"""keystonemiddleware's auth_token with keystone's answers in a table.

The unit tier has no keystone. As keystonemiddleware's own
``AuthTokenFixture`` does (what nova's and cinder's unit tests use), the
middleware runs for real -- header stripping, service-token role check,
expiry, the 401 -- and only the HTTP call that asks keystone about a
token is replaced by a lookup in tokens issued here (keystoneauth1's
``V3Token`` bodies). The fixture replaces ``fetch_token``; this replaces
the call one level further down (``IdentityServer.verify_token``), so the
middleware's token cache is real too, and an expired token is returned
when the middleware asks with ``allow_expired`` (keystone's rule), so the
service-token path is real.

Usage::

    keystone = FakeKeystone(monkeypatch)
    configure(conf)        # [keystone_authtoken] as devstack writes it
    token = keystone.issue("u1", "p1", ["member"])
"""

import datetime
import uuid

from keystoneauth1 import fixture as ks_fixture
from keystoneauth1 import loading
from keystonemiddleware import auth_token
from keystonemiddleware.auth_token import _exceptions
from keystonemiddleware.auth_token import _identity
from oslo_utils import timeutils

GROUP = "keystone_authtoken"
WWW_AUTHENTICATE = "http://keystone.unit:5000"


def configure(conf, cache_time=None):
    """``[keystone_authtoken]`` on ``conf`` as devstack/lib/keystone
    writes it (nothing is ever sent to its URL here)."""
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    loading.register_auth_conf_options(conf, GROUP)
    conf.register_opts(loading.get_auth_plugin_conf_options("password"),
                       group=GROUP)
    values = {"auth_type": "password", "auth_url": WWW_AUTHENTICATE,
              "www_authenticate_uri": WWW_AUTHENTICATE, "username": "nova",
              "password": "unit-service-pw", "user_domain_name": "Default",
              "project_name": "service", "project_domain_name": "Default",
              "service_token_roles_required": True}
    if cache_time is not None:
        values["token_cache_time"] = cache_time
    for key, value in values.items():
        conf.set_override(key, value, group=GROUP)


class FakeKeystone:
    """The tokens keystone would validate; its validation call patched."""

    def __init__(self, monkeypatch):
        self.tokens = {}
        self.fetched = []
        keystone = self

        def verify_token(server, token, retry=True, allow_expired=False):
            keystone.fetched.append(token)
            data = keystone.tokens.get(token)
            if data is None:
                raise _exceptions.InvalidToken()
            expired = timeutils.utcnow() >= timeutils.normalize_time(
                data.expires)
            if expired and not allow_expired:
                raise _exceptions.InvalidToken()
            return data

        monkeypatch.setattr(_identity.IdentityServer, "verify_token",
                            verify_token)

    def issue(self, user_id, project_id, roles, expires_in=3600,
              user_name=None, project_name=None, token_id=None):
        """A token id keystone now knows (``expires_in`` < 0: expired)."""
        token = ks_fixture.V3Token(
            user_id=user_id, user_name=user_name or user_id,
            user_domain_id="default", project_id=project_id,
            project_name=project_name or project_id,
            project_domain_id="default",
            expires=timeutils.utcnow() + datetime.timedelta(
                seconds=expires_in))
        for role in roles:
            token.add_role(name=role)
        token_id = token_id or uuid.uuid4().hex
        self.tokens[token_id] = token
        return token_id

    def revoke(self, token_id):
        """``openstack token revoke``: keystone forgets it."""
        self.tokens.pop(token_id, None)
