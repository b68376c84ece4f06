"""oslo.messaging set-up shared by the daemons that speak RPC.

miniapi and minicompute talk over the broker named by ``transport_url``
(RabbitMQ in every deployment; ``fake:/`` only in unit tests). Only the
``rpcapi`` modules create clients and only ``manager`` modules are served;
this module just builds the transport, the serializer that carries the
request context, and servers with the threading executor (eventlet is
deprecated).

Exceptions that may cross RPC must live in a module listed in
``ALLOWED_EXMODS``; any other exception arrives as ``RemoteError``.
"""

import oslo_messaging as messaging
from oslo_config import cfg

from ministack import context as ms_context
from ministack import exception

ALLOWED_EXMODS = [
    "ministack.exception",
    "minicompute.exception",
]

rpc_opts = [
    cfg.IntOpt("rpc_call_timeout", default=60, min=1,
               help="""
Seconds an RPC call (e.g. reserve_block_device_name) waits for its reply
before it fails with MessagingTimeout.
"""),
]


def register_opts(conf):
    conf.register_opts(rpc_opts)


def list_opts():
    return [("DEFAULT", rpc_opts)]


class RequestContextSerializer(messaging.Serializer):
    """Carry the RequestContext over the wire as a dict."""

    def serialize_entity(self, ctxt, entity):
        return entity

    def deserialize_entity(self, ctxt, entity):
        return entity

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return ms_context.RequestContext.from_dict(ctxt)


def _register_tracing_opts(conf):
    """Register oslo.messaging's tracing and metrics groups on ``conf``.

    oslo.messaging 18.x reads ``[oslo_messaging_tracing]`` and
    ``[oslo_messaging_metrics]`` from the transport's ConfigOpts on every
    cast and call, but registers both groups only on the global
    ``cfg.CONF``; a daemon with its own ConfigOpts (as
    ``ministack.service.run`` builds) would fail every RPC with
    NoSuchOptError.
    """
    import importlib
    for module, group in (("oslo_messaging._tracing.client",
                           "oslo_messaging_tracing"),
                          ("oslo_messaging._metrics.client",
                           "oslo_messaging_metrics")):
        try:
            opts = getattr(importlib.import_module(module), group)
        except (ImportError, AttributeError):
            continue  # an oslo.messaging without that feature
        conf.register_opts(opts, group=group)


def get_transport(conf):
    """The RPC transport for ``transport_url``.

    :raises ConfigError: the URL is missing or malformed.
    """
    _register_tracing_opts(conf)
    try:
        return messaging.get_rpc_transport(
            conf, allowed_remote_exmods=ALLOWED_EXMODS)
    except (messaging.InvalidTransportURL, messaging.DriverLoadFailure) as exc:
        raise exception.ConfigError(
            reason="[DEFAULT] transport_url is not usable: %s" % exc)


def check_broker(transport, timeout=10):
    """Fail at start-up, naming the broker, if it cannot be reached.

    oslo.messaging retries forever on connect; a daemon that is started
    against a dead broker should say so instead of hanging.
    """
    driver = getattr(transport, "_driver", None)
    if driver is None or not hasattr(driver, "_get_connection"):
        return  # the fake driver: nothing to reach
    import kombu

    url = transport.conf.transport_url
    parsed = messaging.TransportURL.parse(transport.conf, url)
    hosts = parsed.hosts or [None]
    host = hosts[0]
    broker = "amqp://%s:%s@%s:%s/%s" % (
        host.username or "guest", host.password or "guest",
        host.hostname or "localhost", host.port or 5672,
        parsed.virtual_host or "")
    try:
        with kombu.Connection(broker, connect_timeout=timeout) as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout)
    except Exception as exc:  # kombu raises many different socket errors
        raise exception.ConfigError(
            reason="cannot reach the message broker at %s:%s (vhost %r) "
                   "named by [DEFAULT] transport_url: %s"
                   % (host.hostname, host.port or 5672,
                      parsed.virtual_host, exc))


def get_client(transport, target, version_cap=None, timeout=None):
    # A transport built directly (fake:/ in tests) has not been through
    # get_transport, so make sure its conf has the tracing groups too.
    _register_tracing_opts(transport.conf)
    return messaging.get_rpc_client(
        transport, target, version_cap=version_cap, timeout=timeout,
        serializer=RequestContextSerializer())


def get_server(transport, target, endpoints):
    """An RPC server with native threads (executor='threading')."""
    _register_tracing_opts(transport.conf)
    return messaging.get_rpc_server(
        transport, target, endpoints, executor="threading",
        serializer=RequestContextSerializer())
