"""ministack.trace: spans to hops (kinds, actors, phases, masking), the
SQL trace store (osprofiler's driver fixed for SQLAlchemy 2 and SQLite),
trace info across RPC, the WSGI entry span, the access log and the
executor's span names."""

import datetime
import json
import logging
import threading

import oslo_messaging as messaging
import pytest
from oslo_config import cfg
from osprofiler import profiler
from osprofiler import web

from ministack import executor
from ministack import request_log
from ministack import rpc
from ministack import wsgi
from ministack.context import RequestContext
from ministack.trace import cmd
from ministack.trace import hops
from ministack.trace import middleware
from ministack.trace import profiler as ms_profiler
from ministack.trace import storage

BASE = "11111111-2222-4333-8444-555555555555"
T0 = datetime.datetime(2026, 12, 1, 20, 0, 0)
CHAP = "ChApSeCrEt123"
TOKEN = "gAAAAABtokenvalue"


class Rows:
    """osprofiler notifications as the store holds them (fake spans)."""

    def __init__(self):
        self.rows = []
        self.n = 0

    def span(self, trace_id, parent, service, category, start_ms, stop_ms,
             start_info=None, stop_info=None):
        for edge, ms, info in (("start", start_ms, start_info),
                               ("stop", stop_ms, stop_info)):
            if ms is None:
                continue
            self.n += 1
            ts = T0 + datetime.timedelta(milliseconds=ms)
            self.rows.append({
                "id": self.n, "name": "%s-%s" % (category, edge),
                "base_id": BASE, "trace_id": trace_id,
                "parent_id": parent or BASE, "service": service,
                "host": "vm", "project": "nova",
                "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.%f"),
                "data": json.dumps({"info": info or {}})})
        return trace_id


def own(kind, name, actor=None, **extra):
    value = {"kind": kind, "name": name, "request_id": "req-%s" % BASE}
    if actor:
        value["actor"] = actor
    value.update(extra)
    return {"ministack": value}


def wsgi_info(method, path):
    return {"request": {"method": method, "path": path, "query": "",
                        "scheme": "http"}}


def attach_rows():
    """A traced attach as the daemons record it."""
    r = Rows()
    proj = "/v3/0123456789abcdef0123456789abcdef"
    api = r.span("api", None, "nova-api", "wsgi", 0, 900,
                 wsgi_info("POST", "/v2.1/servers/%s/os-volume_attachments"
                           % BASE),
                 {"ministack": {"status": 200, "request_id": "req-%s" % BASE,
                                "global_request_id": None}})
    call = r.span("call", api, "nova-api", "rpc", 10, 100,
                  own("CALL", "reserve_block_device_name", "rabbitmq",
                      details={"side": "client"}))
    r.span("call-srv", call, "nova-compute", "rpc", 20, 90,
           own("CALL", "reserve_block_device_name", "nova-compute",
               details={"side": "server"}))
    create = r.span("create", api, "nova-api", "cinder", 110, 200,
                    own("REST", "POST %s/attachments" % proj, "cinder",
                        details={"method": "POST", "side": "client",
                                 "path": proj + "/attachments"}),
                    {"ministack": {"status": 200}})
    r.span("create-srv", create, "cinder-api", "wsgi", 120, 190,
           wsgi_info("POST", proj + "/attachments"),
           {"ministack": {"status": 200, "request_id": "req-cinder-1"}})
    cast = r.span("cast", api, "nova-api", "rpc", 300, 310,
                  own("CAST", "attach_volume", "rabbitmq",
                      details={"side": "client"}))
    handler = r.span("cast-srv", cast, "nova-compute", "rpc", 320, 2000,
                     own("CALL", "attach_volume", "nova-compute",
                         details={"side": "server"}))
    r.span("brick", handler, "nova-compute", "os_brick", 330, 400,
           own("LIBRARY", "os_brick get_connector_properties", "os-brick"))
    update = r.span("update", handler, "nova-compute", "cinder", 400, 900,
                    own("REST", "PUT %s/attachments/%s" % (proj, BASE),
                        "cinder", details={"method": "PUT"}),
                    {"ministack": {"status": 200}})
    r.span("tgt", update, "cinder-api", "command", 500, 600,
           own("COMMAND", "tgtadm target new",
               details={"argv": ["tgtadm", "--password", CHAP]}))
    r.span("secret", handler, "nova-compute", "libvirt", 910, 920,
           own("LIBRARY", "virSecretDefineXML", "libvirt",
               details={"connection_info": {"auth_password": CHAP,
                                            "auth_username": "u"}}))
    r.span("plug", handler, "nova-compute", "libvirt", 930, 1500,
           own("LIBRARY", "virDomainAttachDeviceFlags", "libvirt"))
    complete = r.span(
        "complete", handler, "nova-compute", "cinder", 1600, 1900,
        own("REST", "POST %s/attachments/%s/action" % (proj, BASE),
            "cinder", details={"action": "os-complete",
                               "X-Auth-Token": TOKEN}),
        {"ministack": {"status": 204}})
    r.span("complete-srv", complete, "cinder-api", "wsgi", 1610, 1890,
           wsgi_info("POST", "%s/attachments/%s/action" % (proj, BASE)),
           {"ministack": {"status": 204, "request_id": "req-cinder-2"}})
    return r.rows


def by_id(trace):
    return {hop["id"]: hop for hop in trace["hops"]}


def test_attach_spans_become_the_seeds_hops():
    trace = hops.build(attach_rows())
    h = by_id(trace)
    assert trace["trace_id"] == BASE
    assert trace["duration_ms"] == 2000.0
    assert [hop["start_ms"] for hop in trace["hops"]] == \
        sorted(hop["start_ms"] for hop in trace["hops"])
    api = h["api"]
    assert (api["kind"], api["actor"], api["from_actor"], api["status"],
            api["service"]) == ("REST", "nova-api", "user", 200, "nova-api")
    assert api["name"] == "POST /v2.1/servers/{id}/os-volume_attachments"
    assert h["create-srv"]["name"] == \
        "POST /v3/{project}/attachments"
    assert h["create-srv"]["actor"] == "cinder"
    # The cinder entry's arrow comes from the caller, not from cinder.
    assert h["create-srv"]["from_actor"] == "nova-api"
    assert h["call"]["actor"] == "rabbitmq"
    assert h["call-srv"]["from_actor"] == "rabbitmq"
    # The compute's handler takes the kind of the message it received.
    assert h["cast-srv"]["kind"] == "CAST"
    assert h["tgt"]["service"] == "cinder-volume"
    assert h["tgt"]["kind"] == "COMMAND"
    assert h["brick"]["actor"] == "os-brick"
    assert h["plug"]["actor"] == "libvirt"
    assert h["complete"]["name"].endswith("(os-complete)")
    assert trace["request_ids"][0] == "req-%s" % BASE
    assert "req-cinder-1" in trace["request_ids"]
    assert set(hop["actor"] for hop in trace["hops"]) <= set(hops.ACTORS)


def test_phases_follow_the_rules():
    h = by_id(hops.build(attach_rows()))
    expected = {"api": "reserve", "call": "reserve", "call-srv": "reserve",
                "create": "reserve", "create-srv": "reserve",
                "cast": "cast", "cast-srv": "connect/attach",
                "brick": "connect/attach", "update": "connect/attach",
                "tgt": "connect/attach", "plug": "connect/attach",
                "complete": "complete", "complete-srv": "complete"}
    assert {key: h[key]["phase"] for key in expected} == expected


def test_detach_phases_and_a_refusing_guest():
    r = Rows()
    proj = "/v3/0123456789abcdef0123456789abcdef"
    api = r.span("api", None, "nova-api", "wsgi", 0, 100,
                 wsgi_info("DELETE", "/v2.1/servers/%s/os-volume_attachments"
                           "/%s" % (BASE, BASE)),
                 {"ministack": {"status": 202}})
    r.span("begin", api, "nova-api", "cinder", 10, 20,
           own("REST", "POST %s/volumes/%s/action" % (proj, BASE), "cinder",
               details={"action": "os-begin_detaching"}))
    cast = r.span("cast", api, "nova-api", "rpc", 30, 40,
                  own("CAST", "detach_volume", "rabbitmq"))
    handler = r.span("srv", cast, "nova-compute", "rpc", 50, 900,
                     own("CALL", "detach_volume", "nova-compute",
                         details={"side": "server"}),
                     {"etype": "DeviceDetachFailed",
                      "message": "Device detach failed for vdb"})
    r.span("guest", handler, "nova-compute", "guest", 60, 500,
           own("LIBRARY", "guest releases vdb", "guest"),
           {"ministack": {"error": "the guest did not release vdb"}})
    r.span("roll", handler, "nova-compute", "cinder", 600, 700,
           own("REST", "POST %s/volumes/%s/action" % (proj, BASE), "cinder",
               details={"action": "os-roll_detaching"}))
    r.span("unfinished", handler, "nova-compute", "libvirt", 800, None,
           own("LIBRARY", "virDomainDetachDeviceFlags", "libvirt"))
    h = by_id(hops.build(r.rows))
    assert h["api"]["phase"] == "reserve"
    assert h["begin"]["phase"] == "reserve"
    assert h["cast"]["phase"] == "cast"
    assert h["srv"]["phase"] == "connect/attach"
    assert h["srv"]["error"] == \
        "DeviceDetachFailed: Device detach failed for vdb"
    assert h["guest"]["actor"] == "guest"
    assert h["guest"]["error"] == "the guest did not release vdb"
    assert h["roll"]["phase"] == "complete"
    assert h["unfinished"]["duration_ms"] is None


def test_no_secret_survives():
    text = json.dumps(hops.build(attach_rows()))
    assert CHAP not in text
    assert TOKEN not in text
    assert "***" in text
    assert hops.mask(["tgtadm", "--password", CHAP]) == \
        ["tgtadm", "--password", "***"]
    assert CHAP not in hops.mask("auth_password=%s" % CHAP)


def test_format_table():
    table = hops.format_table(hops.build(attach_rows()))
    lines = table.splitlines()
    assert lines[0].startswith("trace %s" % BASE)
    assert "reserve_block_device_name" in table
    assert "virDomainAttachDeviceFlags" in table
    assert any("tgtadm target new" in line and "cinder-volume" in line
               for line in lines)


def test_rest_names():
    assert hops.rest_name("GET", "/v2.1/0123456789abcdef0123456789abcdef/"
                          "servers/%s" % BASE) == \
        "GET /v2.1/{project}/servers/{id}"
    assert hops.rest_name("DELETE", "/v3/%s/attachments/%s"
                          % (BASE.replace("-", ""), BASE)) == \
        "DELETE /v3/{project}/attachments/{id}"


# --- the store and the spans, for real --------------------------------------

@pytest.fixture
def store(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "osprofiler.sqlite")
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt("host", default="vm")])
    conf([], default_config_files=[])
    ms_profiler.register_opts(conf)
    conf.set_override("enabled", True, "profiler")
    conf.set_override("hmac_keys", "unit-key", "profiler")
    conf.set_override("connection_string", url, "profiler")
    assert ms_profiler.setup(conf, "nova", "nova-api")
    yield url
    profiler.clean()
    web.disable()


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


class _Endpoint:
    @messaging.expected_exceptions(DeviceDetachFailed)
    def detach_volume(self, ctxt, volume_id):
        raise DeviceDetachFailed("Device detach failed for vdb: %s"
                                 % volume_id)


def test_handler_hop_shows_the_exception_expected_exceptions_wraps(store):
    endpoint = rpc._TracedEndpoint(_Endpoint(), "nova-compute")
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    try:
        with pytest.raises(messaging.ExpectedException):
            endpoint.detach_volume(RequestContext(), volume_id="v-1")
    finally:
        profiler.clean()
    hop = hops.load(store, base)["hops"][0]
    assert hop["name"] == "detach_volume"
    assert hop["error"] == \
        "DeviceDetachFailed: Device detach failed for vdb: v-1"


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

    received = []

    def app(environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
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
        # The server's entry is the client call's child, named alike.
        assert server_hop["parent_id"] == client_hop["id"]
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


def test_rest_names_on_a_noauth_stack():
    # The project segment, whatever it is, on nova's and cinder's URLs.
    assert hops.rest_name("POST", "/v3/journey/volumes/%s/action"
                          % BASE) == "POST /v3/{project}/volumes/{id}/action"
    assert hops.rest_name("GET", "/v2.1/journey/servers/%s" % BASE) == \
        "GET /v2.1/{project}/servers/{id}"
    assert hops.rest_name("DELETE", "/v2.1/journey/servers/%s/"
                          "os-volume_attachments/%s" % (BASE, BASE)) == \
        "DELETE /v2.1/{project}/servers/{id}/os-volume_attachments/{id}"
    # Collections, discovery and keystone's paths stay as they are.
    for path in ("/v2.1/servers/detail", "/v2.1/os-services",
                 "/v2.1/os-volume_attachments/x", "/v3/volumes/detail",
                 "/v3/auth/tokens", "/v3/", "/v2.1", "/v2.1/journey",
                 "/v2/images/abc"):
        assert hops.rest_name("GET", path) == "GET " + path


# --- the QEMU initiator's connect step ---------------------------------------

def test_qemu_initiator_connect_is_its_own_hop_without_os_brick(store):
    from minicompute.virt.libvirt.volume import iscsi

    class Host:
        secrets = {}

        def create_secret(self, usage_type, usage_id, value):
            self.secrets[usage_id] = value

        def delete_secret(self, usage_type, usage_id):
            self.secrets.pop(usage_id)

    info = {"driver_volume_type": "iscsi", "serial": BASE,
            "data": {"target_iqn": "iqn.2010-10.org.openstack:v",
                     "target_portal": "127.0.0.1:3260", "target_lun": 1,
                     "auth_method": "CHAP", "auth_username": "u",
                     "auth_password": CHAP}}
    driver = iscsi.LibvirtNetISCSIVolumeDriver(Host(), "iqn.2004-10.org.x:h")
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    try:
        driver.connect_volume(info, {"uuid": BASE})
        driver.disconnect_volume(info, {"uuid": BASE}, still_used=True)
        driver.disconnect_volume(info, {"uuid": BASE})
    finally:
        profiler.clean()
    trace = hops.load(store, base)
    assert [(hop["name"], hop["kind"], hop["actor"])
            for hop in trace["hops"]] == [
        ("connect_volume (QEMU libiscsi)", "LIBRARY", "nova-compute"),
        ("disconnect_volume (QEMU libiscsi)", "LIBRARY", "nova-compute"),
        ("disconnect_volume (QEMU libiscsi)", "LIBRARY", "nova-compute")]
    connect = trace["hops"][0]["details"]
    assert connect["initiator"] == "QEMU libiscsi (no os-brick connect)"
    assert "virDomainAttachDeviceFlags" in connect["login"]
    assert (connect["target_iqn"], connect["target_lun"]) == \
        ("iqn.2010-10.org.openstack:v", 1)
    assert trace["hops"][1]["details"]["host_side"].startswith("kept")
    assert trace["hops"][2]["details"]["host_side"] == \
        "the CHAP secret, removed now"
    assert Host.secrets == {}
    assert CHAP not in json.dumps(trace)
    assert not [hop for hop in trace["hops"] if hop["actor"] == "os-brick"]
