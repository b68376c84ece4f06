"""What ministack relies on in its libraries where they offer no hook.

Everything else goes through the libraries' public APIs. Each function
here names the library version whose behaviour it was written against;
``tests/unit/ministack/test_library_behaviour.py`` checks that the
installed versions still behave so, and fails on an upgrade that
changes it (rather than the daemons silently losing the setting).

* oslo.service 4.x: the backend a process uses is chosen once, by a
  hook registered before anything asks for it (its default is eventlet);
  futurist 3.x imports eventlet when it can, and eventlet's import warns
  (its deprecation, and dnspython's use of cryptography's DSA).
* osprofiler 4.x: ``web.WsgiMiddleware`` decides whether a request
  starts a trace from module globals set by ``web.enable()`` and a
  private check of the signed ``X-Trace-Info``; a subclass that adds to
  the ``wsgi`` span must decide the same way.
* waitress 3.x: a server's loop ends when its channel map is empty;
  there is no public call that closes the listener and the open
  connections together.
* oslo.messaging 18.x: the RPC listener's first idle wait
  (``amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN``) and the class an RPC
  server builds its executor pool from (``server._executor_cls``);
  its tracing and metrics option groups, registered on the global
  ``cfg.CONF`` only (``oslo_messaging._tracing.client``,
  ``oslo_messaging._metrics.client``), but read from the transport's
  own ConfigOpts on every call and cast; the default of
  ``[oslo_messaging_rabbit] amqp_durable_queues``, set on its option
  objects (``oslo_messaging._drivers.amqp.amqp_opts``: the public
  ``oslo_messaging.opts.list_opts`` returns copies).
"""

import importlib
import warnings

from oslo_config import cfg
from oslo_service import backend as oslo_service_backend

#: The oslo.messaging series the functions below were written against.
OSLO_MESSAGING_SERIES = "18"

#: Seconds oslo.messaging's listener threads first wait for the next
#: frame after a message (1 ms upstream), doubling on each idle wake-up.
ACK_POLL_MIN_SECONDS = 0.02

_MESSAGING_OPT_GROUPS = (
    ("oslo_messaging._tracing.client", "oslo_messaging_tracing"),
    ("oslo_messaging._metrics.client", "oslo_messaging_metrics"),
)


#: Warnings printed when futurist imports eventlet, which ministack
#: never runs: (message regex, module the warning is raised in).
EVENTLET_IMPORT_WARNINGS = (
    (r"\s*Eventlet is deprecated", r"futurist\._utils"),
    (r"DSA is deprecated", r"dns\.dnssecalgs\.dsa"),
)


def run_on_native_threads():
    """oslo.service's threading backend for this process, and no
    warnings from eventlet's import.

    oslo.messaging's server imports oslo.service, whose default backend
    is eventlet; ministack runs oslo.messaging's 'threading' executor.
    Only these warnings, raised where they are, are filtered: a real use
    of eventlet would come from elsewhere and still warn.
    """
    for message, module in EVENTLET_IMPORT_WARNINGS:
        warnings.filterwarnings("ignore", message=message, module=module)
    oslo_service_backend.register_backend_default_hook(
        lambda: oslo_service_backend.BackendType.THREADING)


def osprofiler_trace_info(middleware, environ):
    """The trace osprofiler's ``WsgiMiddleware`` would start for this
    request: its ``X-Trace-Info``, signed with one of the keys, when
    tracing is on; else None (one dictionary lookup without a header).
    """
    header = environ.get("HTTP_X_TRACE_INFO")
    if not header:
        return None
    from osprofiler import _utils
    from osprofiler import web
    enabled = web._ENABLED if web._ENABLED is not None \
        else middleware.enabled
    if not enabled:
        return None
    trace_info = _utils.signed_unpack(
        header, environ.get("HTTP_X_TRACE_HMAC"),
        web._HMAC_KEYS or middleware.hmac_keys)
    if not middleware._trace_is_valid(trace_info):
        return None
    return trace_info


def close_waitress_channels(server):
    """Close ``server``'s listening socket and its connections, so that
    its ``run()`` returns (a waitress server made by ``create_server``).
    """
    from waitress import wasyncore
    wasyncore.close_all(server._map)


def slow_down_ack_polling():
    """Let oslo.messaging's listener threads sleep longer between polls.

    After each message an RPC listener (and a client's reply waiter)
    waits 1 ms for the next frame, then 2, 4, 8 ms..., so that the acks
    the executor's threads queue go out soon: under a burst of attaches,
    hundreds of idle wake-ups a second. A message that arrives wakes the
    thread at once whatever the wait; only the ack of a message received
    waits up to this long (the queues prefetch without limit, so a late
    ack holds no message back). A host that dies between a message and
    its ack gets it again, as upstream, within 20 ms instead of 1 ms.
    """
    amqpdriver = importlib.import_module("oslo_messaging._drivers.amqpdriver")
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = ACK_POLL_MIN_SECONDS


def use_dynamic_thread_pool(server):
    """Make ``server`` (an RPC server, not started) start its pool's
    threads on demand, up to ``executor_thread_pool_size``.

    The 'threading' executor's own pool starts a thread for every
    message until it has 64 (sized for green threads); as native threads
    each keeps its stack and malloc caches, and the daemon's memory
    grows. oslo.messaging builds the pool at ``start()`` from this
    class, with ``max_workers`` only.
    """
    import futurist  # after run_on_native_threads: it imports eventlet
    server._executor_cls = futurist.DynamicThreadPoolExecutor
    return server


def register_messaging_opt_groups(conf):
    """Register oslo.messaging's tracing and metrics groups on ``conf``
    (a daemon's own ConfigOpts), which it reads on every call and cast;
    without them every RPC fails with NoSuchOptError."""
    for module, group in _MESSAGING_OPT_GROUPS:
        try:
            opts = getattr(importlib.import_module(module), group)
        except (ImportError, AttributeError):
            continue  # an oslo.messaging without that feature
        conf.register_opts(opts, group=group)


def durable_queues_by_default():
    """``[oslo_messaging_rabbit] amqp_durable_queues`` defaults to true:
    the compute's queue and the casts in it outlive a broker restart."""
    amqp = importlib.import_module("oslo_messaging._drivers.amqp")
    cfg.set_defaults(amqp.amqp_opts, amqp_durable_queues=True)
