"""Options of the identity service and of its users.

Groups:

* ``[identity]``: the signing key every service shares, token lifetime,
  and where the keystone v3 WSGI app listens when a daemon serves it
  (miniapi does).
* ``[catalog]``: the service catalog handed out in every token. Upstream
  keeps endpoints in keystone's database; ministack has four fixed
  services, so they are config (a documented deviation).
* ``[service_user]``: the account a service (nova) authenticates as to
  send ``X-Service-Token`` with calls made on a user's behalf
  (OSSA-2023-003, https://bugs.launchpad.net/cinder/+bug/2004555).

Nothing is read at import time.
"""

from oslo_config import cfg

DEFAULT_KEY_FILE = "/etc/ministack/fernet-keys/0"

identity_opts = [
    cfg.StrOpt("signing_key_file", default=DEFAULT_KEY_FILE,
               help="""
File holding the Fernet key that signs and encrypts tokens. Every service
that validates tokens locally (``auth_strategy = keystone``) reads the same
file; ``python -m ministack.identity.manage bootstrap`` creates it (mode
0600) when it does not exist.

Related options:

* ``[api] auth_strategy`` (miniapi), ``auth_strategy`` (minicinder).
"""),
    cfg.IntOpt("token_expiration", default=3600, min=60,
               help="""
Seconds a token stays valid after it is issued (keystone's
``[token] expiration``).
"""),
    cfg.IntOpt("allow_expired_window", default=172800, min=0,
               help="""
Seconds after its expiry during which a user token is still accepted when
it comes together with a valid service token (keystone's
``[token] allow_expired_window``): a long attach started by a user must
not fail half-way because the user's token ran out.
"""),
    cfg.BoolOpt("enabled", default=False,
                help="""
Serve the keystone v3 API from this daemon (miniapi; devstack turns it
on). Needs ``signing_key_file``.
"""),
    cfg.HostAddressOpt("listen", default="0.0.0.0",
                       help="IP address the identity API listens on."),
    cfg.PortOpt("listen_port", default=5000,
                help="TCP port of the identity API (keystone's 5000)."),
]

catalog_opts = [
    cfg.StrOpt("region_name", default="RegionOne",
               help="Region of every catalog endpoint."),
    cfg.StrOpt("identity_url", default="http://127.0.0.1:5000",
               help="""
Identity endpoint (unversioned; clients run version discovery on it).
"""),
    cfg.StrOpt("compute_url", default="http://127.0.0.1:8774/v2.1",
               help="Compute endpoint (``compute`` service)."),
    cfg.StrOpt("volume_url",
               default="http://127.0.0.1:8776/v3/%(project_id)s",
               help="""
Block storage endpoint, listed as both ``block-storage`` and ``volumev3``.
``%(project_id)s`` is replaced by the token's project.
"""),
    cfg.StrOpt("image_url", default="http://127.0.0.1:9292",
               help="""
Image endpoint (``image``); needed by ``openstack server create --image``.
Empty leaves the image service out of the catalog.
"""),
]

service_user_opts = [
    cfg.BoolOpt("send_service_user_token", default=False,
                help="""
Send ``X-Service-Token`` with calls made to other services on a user's
behalf, obtained by authenticating as the account below.
"""),
    cfg.StrOpt("auth_url", default="http://127.0.0.1:5000/v3",
               help="Identity v3 URL the service user authenticates at."),
    cfg.StrOpt("username", default="nova",
               help="Name of the service user."),
    cfg.StrOpt("password", secret=True,
               help="Password of the service user."),
    cfg.StrOpt("project_name", default="service",
               help="Project the service user's token is scoped to."),
    cfg.StrOpt("user_domain_name", default="Default",
               help="Domain of the service user."),
    cfg.StrOpt("project_domain_name", default="Default",
               help="Domain of the service project."),
]


def register_opts(conf):
    """Register ``[identity]``, ``[catalog]`` and ``[service_user]``."""
    for group, opts in list_opts():
        if group not in conf:
            conf.register_group(cfg.OptGroup(group))
        conf.register_opts(opts, group=group)


def list_opts():
    return [("identity", identity_opts), ("catalog", catalog_opts),
            ("service_user", service_user_opts)]
