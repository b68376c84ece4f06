"""oslo.messaging set-up shared by the daemons that speak RPC.

miniapi and minicompute talk over the broker named by ``transport_url``
(RabbitMQ in every deployment; ``fake:/`` only in unit tests). Only the
``rpcapi`` modules create clients and only ``manager`` modules are served;
this module builds the transport, the serializer that carries the request
context (and osprofiler's trace with it, as nova's), servers with the
threading executor (eventlet is deprecated), and the two trace points of
a message: :func:`call` / :func:`cast` on the client's side and
:func:`traced_endpoint` on the server's.

Exceptions that may cross RPC must live in a module listed in
``ALLOWED_EXMODS``; any other exception arrives as ``RemoteError``.
"""

import functools
import inspect
import threading

from oslo_config import cfg
import oslo_messaging as messaging
from osprofiler import profiler

from ministack import context as ms_context
from ministack import exception
from ministack import library_behaviour
from ministack.trace import profiler as ms_profiler

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

#: Whether the message this executor thread is about to handle came in
#: a trace: set by the serializer, taken by the first endpoint method.
_INBOUND = threading.local()


def register_opts(conf):
    conf.register_opts(rpc_opts)


def list_opts():
    return [("DEFAULT", rpc_opts)]


class RequestContextSerializer(messaging.Serializer):
    """Carry the RequestContext over the wire as a dict.

    As nova's ``ProfilerRequestContextSerializer``: inside a trace the
    dict also carries osprofiler's ``trace_info`` (HMAC key, base id, the
    sending span as parent), and the receiving thread joins that trace.
    A message without it clears any trace the (pooled) executor thread
    still had from an earlier message.
    """

    def serialize_entity(self, ctxt, entity):
        return entity

    def deserialize_entity(self, ctxt, entity):
        return entity

    def serialize_context(self, ctxt):
        values = ctxt.to_dict()
        prof = profiler.get()
        if prof is not None:
            values["trace_info"] = {"hmac_key": prof.hmac_key,
                                    "base_id": prof.get_base_id(),
                                    "parent_id": prof.get_id()}
        return values

    def deserialize_context(self, ctxt):
        trace_info = ctxt.pop("trace_info", None) \
            if isinstance(ctxt, dict) else None
        # osprofiler's init() keeps a profiler the thread already has:
        # clean first, or this message would join the previous one's trace.
        profiler.clean()
        _INBOUND.traced = bool(trace_info)
        if trace_info:
            profiler.init(**trace_info)
        return ms_context.RequestContext.from_dict(ctxt)


def _send(kind, cctxt, ctxt, method, kwargs):
    send = cctxt.call if kind == "CALL" else cctxt.cast
    if profiler.get() is None:
        return send(ctxt, method, **kwargs)
    target = cctxt.target
    with ms_profiler.span(
            "rpc", kind, method, actor="rabbitmq",
            details=lambda: {"side": "client", "topic": target.topic,
                             "server": target.server,
                             "version": target.version}):
        return send(ctxt, method, **kwargs)


def call(cctxt, ctxt, method, **kwargs):
    """``cctxt.call(ctxt, method, **kwargs)`` (``cctxt``: an RPC client
    or its ``prepare()``d form) as a CALL span inside a trace: the span
    that puts the message on the broker, parent of the server's span."""
    return _send("CALL", cctxt, ctxt, method, kwargs)


def cast(cctxt, ctxt, method, **kwargs):
    """``cctxt.cast(ctxt, method, **kwargs)`` as a CAST span inside a
    trace (see :func:`call`)."""
    return _send("CAST", cctxt, ctxt, method, kwargs)


def _server_side():
    return {"side": "server"}


def _handler(name, func, actor):
    @functools.wraps(func)
    def handler(self, ctxt, *args, **kwargs):
        if not getattr(_INBOUND, "traced", False):
            return func(self, ctxt, *args, **kwargs)
        _INBOUND.traced = False     # calls it makes are not messages
        with ms_profiler.span("rpc", "CALL", name, actor=actor,
                              details=_server_side) as sp:
            try:
                return func(self, ctxt, *args, **kwargs)
            except messaging.ExpectedException as exc:
                # expected_exceptions wraps what the handler raised; the
                # caller gets the wrapped exception, and so does the hop
                # (DeviceDetachFailed, not ExpectedException).
                sp.failed_with(exc.exc_info[1])
                raise
    return handler


def traced_endpoint(actor):
    """Class decorator for an RPC endpoint: each public method, when it
    handles a message that came in a trace, is that message's
    server-side span (hops takes CALL or CAST from the client's span,
    its parent). As osprofiler's ``trace_cls("rpc")``, but the span
    records what the hop tables show (kind, name, ``actor``); a method
    called directly (the reconciler, another handler) records nothing.
    """
    def decorate(cls):
        for name, func in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_"):
                setattr(cls, name, _handler(name, func, actor))
        return cls
    return decorate


def get_transport(conf):
    """The RPC transport for ``transport_url``.

    :raises ConfigError: the URL is missing or malformed.
    """
    library_behaviour.register_messaging_opt_groups(conf)
    library_behaviour.slow_down_ack_polling()
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
    url = transport.conf.transport_url
    parsed = messaging.TransportURL.parse(transport.conf, url)
    if parsed.transport != "rabbit":
        return  # the fake driver: nothing to reach
    import kombu

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
    """oslo.messaging's RPC client, with the context serializer; send
    through :func:`call` and :func:`cast` to trace the message."""
    # A transport built directly (fake:/ in tests) has not been through
    # get_transport, so make sure its conf has the tracing groups too.
    library_behaviour.register_messaging_opt_groups(transport.conf)
    return messaging.get_rpc_client(
        transport, target, version_cap=version_cap, timeout=timeout,
        serializer=RequestContextSerializer())


def get_server(transport, target, endpoints):
    """An RPC server with native threads (executor='threading'), whose
    pool starts a thread only when the ones it has are nearly all busy
    (up to ``[DEFAULT] executor_thread_pool_size``; see
    :func:`ministack.library_behaviour.use_dynamic_thread_pool`). Its
    endpoints trace themselves (:func:`traced_endpoint`).
    """
    library_behaviour.register_messaging_opt_groups(transport.conf)
    server = messaging.get_rpc_server(
        transport, target, endpoints, executor="threading",
        serializer=RequestContextSerializer())
    return library_behaviour.use_dynamic_thread_pool(server)
