"""minicinder's configuration options.

Upstream cinder names are kept wherever one exists (``osapi_volume_listen``,
``volume_group``, ``target_port``...) so an operator's muscle memory works.
Nothing here is read at import time: :func:`register_opts` is called by the
daemon entry point and by tests on their own ``ConfigOpts``.
"""

import os

from oslo_concurrency import opts as concurrency_opts
from oslo_config import cfg

from ministack import config

api_opts = [
    cfg.StrOpt("osapi_volume_listen", default="0.0.0.0",
               help="""
IP address the volume REST API listens on.
"""),
    cfg.PortOpt("osapi_volume_listen_port", default=8776,
                help="""
TCP port the volume REST API listens on.

Related options:

* ``osapi_volume_listen``
"""),
    cfg.IntOpt("osapi_volume_workers", default=1, min=1,
               help="""
Number of API worker processes serving the REST API on one socket.

One process runs Python on one core at a time; with more than one, the
API uses more cores (upstream's default is the CPU count, DevStack's lab
sets it so). The parent process keeps the volume manager's background
work (export recovery and checks, the service heartbeat); the workers
serve requests, holding each volume's lock as a file lock in
``[oslo_concurrency] lock_path`` so that they and the parent never change
one volume's export at once. More than one needs the ``lvm`` driver (the
``fake`` one keeps its volumes in one process's memory).

Related options:

* ``osapi_volume_threads``
* ``[oslo_concurrency] lock_path``
"""),
    cfg.IntOpt("osapi_volume_threads", default=8, min=1,
               help="""
Number of WSGI threads serving API requests in each API worker process.
"""),
    cfg.StrOpt("auth_strategy", default="noauth",
               choices=["noauth", "keystone"],
               help="""
How requests are authenticated.

Possible values:

* ``noauth``: trust the caller: the project in the URL, the user in
  ``X-Auth-Token: user:project`` (or ``X-User-Id``), the roles in
  ``X-Roles``. A request with ``X-Service-Token`` (any value) or the
  ``service`` role counts as coming from a service (nova).
* ``keystone``: keystonemiddleware's auth_token validates
  ``X-Auth-Token`` and ``X-Service-Token`` at keystone; user, project
  and roles come from the token, and only a service token with the
  ``service`` role makes the call a service's.

Related options:

* ``[keystone_authtoken]`` (keystonemiddleware's options: the keystone
  URL and the service user it validates tokens as)
"""),
]

volume_opts = [
    cfg.StrOpt("volume_driver", default="lvm", choices=["lvm", "fake"],
               help="""
Backend driver.

Possible values:

* ``lvm``: one logical volume per volume in ``volume_group``, exported
  over iSCSI by tgt (needs root, lvm2 and a running tgtd).
* ``fake``: in-memory, for tests and development without root.
"""),
    cfg.StrOpt("volume_group", default="stack-volumes-lvmdriver-1",
               help="""
Name of the LVM volume group holding the volumes. The daemon refuses to
start when it does not exist.
"""),
    cfg.StrOpt("volume_name_template", default="volume-%s",
               help="""
Template for logical volume and target names; ``%s`` is the volume id.
"""),
    cfg.StrOpt("target_prefix", default="iqn.2010-10.org.openstack:",
               help="""
Prefix of the iSCSI target IQN; the target is ``<prefix><volume name>``.
"""),
    cfg.StrOpt("target_ip_address", default="$my_ip",
               help="""
IP address of the iSCSI portal handed to initiators in connection_info.

Related options:

* ``[DEFAULT] my_ip`` (the default)
"""),
    cfg.PortOpt("target_port", default=3260,
                help="TCP port of the iSCSI portal."),
    cfg.StrOpt("volume_clear", default="zero",
               choices=["zero", "none"],
               help="""
How a volume's blocks are wiped before its logical volume is removed, so
no later tenant can read the data.

Possible values:

* ``zero``: overwrite with zeroes (``volume_clear_size`` MiB, 0 = all).
* ``none``: do not wipe (only for throw-away labs).
"""),
    cfg.IntOpt("volume_clear_size", default=0, min=0,
               help="""
MiB to wipe from the start of a volume on delete; 0 wipes all of it.
"""),
    cfg.StrOpt("default_volume_type", default="__DEFAULT__",
               help="""
Name of the volume type used when a create request names none. The type
``__DEFAULT__`` is created by the first database migration.
"""),
    cfg.StrOpt("storage_availability_zone", default="nova",
               help="Availability zone reported for every volume."),
    cfg.StrOpt("volume_backend_name", default="lvmdriver-1",
               help="""
Name of the one backend (and of its one pool). The volume service is
recorded as ``cinder-volume`` at ``<host>@<volume_backend_name>`` and a
volume's ``os-vol-host-attr:host`` reads
``<host>@<volume_backend_name>#<volume_backend_name>``, as upstream's LVM
driver names its pool after the backend.
"""),
    cfg.IntOpt("report_interval", default=10, min=1,
               help="""
Seconds between heartbeats of the volume service's record (the
``updated_at`` that ``os-services`` shows).

Related options:

* ``service_down_time`` must be well above this.
"""),
    cfg.IntOpt("service_down_time", default=60, min=1,
               help="""
Seconds since the last heartbeat after which ``os-services`` reports a
service ``down``.
"""),
    cfg.IntOpt("volume_manager_workers", default=4, min=1,
               help="""
Threads running asynchronous volume create and delete jobs.
"""),
    cfg.IntOpt("max_volume_size", default=1024, min=1,
               help="Largest volume size in GiB a create request may ask."),
    cfg.IntOpt("export_check_interval", default=10, min=0,
               help="""
Seconds between checks that every exported volume still has its iSCSI
target, LUN, CHAP account and initiator ACLs in tgtd. tgtd keeps exports
only in memory, so a restarted tgtd has none; the check rebuilds them from
the database. 0 disables the check (exports are then rebuilt only when
the daemon starts).
"""),
]

# Upstream cinder's quota defaults (same names and values). Only volumes
# and gigabytes have anything to count here; the others are shown so
# clients find every key, and always have 0 in use.
quota_opts = [
    cfg.IntOpt("quota_volumes", default=10,
               help="Volumes a project may have (-1: unlimited)."),
    cfg.IntOpt("quota_gigabytes", default=1000,
               help="GiB of volumes a project may have (-1: unlimited)."),
    cfg.IntOpt("per_volume_size_limit", default=-1,
               help="Largest volume in GiB (-1: unlimited), per project "
                    "as ``per_volume_gigabytes``."),
    cfg.IntOpt("quota_snapshots", default=10,
               help="Snapshots a project may have (none can be made "
                    "here)."),
    cfg.IntOpt("quota_backups", default=10,
               help="Backups a project may have (none can be made here)."),
    cfg.IntOpt("quota_backup_gigabytes", default=1000,
               help="GiB of backups a project may have."),
    cfg.IntOpt("quota_groups", default=10,
               help="Groups a project may have (none can be made here)."),
]

nova_group = cfg.OptGroup("nova", title="Compute API", help="""
How minicinder reaches Nova's compute API: it asks Nova before a
user tears down an instance's attachment (OSSA-2023-003).
""")

nova_opts = [
    cfg.StrOpt("endpoint", default="",
               help="""
URL of Nova's compute API, version included
(``http://127.0.0.1:8774/v2.1``).

Before a caller that is not a service deletes or detaches an
attachment that has an instance (``DELETE /attachments/{id}``,
``os-detach``, ``os-force_detach``, ``os-terminate_connection``),
minicinder asks Nova at compute microversion 2.89
(``GET /servers/{instance}/os-volume_attachments/{volume}``) and
refuses with 409 only when Nova names that very attachment. When
Nova cannot be asked (refused connection, timeout, an unexpected
answer) the request is refused too (fail closed).

Possible values:

* a URL: ask Nova, as upstream cinder does.
* empty (the default): no Nova to ask; an instance's attachment
  that is ``attaching`` or ``attached`` then counts as Nova's and
  only a service may remove it (stricter than upstream: a user
  cannot detach what they attached with ``os-attach``).

Related options:

* ``[nova] timeout``
* ``[DEFAULT] auth_strategy``: ``keystone`` forwards the caller's
  token to Nova; ``noauth`` asks as ``admin``, so Nova shows the
  server whatever its project.
"""),
    cfg.FloatOpt("timeout", default=5.0, min=0.1,
                 help="""
Seconds to wait for Nova to connect, and to answer. A user's
detach waits this long at most before it is refused.
"""),
]


def register_opts(conf):
    """Register minicinder's options on ``conf`` (keystonemiddleware
    registers ``[keystone_authtoken]`` itself when the API is built)."""
    conf.register_opts(api_opts)
    conf.register_opts(volume_opts)
    conf.register_opts(quota_opts)
    # A fresh group per ConfigOpts: a registered OptGroup object keeps its
    # options (and their overrides) in itself, so sharing the module-level
    # one would leak one conf's overrides into the next (tests build many).
    conf.register_group(cfg.OptGroup(nova_group.name,
                                      title=nova_group.title,
                                      help=nova_group.help))
    conf.register_opts(nova_opts, group=nova_group.name)
    # [oslo_middleware] max_request_body_size (was
    # [DEFAULT] osapi_max_request_body_size, still read as its old name).
    config.register_wsgi_opts(conf)
    for group, opts in _lock_opts():
        conf.register_opts(opts, group=group)


def _lock_opts():
    """oslo.concurrency's ``[oslo_concurrency] lock_path`` (its other
    option, ``disable_process_locking``, is not honoured here)."""
    return [(group, [opt for opt in opts if opt.name == "lock_path"])
            for group, opts in concurrency_opts.list_opts()]


def lock_path(conf):
    """Where the volume locks' files go with several API workers:
    ``[oslo_concurrency] lock_path``, else ``$state_path/lock``."""
    return conf.oslo_concurrency.lock_path or os.path.join(
        conf.state_path, "lock")


def list_opts():
    """For oslo-config-generator (entry point ``minicinder``)."""
    from ministack import opts as common
    grouped = dict(common.list_opts())
    grouped["DEFAULT"] = list(grouped.get("DEFAULT", [])) + api_opts \
        + volume_opts + quota_opts
    grouped[nova_group] = nova_opts
    grouped.update(config.list_wsgi_opts())
    grouped.update(_lock_opts())
    return list(grouped.items())
