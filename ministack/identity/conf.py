"""``[service_user]``: the account a service authenticates as to send
``X-Service-Token`` with the calls it makes on a user's behalf.

Upstream nova sends its own token next to the user's when it calls
Cinder, so Cinder knows the call comes from Nova (OSSA-2023-003,
https://bugs.launchpad.net/cinder/+bug/2004555) and accepts a user token
that expired mid-operation. The account is a keystone user with the
``service`` role (devstack/lib/keystone creates ``nova``).

Token validation itself is keystonemiddleware's: its options are the
``[keystone_authtoken]`` section (``ministack.identity.authtoken``).

Nothing is read at import time.
"""

from oslo_config import cfg

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
    """Register ``[service_user]`` (nothing when it already is: every
    registration empties oslo.config's cache of parsed values, and the
    Cinder client's callers ask for the group on each call)."""
    for group, opts in list_opts():
        if group in conf and all(opt.dest in conf[group] for opt in opts):
            continue
        if group not in conf:
            conf.register_group(cfg.OptGroup(group))
        conf.register_opts(opts, group=group)


def list_opts():
    return [("service_user", service_user_opts)]
