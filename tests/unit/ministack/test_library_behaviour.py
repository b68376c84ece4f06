"""The library behaviour ministack relies on where there is no hook
(ministack/library_behaviour.py): these fail on an upgrade that
changes it, instead of the daemons silently losing the setting."""

import importlib.metadata
import inspect
import subprocess
import sys

import futurist
from oslo_config import cfg
import oslo_messaging
from oslo_messaging import server as messaging_server
from oslo_messaging._drivers import amqpdriver

from ministack import library_behaviour
from ministack import rpc


def test_oslo_messaging_is_the_series_written_against():
    version = importlib.metadata.version("oslo.messaging")
    assert version.split(".")[0] == library_behaviour.OSLO_MESSAGING_SERIES, \
        version


def test_listeners_read_the_ack_poll_constant_at_each_wait():
    """The listener and the reply waiter read the module constant each
    time they reset their wait (not a copy taken at import)."""
    source = inspect.getsource(amqpdriver)
    assert source.count("= ACK_REQUEUE_EVERY_SECONDS_MIN") >= 2
    old = amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN
    try:
        library_behaviour.slow_down_ack_polling()
        assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == \
            library_behaviour.ACK_POLL_MIN_SECONDS
    finally:
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = old


def test_server_builds_its_pool_from_executor_cls():
    source = inspect.getsource(messaging_server.MessageHandlingServer)
    assert "self._executor_cls(" in source
    conf = cfg.ConfigOpts()
    conf([], project="t")
    transport = oslo_messaging.get_rpc_transport(conf, url="fake:/")
    try:
        server = rpc.get_server(
            transport, oslo_messaging.Target(topic="t", server="s"), [])
        assert server._executor_cls is futurist.DynamicThreadPoolExecutor
    finally:
        transport.cleanup()


def test_messaging_opt_groups_are_only_on_the_global_conf():
    """oslo.messaging reads these groups from the transport's conf but
    registers them on cfg.CONF only: a daemon's own ConfigOpts needs
    them registered (register_messaging_opt_groups)."""
    conf = cfg.ConfigOpts()
    library_behaviour.register_messaging_opt_groups(conf)
    for _module, group in library_behaviour._MESSAGING_OPT_GROUPS:
        assert group in cfg.CONF
        assert group in conf


def test_durable_queues_default_reaches_the_rabbit_group():
    """The default set on oslo.messaging's option objects is the one a
    daemon's conf sees once the rabbit driver registered its group."""
    from ministack import config
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    conf([], project="t")
    transport = oslo_messaging.get_rpc_transport(
        conf, url="rabbit://guest:guest@127.0.0.1:5672/")
    try:
        assert conf.oslo_messaging_rabbit.amqp_durable_queues is True
    finally:
        transport.cleanup()


def test_oslo_service_runs_the_threading_backend():
    from oslo_service import backend
    assert backend.get_backend_type() is backend.BackendType.THREADING


def test_eventlet_import_warnings_are_the_ones_filtered():
    """futurist still imports eventlet, which warns on import; with
    ministack imported first, nothing is printed."""
    def stderr_of(code):
        return subprocess.run([sys.executable, "-c", code],
                              capture_output=True, text=True,
                              check=True).stderr
    assert "Eventlet is deprecated" in stderr_of("import futurist")
    assert stderr_of("import ministack, futurist, oslo_messaging") == ""


def test_osprofiler_trace_info_decides_as_its_middleware():
    from osprofiler import profiler
    from osprofiler import web

    middleware = web.WsgiMiddleware(None, hmac_keys="k1", enabled=True)
    profiler.init(hmac_key="k1")
    try:
        environ = {"HTTP_" + k.upper().replace("-", "_"): v
                   for k, v in web.get_trace_id_headers().items()}
        base_id = profiler.get().get_base_id()
    finally:
        profiler.clean()
    try:
        web.enable("k1")
        info = library_behaviour.osprofiler_trace_info(middleware, environ)
        assert info["base_id"] == base_id and info["hmac_key"] == "k1"
        assert library_behaviour.osprofiler_trace_info(middleware, {}) is None
        web.enable("other-key")
        assert library_behaviour.osprofiler_trace_info(
            middleware, environ) is None
        web.disable()
        assert library_behaviour.osprofiler_trace_info(
            middleware, environ) is None
    finally:
        web.disable()
        web._ENABLED = None
        web._HMAC_KEYS = None


def test_closing_waitress_channels_ends_its_run_loop():
    import socket
    import threading

    from waitress.server import create_server

    def app(environ, start_response):
        start_response("200 OK", [])
        return [b""]
    server = create_server(app, host="127.0.0.1", port=0)
    runner = threading.Thread(target=server.run, daemon=True)
    runner.start()
    # An open connection as well as the listener: answered once, so the
    # server has accepted it before the close.
    client = socket.create_connection(server.socket.getsockname())
    try:
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert client.recv(64).startswith(b"HTTP/1.1 200")
        server.task_dispatcher.shutdown()
        library_behaviour.close_waitress_channels(server)
        runner.join(10)   # run() may end on the closed socket's error
    finally:
        client.close()
    assert not runner.is_alive()
