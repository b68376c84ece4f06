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

import futurist
import oslo_messaging as messaging
from oslo_config import cfg
from osprofiler import profiler

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
        if trace_info:
            profiler.init(**trace_info)
        return ms_context.RequestContext.from_dict(ctxt)


class _TracedCallContext:
    """An RPC client (or its ``prepare()``d form) whose ``call`` and
    ``cast`` are CALL/CAST spans: the span that puts the message on the
    broker, parent of the server's span."""

    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        return getattr(self._client, name)

    def prepare(self, *args, **kwargs):
        return _TracedCallContext(self._client.prepare(*args, **kwargs))

    def _send(self, kind, ctxt, method, kwargs):
        send = getattr(self._client, kind.lower())
        if profiler.get() is None:
            return send(ctxt, method, **kwargs)
        from ministack.trace import profiler as ms_profiler
        target = getattr(self._client, "target", None)
        with ms_profiler.span(
                "rpc", kind, method, actor="rabbitmq",
                details=lambda: {"side": "client",
                                 "topic": getattr(target, "topic", None),
                                 "server": getattr(target, "server", None),
                                 "version": getattr(target, "version",
                                                    None)}):
            return send(ctxt, method, **kwargs)

    def call(self, ctxt, method, **kwargs):
        return self._send("CALL", ctxt, method, kwargs)

    def cast(self, ctxt, method, **kwargs):
        return self._send("CAST", ctxt, method, kwargs)


class _TracedEndpoint:
    """An RPC endpoint whose public methods are server-side spans (the
    compute's handling of a CALL or CAST; hops takes the kind from the
    client's span, its parent). A handler that fails with one of its
    ``expected_exceptions`` records that exception, not oslo.messaging's
    ExpectedException wrapper."""

    def __init__(self, endpoint, actor):
        self._endpoint = endpoint
        self._actor = actor
        self.target = getattr(endpoint, "target", None)

    def __getattr__(self, name):
        attr = getattr(self._endpoint, name)
        if name.startswith("_") or not callable(attr):
            return attr
        actor = self._actor

        def traced(ctxt, **kwargs):
            if profiler.get() is None:
                return attr(ctxt, **kwargs)
            from ministack.trace import profiler as ms_profiler
            with ms_profiler.span("rpc", "CALL", name, actor=actor,
                                  details=lambda: {"side": "server"}) as sp:
                try:
                    return attr(ctxt, **kwargs)
                except messaging.ExpectedException as exc:
                    # expected_exceptions wraps what the handler raised;
                    # the caller gets the wrapped exception, and so does
                    # the hop (DeviceDetachFailed, not ExpectedException).
                    sp.failed_with(exc.exc_info[1])
                    raise
        return traced


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


#: Seconds oslo.messaging's listener threads first wait for the next
#: frame after a message, doubling on each idle wake-up up to 5 s
#: (``amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN``, 1 ms upstream).
ACK_POLL_MIN_SECONDS = 0.02


def slow_down_ack_polling():
    """Let oslo.messaging's listener threads sleep longer between polls.

    After each message an RPC server's listener (and an RPC client's
    reply waiter) waits 1 ms for the next frame, then 2, 4, 8 ms... so
    that acknowledgements the executor's threads queue for it go out
    soon. Under a burst of attaches that is hundreds of idle wake-ups a
    second, each a pass through kombu's retry wrappers and a socket
    timeout raised and caught, a noticeable share of the daemons' CPU
    per attach. A message that arrives wakes the
    thread at once whatever the wait, and replies are sent by the
    executor's thread itself; only the acknowledgement of a message
    received waits up to this long. The queues prefetch without limit
    (``rabbit_qos_prefetch_count`` 0), so a late ack holds no message
    back. A host that dies after a message arrived but before its ack
    went out gets it again when it is back, as upstream; the window is
    20 ms instead of 1 ms (attach_volume and detach_volume take a
    redelivered cast as done)."""
    from oslo_messaging._drivers import amqpdriver
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = ACK_POLL_MIN_SECONDS


def get_transport(conf):
    """The RPC transport for ``transport_url``.

    :raises ConfigError: the URL is missing or malformed.
    """
    _register_tracing_opts(conf)
    slow_down_ack_polling()
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
    return _TracedCallContext(messaging.get_rpc_client(
        transport, target, version_cap=version_cap, timeout=timeout,
        serializer=RequestContextSerializer()))


def get_server(transport, target, endpoints, actor="nova-compute"):
    """An RPC server with native threads (executor='threading'); each
    endpoint method is a span in a trace the message carries.

    Its pool starts a thread only when the ones it has are nearly all
    busy (futurist's DynamicThreadPoolExecutor, up to ``[DEFAULT]
    executor_thread_pool_size``, 64). The 'threading' executor's own
    pool starts a new thread for every message until it has 64, sized for
    eventlet's green threads: as native threads each one's first deep
    calls touch its own stack and malloc caches for good, so the
    daemon's RSS grew under a soak of one attach at a time.
    """
    _register_tracing_opts(transport.conf)
    endpoints = [_TracedEndpoint(endpoint, actor) for endpoint in endpoints]
    server = messaging.get_rpc_server(
        transport, target, endpoints, executor="threading",
        serializer=RequestContextSerializer())
    # oslo.messaging builds the pool at start() from this class, with
    # max_workers only (no public hook for another pool).
    server._executor_cls = futurist.DynamicThreadPoolExecutor
    return server
