"""ministack.trace in the daemons: the SQL trace store (osprofiler's driver
fixed for SQLAlchemy 2 and SQLite), trace info across RPC, the WSGI entry
span, the access log, the executor's and SQL span names, the CLI, and
action names on both sides of a REST hop."""

import json
import logging
import threading

from oslo_config import cfg
import oslo_messaging as messaging
from osprofiler import profiler
from osprofiler import web
import pytest

from ministack import executor
from ministack import request_log
from ministack import rpc
from ministack import wsgi
from ministack.context import RequestContext
from ministack.trace import hops
from ministack.trace import middleware
from ministack.trace import profiler as ms_profiler
from ministack.trace import storage
from ministack_course import trace_cmd as cmd
from tests.unit.ministack.trace_rows import BASE
from tests.unit.ministack.trace_rows import CHAP


def test_spans_round_trip_through_the_sql_store(store):
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    ctxt = RequestContext(request_id="req-%s" % BASE, overwrite=True)
    try:
        with ms_profiler.span("rpc", "CAST", "attach_volume",
                              actor="rabbitmq",
                              details=lambda: {"auth_password": CHAP}):
            executor.execute("true")
    finally:
        profiler.clean()
    trace = hops.load(store, base)
    names = [hop["name"] for hop in trace["hops"]]
    assert names == ["attach_volume", "true"]
    assert trace["hops"][1]["kind"] == "COMMAND"
    assert trace["hops"][1]["parent_id"] == trace["hops"][0]["id"]
    assert trace["hops"][0]["request_id"] == ctxt.request_id
    # Found by request id too; unknown ids are TraceNotFound.
    assert hops.load(store, ctxt.request_id)["trace_id"] == base
    with pytest.raises(hops.TraceNotFound):
        hops.load(store, "req-00000000-0000-4000-8000-000000000000")
    with pytest.raises(hops.TraceNotFound):
        hops.load(store, "not-an-id")
    # osprofiler's own report (what `osprofiler trace show` prints).
    report = storage.SQLiteDriver(store).get_report(base)
    assert report["stats"]["rpc"]["count"] == 1
    assert storage.SQLiteDriver(store).list_traces()[0]["base_id"] == base
    assert CHAP not in json.dumps(trace)


def test_registered_driver_is_what_osprofiler_finds(store):
    from osprofiler.drivers import base as drivers_base
    from osprofiler.drivers import sqlalchemy_driver
    storage.register()
    assert isinstance(drivers_base.get_driver(store), storage.SQLiteDriver)
    assert sqlalchemy_driver.SQLAlchemyDriver.get_report is \
        storage.SQLAlchemyDriver.get_report


def test_no_span_outside_a_trace(store):
    profiler.clean()
    built = []
    with ms_profiler.span("libvirt", "LIBRARY", "x",
                          details=lambda: built.append(1)) as sp:
        sp.set(status=1)
    assert built == []
    assert not sp.active


def test_rpc_context_carries_the_trace_and_clears_a_stale_one(store):
    serializer = rpc.RequestContextSerializer()
    ctxt = RequestContext(request_id="req-%s" % BASE, overwrite=False)
    profiler.init("unit-key")
    sent = profiler.get()
    wire = serializer.serialize_context(ctxt)
    profiler.clean()
    assert wire["trace_info"]["base_id"] == sent.get_base_id()
    assert wire["trace_info"]["parent_id"] == sent.get_id()
    seen = {}

    def receive():
        profiler.init("unit-key")  # a stale trace from another message
        serializer.deserialize_context(dict(wire))
        seen["traced"] = profiler.get().get_base_id()
        untraced = serializer.serialize_context(ctxt)
        untraced.pop("trace_info")
        serializer.deserialize_context(untraced)
        seen["after"] = profiler.get()

    thread = threading.Thread(target=receive)
    thread.start()
    thread.join()
    assert seen == {"traced": sent.get_base_id(), "after": None}
    assert "trace_info" not in serializer.serialize_context(ctxt)


def _app(environ, start_response):
    environ[wsgi.ENV_REQUEST_ID] = "req-%s" % BASE
    start_response("202 Accepted", [("Content-Type", "text/plain")])
    return [b"ok"]


def test_wsgi_entry_span_records_status_and_request_id(store):
    app = middleware.wrap(_app)
    profiler.init("unit-key")
    headers = web.get_trace_id_headers()
    base = profiler.get().get_base_id()
    profiler.clean()
    environ = {"REQUEST_METHOD": "DELETE", "PATH_INFO": "/v2.1/x",
               "QUERY_STRING": "", "wsgi.url_scheme": "http",
               "HTTP_X_TRACE_INFO": headers["X-Trace-Info"],
               "HTTP_X_TRACE_HMAC": headers["X-Trace-HMAC"]}
    body = app(environ, lambda status, headers, exc_info=None: None)
    assert b"".join(body) == b"ok"
    assert profiler.get() is None
    hop = hops.load(store, base)["hops"][0]
    assert (hop["name"], hop["status"], hop["request_id"]) == \
        ("DELETE /v2.1/x", 202, "req-%s" % BASE)
    # A header signed with another key starts nothing.
    profiler.init("another-key")
    bad = web.get_trace_id_headers()
    profiler.clean()
    environ.update(HTTP_X_TRACE_INFO=bad["X-Trace-Info"],
                   HTTP_X_TRACE_HMAC=bad["X-Trace-HMAC"])
    app(environ, lambda status, headers, exc_info=None: None)
    assert len(hops.load(store, base)["hops"]) == 1


def test_access_log_line(caplog):
    app = request_log.RequestLog(_app)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/v2.1/servers",
               "QUERY_STRING": "limit=1", "REMOTE_ADDR": "127.0.0.1"}
    with caplog.at_level(logging.INFO, logger="ministack.request_log"):
        body = app(environ, lambda status, headers, exc_info=None: None)
        assert list(body) == [b"ok"]
        body.close()
    record = caplog.records[-1]
    message = record.getMessage()
    assert message.startswith(
        '127.0.0.1 "GET /v2.1/servers?limit=1" status: 202 len: 2 '
        'microversion: - time: ')
    assert record.context.request_id == "req-%s" % BASE


def test_executor_span_names_hold_no_argument():
    assert executor.span_name(["tgtadm", "--lld", "iscsi", "--mode",
                               "target", "--op", "new", "--password",
                               CHAP]) == "tgtadm target new"
    assert executor.span_name(["/usr/bin/qemu-img", "convert", "-f"]) == \
        "qemu-img convert"
    assert executor.span_name(["lvcreate", "-n", "v", "-L", "1G"]) == \
        "lvcreate"


def test_cli_reads_the_connection_string_and_shows(store, tmp_path, capsys):
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    with ms_profiler.span("rpc", "CALL", "reserve_block_device_name",
                          actor="rabbitmq"):
        pass
    profiler.clean()
    conf_file = tmp_path / "miniapi.conf"
    conf_file.write_text("[profiler]\nconnection_string = %s\n" % store)
    assert cmd.main(["show", base, "--config-file", str(conf_file)]) == 0
    assert "reserve_block_device_name" in capsys.readouterr().out
    assert cmd.main(["show", base, "--json", "--connection-string",
                     store]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["hops"][0]["kind"] == "CALL"
    assert cmd.main(["show", "req-00000000-0000-4000-8000-000000000000",
                     "--connection-string", store]) == 1
    assert cmd.main(["show", base, "--config-file",
                     str(tmp_path / "missing.conf")]) == 2


@pytest.mark.parametrize("trace_section, url", [
    ("listen = 127.0.0.1\nlisten_port = 8780\n", "http://127.0.0.1:8780"),
    ("listen_port = 8781\n", "http://127.0.0.1:8781"),
    ("listen = 0.0.0.0\nlisten_port = 8780\n", "http://127.0.0.1:8780"),
    ("listen = ::1\nlisten_port = 8780\n", "http://[::1]:8780"),
    ("listen_port = 0\n", None),
    ("", None),
])
def test_cli_prints_the_journey_page(store, tmp_path, capsys, trace_section,
                                     url):
    """After the table, the page that draws the trace, as tools/journey.py
    prints it: miniapi's [trace] listen and listen_port (the trace's id,
    also when it was asked for by request id); never in --json."""
    ctxt = RequestContext(request_id="req-%s" % BASE, overwrite=True)
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    with ms_profiler.span("rpc", "CAST", "detach_volume", actor="rabbitmq"):
        pass
    profiler.clean()
    miniapi = tmp_path / "miniapi.conf"
    miniapi.write_text("[profiler]\nconnection_string = %s\n[trace]\n%s"
                       % (store, trace_section))
    cinder = tmp_path / "minicinder.conf"
    cinder.write_text("[trace]\nlisten_port = 9999\n")
    args = ["--config-file", str(miniapi), "--config-file", str(cinder)]
    for ident in (base, ctxt.request_id):
        assert cmd.main(["show", ident] + args) == 0
        lines = capsys.readouterr().out.splitlines()
        assert "detach_volume" in lines[2]
        if url is None and trace_section:
            assert not [line for line in lines if "journey page" in line]
        elif url is None:       # the next config's [trace]
            assert lines[-1] == "the journey page: http://127.0.0.1:9999" \
                "/trace/%s" % base
        else:
            assert lines[-1] == "the journey page: %s/trace/%s" % (url, base)
    assert cmd.main(["show", base, "--json"] + args) == 0
    assert json.loads(capsys.readouterr().out)["trace_id"] == base


def test_sql_spans_hold_the_statement_not_its_parameters(store, tmp_path):
    import sqlalchemy as sa
    ms_profiler._STATE["sqlalchemy"] = True
    try:
        engine = ms_profiler.trace_engine(sa.create_engine(
            "sqlite:///%s" % (tmp_path / "app.sqlite")))
    finally:
        ms_profiler._STATE["sqlalchemy"] = False
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT :secret AS connection_info"),
                         {"secret": CHAP}).all()
    finally:
        profiler.clean()
    hop = hops.load(store, base)["hops"][0]
    assert hop["kind"] == "DB"
    assert hop["details"]["statement"].startswith("SELECT ?")
    assert CHAP not in json.dumps(hops.load(store, base))


class DeviceDetachFailed(Exception):
    pass


@rpc.traced_endpoint("nova-compute")
class _Endpoint:
    @messaging.expected_exceptions(DeviceDetachFailed)
    def detach_volume(self, ctxt, volume_id):
        raise DeviceDetachFailed("Device detach failed for vdb: %s"
                                 % volume_id)

    def list_faults(self, ctxt):
        return self.helper(ctxt)

    def helper(self, ctxt):
        return "listed"


def _received_in_a_trace():
    """A context as the compute's executor thread gets it from a message
    sent inside a trace (the thread joins it); returns (ctxt, base)."""
    serializer = rpc.RequestContextSerializer()
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    wire = serializer.serialize_context(RequestContext())
    return serializer.deserialize_context(wire), base


def test_handler_hop_shows_the_exception_expected_exceptions_wraps(store):
    ctxt, base = _received_in_a_trace()
    try:
        with pytest.raises(messaging.ExpectedException):
            _Endpoint().detach_volume(ctxt, volume_id="v-1")
    finally:
        profiler.clean()
    hop = hops.load(store, base)["hops"][0]
    assert hop["name"] == "detach_volume"
    assert hop["error"] == \
        "DeviceDetachFailed: Device detach failed for vdb: v-1"


def test_only_the_message_s_handler_is_a_span(store):
    """A public method the handler calls, or one called without a
    message (the reconciler), records nothing."""
    ctxt, base = _received_in_a_trace()
    try:
        assert _Endpoint().list_faults(ctxt) == "listed"
        assert _Endpoint().list_faults(ctxt) == "listed"   # no message
    finally:
        profiler.clean()
    assert [h["name"] for h in hops.load(store, base)["hops"]] == \
        ["list_faults"]


# --- action requests: the action on both sides of the REST hop --------------

ACTIONS = ("os-reserve", "os-unreserve", "os-attach", "os-detach",
           "os-begin_detaching", "os-roll_detaching",
           "os-initialize_connection", "os-terminate_connection",
           "os-complete")


@pytest.fixture
def traced_cinder(store):
    """A real HTTP server (wsgiref, a thread) whose app is behind the
    WSGI entry span, and nova's Cinder client (noauth, project "journey")
    pointed at it: what the app received, per path."""
    from wsgiref import simple_server

    from minicompute.volume import cinder
    from tests.support import cinder_server

    received = []

    def app(environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        if environ["PATH_INFO"] == "/":     # the client's version check
            data = json.dumps(cinder_server.VERSIONS).encode()
        else:
            received.append((environ["PATH_INFO"], body))
            data = json.dumps({"connection_info": {
                "driver_volume_type": "iscsi", "data": {}}}).encode()
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(data)))])
        return [data]

    class Quiet(simple_server.WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = simple_server.make_server("127.0.0.1", 0,
                                       middleware.wrap(app, log=False),
                                       handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    conf = cfg.ConfigOpts()
    api = cinder.API(conf, sleep=lambda s: None)
    conf([], project="t")
    conf.set_override("endpoint_template", "http://127.0.0.1:%d/v3/"
                      "%%(project_id)s" % server.server_port, "cinder")
    conf.set_override("auth_strategy", "noauth", "cinder")
    try:
        yield api, received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_every_action_hop_names_its_action_on_both_sides(traced_cinder,
                                                          store):
    api, received = traced_cinder
    ctxt = RequestContext(user_id="u", project_id="journey")
    connector = {"initiator": "iqn.x", "auth_password": CHAP}
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    try:
        api.reserve_volume(ctxt, BASE)
        api.unreserve_volume(ctxt, BASE)
        api.attach(ctxt, BASE, BASE, "/dev/vdb")
        api.detach(ctxt, BASE, attachment_id=BASE)
        api.begin_detaching(ctxt, BASE)
        api.roll_detaching(ctxt, BASE)
        api.initialize_connection(ctxt, BASE, connector)
        api.terminate_connection(ctxt, BASE, connector)
        api.attachment_complete(ctxt, BASE)
    finally:
        profiler.clean()
    trace = hops.load(store, base)
    client = [hop for hop in trace["hops"]
              if hop["details"].get("side") == "client"]
    server = [hop for hop in trace["hops"]
              if hop["details"].get("side") != "client"]
    assert [hop["details"].get("action") for hop in client] == \
        list(ACTIONS)
    assert [hop["details"].get("action") for hop in server] == \
        list(ACTIONS)
    for client_hop, server_hop, action in zip(client, server, ACTIONS,
                                              strict=True):
        # The server's entry is the client call's child, named alike,
        # and the two are one REST hop: the client's carries the server's.
        assert server_hop["parent_id"] == client_hop["id"]
        assert server_hop["client_id"] == client_hop["id"]
        assert client_hop["server"]["id"] == server_hop["id"]
        assert client_hop["server"]["duration_ms"] == \
            server_hop["duration_ms"] <= client_hop["duration_ms"]
        kind = "attachments" if action == "os-complete" else "volumes"
        name = "POST /v3/{project}/%s/{id}/action (%s)" % (kind, action)
        assert (client_hop["name"], server_hop["name"]) == (name, name)
    assert trace["hops"][-1]["phase"] == "complete"
    begin = [hop for hop in trace["hops"]
             if hop["details"].get("action") == "os-begin_detaching"]
    assert [hop["phase"] for hop in begin] == ["reserve", "reserve"]
    # The application got every body whole; the trace holds no more of a
    # body than its action (the connector's CHAP password is nowhere).
    bodies = [json.loads(body) for _path, body in received]
    assert [next(iter(body)) for body in bodies] == list(ACTIONS)
    assert bodies[6]["os-initialize_connection"]["connector"] == connector
    assert CHAP not in json.dumps(trace)
    assert "iqn.x" not in json.dumps(trace)
    assert "journey" not in json.dumps([hop["name"] for hop in
                                        trace["hops"]])


def _action_environ(body, length=None, path="/v3/p/volumes/%s/action" % BASE,
                    method="POST"):
    import io
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path,
               "wsgi.input": io.BytesIO(body)}
    if length is not False:
        environ["CONTENT_LENGTH"] = str(len(body) if length is None
                                        else length)
    return environ


@pytest.mark.parametrize("body, length, path, method", [
    # Larger than what is read ahead: the stream is not touched.
    (b'{"os-attach": "%s"}' % (b"x" * middleware.ACTION_BODY_MAX), None,
     None, "POST"),
    # Chunked (no declared length): not read.
    (b'{"os-attach": {}}', False, None, "POST"),
    # Not an action request.
    (b'{"os-attach": {}}', None, "/v3/p/volumes", "POST"),
    (b'{"os-attach": {}}', None, None, "PUT"),
])
def test_bodies_not_read_ahead(body, length, path, method):
    environ = _action_environ(body, length, path or
                              "/v3/p/volumes/%s/action" % BASE, method)
    stream = environ["wsgi.input"]
    assert middleware.request_action(environ) is None
    assert environ["wsgi.input"] is stream and stream.tell() == 0


@pytest.mark.parametrize("body", [
    b"not json", b"\xff\xfe{", b"[" * 15000, b'{"a": 1, "b": 2}',
    b'{"os-attach\\n<script>": {}}', b"[]", b'"os-attach"',
])
def test_bodies_without_an_action_pass_through_unchanged(body):
    environ = _action_environ(body)
    assert middleware.request_action(environ) is None
    assert environ["wsgi.input"].read() == body


def test_action_is_read_and_the_body_handed_on():
    body = b'{"os-roll_detaching": null}'
    environ = _action_environ(body)
    assert middleware.request_action(environ) == "os-roll_detaching"
    assert environ["wsgi.input"].read() == body
