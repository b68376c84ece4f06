"""Config loading shared by the daemons (oslo.config).

Each service keeps its option definitions in its own ``conf`` package
(``minicinder/conf.py`` and so on); this module holds the options every
daemon has (``[DEFAULT] host``, ``[database]``, the broker) and the one
function that parses ``--config-file`` and turns every start-up problem into
a :class:`ministack.exception.ConfigError` with one readable line.
"""

import os
import socket

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging

from ministack import exception
from ministack import library_behaviour

DEFAULT_STATE_PATH = "/var/lib/ministack"

common_opts = [
    cfg.StrOpt("host", default=socket.gethostname(),
               sample_default="<hostname>",
               help="""
Name of this host, used as the RPC server name and recorded on servers,
services and attachments.

Possible values:

* any string; it must be unique among the compute hosts.
"""),
    cfg.StrOpt("state_path", default=DEFAULT_STATE_PATH,
               help="""
Directory holding ministack's state: SQLite databases, guest images,
instance disks and the LVM backing file.
"""),
    cfg.StrOpt("instance_name_template", default="instance-%08x",
               help="""
Name of an instance's libvirt domain, formatted with the instance's
database id (nova's option of the same name; miniapi
shows it as ``OS-EXT-SRV-ATTR:instance_name``).

Possible values:

* the default ``instance-%08x`` (what operators and upstream docs expect)
* anything with one integer conversion; two nova databases sharing one
  libvirt (parallel test stacks) must use different templates.
"""),
    cfg.StrOpt("my_ip", default="127.0.0.1",
               help="""
IP address of this host, used for the iSCSI portal (minicinder) and in the
connector (minicompute).
"""),
]

database_opts = [
    cfg.StrOpt("connection", secret=True,
               help="""
SQLAlchemy URL of this service's database.

Possible values:

* ``sqlite:////var/lib/ministack/<service>.sqlite`` (the default when unset)
* ``mysql+pymysql://user:pass@host/nova``
* ``postgresql+psycopg://user:pass@host/cinder``
"""),
    cfg.IntOpt("connect_timeout", default=10, min=1,
               help="Seconds to wait for the database at start-up."),
]

# oslo.middleware's group and option (its sizelimit middleware is what
# nova, cinder, keystone and glance run): the REST daemons' body limit.
WSGI_GROUP = "oslo_middleware"

wsgi_opts = [
    cfg.IntOpt("max_request_body_size", default=114688, min=1024,
               deprecated_opts=[cfg.DeprecatedOpt(
                   "osapi_max_request_body_size", group="DEFAULT")],
               help="""
The maximum body size for each request, in bytes. A larger body
is refused with 413 before it is read, on every API the daemon
serves (miniapi: the compute API and the image API; minicinder: the
volume API).

Possible values:

* 114688 (112 KiB), oslo.middleware's default, as upstream runs
* any size of at least 1024
"""),
]


def set_messaging_defaults():
    """ministack's oslo.messaging defaults (also the sample generator's
    ``oslo.config.opts.defaults`` hook).

    * ``control_exchange = ministack``;
    * ``[oslo_messaging_rabbit] amqp_durable_queues = true`` (upstream's
      default is false): the compute's queue and the casts waiting in it
      outlive a broker restart, so a detach cast while the host is down
      still runs when it is back. The option has no public setter
      (:func:`ministack.library_behaviour.durable_queues_by_default`).
    """
    oslo_messaging.set_transport_defaults(control_exchange="ministack")
    library_behaviour.durable_queues_by_default()


def register_common_opts(conf):
    """Register the options every daemon has on ``conf``."""
    conf.register_opts(common_opts)
    conf.register_opts(database_opts, group="database")
    set_messaging_defaults()


def list_opts():
    """For oslo-config-generator: the options every daemon has."""
    return [("DEFAULT", common_opts), ("database", database_opts)]


def register_wsgi_opts(conf):
    """Register ``[oslo_middleware]`` (the REST daemons call it; so do
    the app factories, for confs built by tests). Idempotent."""
    conf.register_opts(wsgi_opts, group=WSGI_GROUP)


def list_wsgi_opts():
    """For oslo-config-generator: the REST daemons' WSGI options."""
    return [(WSGI_GROUP, wsgi_opts)]


def max_request_body_size(conf):
    """``[oslo_middleware] max_request_body_size`` of ``conf``."""
    register_wsgi_opts(conf)
    return conf.oslo_middleware.max_request_body_size


def database_url(conf, service):
    """The ``[database] connection`` URL, or the SQLite default for service."""
    if conf.database.connection:
        return conf.database.connection
    return "sqlite:///" + os.path.join(conf.state_path, "%s.sqlite" % service)


def parse_args(conf, argv, project, default_config_files=None):
    """Parse the command line and config files into ``conf``.

    :raises ConfigError: a config file is missing, unreadable or malformed,
        or an option has a bad value. The message names the file or option.
    """
    logging.register_options(conf)
    try:
        for path in _config_files_in(argv):
            if not os.path.exists(path):
                raise exception.ConfigError(
                    reason="config file %s does not exist" % path)
            if not os.access(path, os.R_OK):
                raise exception.ConfigError(
                    reason="config file %s is not readable" % path)
        conf(argv, project=project,
             default_config_files=default_config_files or [])
        # Read every registered option now so a bad value fails at start-up
        # rather than in the middle of the first request.
        _validate_all(conf)
    except cfg.ConfigFilesNotFoundError as exc:
        raise exception.ConfigError(
            reason="config file(s) not found or unreadable: %s"
            % ", ".join(exc.config_files))
    except cfg.ConfigFileParseError as exc:
        raise exception.ConfigError(reason=str(exc))
    except (cfg.ConfigFileValueError, ValueError) as exc:
        raise exception.ConfigError(reason=str(exc))
    except cfg.RequiredOptError as exc:
        raise exception.ConfigError(reason=str(exc))


def _config_files_in(argv):
    """Yield the values of ``--config-file`` in argv (both spellings)."""
    for i, arg in enumerate(argv):
        if arg == "--config-file" and i + 1 < len(argv):
            yield argv[i + 1]
        elif arg.startswith("--config-file="):
            yield arg.split("=", 1)[1]


def _validate_all(conf):
    """Read every option once so type and choice errors surface now."""
    for name, opt in conf.items():
        if isinstance(opt, cfg.ConfigOpts.GroupAttr):
            for sub in opt:
                try:
                    getattr(opt, sub)
                except (cfg.ConfigFileValueError, ValueError) as exc:
                    raise exception.ConfigError(
                        reason="[%s] %s: %s" % (name, sub, exc))
        else:
            try:
                getattr(conf, name)
            except (cfg.ConfigFileValueError, ValueError) as exc:
                raise exception.ConfigError(
                    reason="[DEFAULT] %s: %s" % (name, exc))
