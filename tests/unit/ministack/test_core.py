"""The shared plumbing: exceptions, executor, config, context, WSGI, DB."""

import json
import os

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from minicompute.db import MIGRATIONS_DIR as NOVA_MIGRATIONS
from ministack import config
from ministack import context as ms_context
from ministack import db
from ministack import exception
from ministack import executor
from ministack import wsgi


def test_exception_formats_its_template():
    class VolumeNotFound(exception.NotFound):
        msg_fmt = "Volume %(volume_id)s could not be found."

    err = VolumeNotFound(volume_id="v1")
    assert str(err) == "Volume v1 could not be found."
    assert err.code == 404 and err.kwargs["volume_id"] == "v1"


def test_executor_returns_output_and_raises_on_failure():
    out, _err = executor.execute("echo", "hello")
    assert out == "hello\n"
    with pytest.raises(exception.ProcessExecutionError) as err:
        executor.execute("sh", "-c", "echo oops >&2; exit 3")
    assert err.value.exit_code == 3 and "oops" in err.value.stderr


def test_executor_accepts_listed_exit_codes():
    executor.execute("sh", "-c", "exit 2", check_exit_code=[0, 2])


def test_executor_reports_a_missing_command():
    with pytest.raises(exception.ProcessExecutionError) as err:
        executor.execute("no-such-tool-ministack")
    assert err.value.exit_code == 127


def test_require_tools_names_the_missing_tool():
    with pytest.raises(exception.MissingTool) as err:
        executor.require_tools("sh", "no-such-tool-ministack")
    assert "no-such-tool-ministack" in str(err.value)


def _conf():
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    return conf


def test_rpc_queues_are_durable_by_default():
    """Casts to a stopped compute survive a broker restart (and the
    exchange is ``ministack``); an operator can still turn it off."""
    from ministack import rpc
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    conf([], project="ministack-test")
    transport = rpc.get_transport(conf)
    try:
        assert conf.oslo_messaging_rabbit.amqp_durable_queues is True
        assert conf.control_exchange == "ministack"
        conf.set_override("amqp_durable_queues", False,
                          group="oslo_messaging_rabbit")
        assert conf.oslo_messaging_rabbit.amqp_durable_queues is False
    finally:
        transport.cleanup()


def test_missing_config_file_is_one_clear_error(tmp_path):
    missing = str(tmp_path / "nope.conf")
    with pytest.raises(exception.ConfigError) as err:
        config.parse_args(_conf(), ["--config-file", missing], "ministack")
    assert missing in str(err.value)


def test_malformed_config_file_is_one_clear_error(tmp_path):
    path = tmp_path / "bad.conf"
    path.write_text("this is not ini\n[")
    with pytest.raises(exception.ConfigError):
        config.parse_args(_conf(), ["--config-file", str(path)], "ministack")


def test_bad_option_value_names_the_option(tmp_path):
    path = tmp_path / "bad.conf"
    path.write_text("[database]\nconnect_timeout = soon\n")
    with pytest.raises(exception.ConfigError) as err:
        config.parse_args(_conf(), ["--config-file", str(path)], "ministack")
    assert "connect_timeout" in str(err.value)


def test_database_url_defaults_to_sqlite_under_state_path(tmp_path):
    conf = _conf()
    conf([], project="ministack")
    conf.set_override("state_path", str(tmp_path))
    assert config.database_url(conf, "nova") == (
        "sqlite:///%s" % os.path.join(str(tmp_path), "nova.sqlite"))


def test_context_round_trips_through_a_dict():
    ctx = ms_context.RequestContext(
        user_id="u", project_id="p", roles=["member"], request_id="req-1",
        global_request_id="req-g", is_service=True)
    copy = ms_context.RequestContext.from_dict(ctx.to_dict())
    assert (copy.user_id, copy.project_id, copy.roles, copy.request_id,
            copy.global_request_id, copy.is_service) == (
        "u", "p", ["member"], "req-1", "req-g", True)
    assert not copy.is_admin and copy.elevated().is_admin


def _call(app, path, headers=None):
    environ = {"PATH_INFO": path, "REQUEST_METHOD": "GET"}
    environ.update(headers or {})
    seen = {}

    def start_response(status, response_headers, exc_info=None):
        seen["status"] = status
        seen["headers"] = dict(response_headers)

    body = b"".join(app(environ, start_response))
    return environ, seen, body


def test_middleware_builds_context_and_stamps_request_ids():
    def inner(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]

    app = wsgi.ContextMiddleware(inner, project_re=r"^/v3/([^/]+)",
                                 extra_request_id_headers=[
                                     "x-compute-request-id"])
    global_id = "req-12345678-1234-1234-1234-123456789abc"
    environ, seen, _ = _call(app, "/v3/proj1/volumes", {
        "HTTP_X_OPENSTACK_REQUEST_ID": global_id,
        "HTTP_X_AUTH_TOKEN": "demo:proj1"})
    ctx = environ[wsgi.ENV_CONTEXT]
    assert ctx.project_id == "proj1" and ctx.user_id == "demo"
    assert not ctx.is_admin
    assert ctx.global_request_id == global_id
    assert seen["headers"]["x-openstack-request-id"] == ctx.request_id
    assert seen["headers"]["x-compute-request-id"] == ctx.request_id
    assert ctx.request_id.startswith("req-") and ctx.request_id != global_id


def test_middleware_ignores_a_malformed_global_request_id():
    app = wsgi.ContextMiddleware(lambda e, s: s("200 OK", []) or [b""])
    environ, _, _ = _call(app, "/", {"HTTP_X_OPENSTACK_REQUEST_ID": "evil"})
    assert environ[wsgi.ENV_CONTEXT].global_request_id is None


def test_fault_body_uses_upstream_names():
    assert wsgi.fault_body(404, "gone") == {
        "itemNotFound": {"code": 404, "message": "gone"}}
    assert json.dumps(wsgi.fault_body(500, "x")).startswith(
        '{"computeFault"')


def test_nova_migrations_create_upstream_tables(tmp_path):
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    db.upgrade(engine, NOVA_MIGRATIONS)
    db.upgrade(engine, NOVA_MIGRATIONS)  # idempotent
    tables = set(sa.inspect(engine).get_table_names())
    assert {"instances", "block_device_mapping", "instance_actions",
            "instance_actions_events", "services"} <= tables
    columns = {c["name"] for c in
               sa.inspect(engine).get_columns("block_device_mapping")}
    assert {"attachment_id", "connection_info", "device_name", "deleted",
            "uuid", "volume_id"} <= columns


def test_unreachable_database_is_a_config_error():
    with pytest.raises(exception.ConfigError) as err:
        db.make_engine("postgresql+psycopg://u:p@127.0.0.1:1/nova",
                       connect_timeout=2)
    assert "[database] connection" in str(err.value)
    assert "p@" not in str(err.value)  # the password is hidden


def test_executor_never_shows_a_secret(caplog):
    """tgtadm takes the CHAP secret as an argument: it must not reach the
    debug log or a failure's message."""
    import logging
    caplog.set_level(logging.DEBUG, logger="ministack.executor")
    with pytest.raises(exception.ProcessExecutionError) as err:
        executor.execute("sh", "-c", "exit 3", "--password", "s3cr3t-chap",
                         "--secret=other-s3cr3t")
    assert "s3cr3t" not in caplog.text and "s3cr3t" not in str(err.value)
    assert "--password" in caplog.text and "***" in str(err.value)
    assert executor.masked(["tgtadm", "--user", "u", "--password", "p"]) == \
        ["tgtadm", "--user", "u", "--password", "***"]
