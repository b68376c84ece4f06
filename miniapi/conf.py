"""Configuration options of miniapi (the compute API daemon).

Groups:

* ``[api]``: where the WSGI server listens, how requests are authenticated,
  and the page size limit.
* ``[DEFAULT]``: ``allow_resize_to_same_host``, as nova's.
* ``[service_user]``: the service token nova's calls to Cinder carry
  (``ministack.identity.conf``). With ``auth_strategy = keystone`` tokens
  are validated by keystonemiddleware, configured by its own
  ``[keystone_authtoken]`` section (not listed here: its options come
  from the ``keystonemiddleware.auth_token`` namespace).
* ``[cinder]``: how miniapi reaches minicinder. The options themselves are
  owned by ``minicompute.conf`` (the Cinder adapter,
  ``minicompute/volume/cinder.py``, reads them), and are registered here
  too when that module is importable, so ``miniapi.conf`` is one complete
  config file.

Nothing reads the options at import time; ``register_opts(conf)`` is
called by the daemon and by tests on their own ``ConfigOpts``.
"""

from oslo_config import cfg

from minicompute import conf as compute_conf
from ministack import config as ms_config
from ministack import rpc
from ministack.identity import conf as identity_conf

api_group = cfg.OptGroup("api", title="Compute API options")

api_opts = [
    cfg.HostAddressOpt("listen", default="0.0.0.0",
                       help="""
IP address the compute API listens on.

Possible values:

* an IPv4 or IPv6 address; ``0.0.0.0`` listens on every interface.
"""),
    cfg.PortOpt("listen_port", default=8774,
                help="""
TCP port the compute API listens on (upstream nova-api uses 8774).
"""),
    cfg.IntOpt("workers", default=8, min=1,
               help="""
Number of request-handling threads of the WSGI server.
"""),
    cfg.StrOpt("auth_strategy", default="noauth",
               choices=[("noauth",
                         "Trust the caller: the project comes from the URL "
                         "or from an X-Auth-Token of the form user:project, "
                         "as upstream's noauth2."),
                        ("keystone",
                         "Validate X-Auth-Token (and X-Service-Token) at "
                         "keystone with keystonemiddleware's auth_token; "
                         "calls to Cinder forward the user's token plus "
                         "nova's service token.")],
               help="""
How requests are authenticated.

Related options:

* ``[keystone_authtoken]`` (keystone: keystonemiddleware's options)
* ``[service_user]`` (keystone: the token sent to Cinder as
  ``X-Service-Token``)
"""),
    cfg.PortOpt("network_listen_port", default=0,
                help="""
TCP port of the Networking v2.0 API this daemon serves next to the
compute API, which answers that there are no networks (every list empty,
nothing can be created: ministack's guests have no NIC); ``0`` (the
default) disables it; devstack uses Neutron's 9696 so that clients and
upstream tempest find a network endpoint in the catalog.
"""),
    cfg.PortOpt("image_listen_port", default=0,
                help="""
TCP port of the image API (a Glance v2 subset: the registered guest
images, and the create, upload, download and delete of images) this
daemon serves next to the compute API;
``0`` (the default) disables it; devstack uses Glance's 9292.

Related options:

* the ``image`` endpoint of keystone's catalog should point here.
"""),
    cfg.IntOpt("max_limit", default=1000, min=1,
               help="""
The largest number of items a list request returns in one page.
"""),
    cfg.IntOpt("service_down_time", default=60, min=1,
               help="""
Seconds since its last heartbeat after which a compute service is
considered down. Actions that must reach a down compute service (attach,
detach, stop, start) are refused with 409, and new servers are not
scheduled to it.

Related options:

* ``[compute] report_interval`` of minicompute must be well below this.
"""),
    cfg.BoolOpt("seed_flavors", default=True,
                help="""
Create the default flavors (m1.nano, m1.micro, m1.tiny, m1.small) at start-up
when the flavors table is empty, as devstack does upstream.
"""),
    cfg.StrOpt("image_dir", default=None,
               help="""
Directory holding the registered guest images (``<uuid>/image.json``).
Defaults to ``<state_path>/images``.
"""),
]


#: ``[DEFAULT]`` options nova-api reads there too.
default_opts = [
    cfg.BoolOpt("allow_resize_to_same_host", default=False,
                help="""
Allow a resize to keep the server on its compute host (nova's
option of the same name). When False the scheduler picks another
host, unless the cloud has only one. A cold migration never stays
on its host. DevStack sets it True, and so does ministack's.
"""),
]


def register_opts(conf):
    """Register miniapi's options (and the shared RPC options) on conf."""
    conf.register_group(api_group)
    conf.register_opts(api_opts, group=api_group)
    conf.register_opts(default_opts)
    rpc.register_opts(conf)
    compute_conf.register_cinder_opts(conf)
    identity_conf.register_opts(conf)
    ms_config.register_wsgi_opts(conf)


def _cinder_opts():
    """The ``[cinder]`` group of the Cinder adapter (minicompute.conf)."""
    return [(group, opts) for group, opts in compute_conf.list_opts()
            if getattr(group, "name", group) == "cinder"]


def list_opts():
    """For oslo-config-generator (entry point ``miniapi``)."""
    return ([(api_group, api_opts), ("DEFAULT", default_opts)]
            + rpc.list_opts() + _cinder_opts()
            + identity_conf.list_opts() + ms_config.list_wsgi_opts())
