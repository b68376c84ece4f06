"""The journey page (ministack_course/web.py) over fixture traces and over
a real SQLite trace store written by osprofiler: routes, escaping of the
attacker-influenced text, no secret in any answer, read-only, headers.
(The drawing itself is tested in a real browser:
tests/functional/journey_page/.)"""

import json
import re

from oslo_config import cfg
from osprofiler import notifier
from osprofiler import profiler
import pytest

from ministack.trace import storage
from ministack_course import web
from tests.support import journey_traces as traces


@pytest.fixture
def client():
    return web.create_app(traces.load, traces.recent).test_client()


def _text(resp):
    return resp.get_data(as_text=True)


def _assert_no_secret(text):
    for secret in traces.SECRETS:
        assert secret not in text


def _data(page):
    return json.loads(re.search(
        r'<script id="trace-data" type="application/json">(.*?)</script>',
        page, re.S).group(1))


def _table_rows(page):
    """The table view's rows: [[cell text, ...]]."""
    body = page.split('<table class="hops" id="hop-table">', 1)[1].split(
        "</tbody>", 1)[0].split("<tbody>", 1)[1]
    return [re.findall(r"<td>(.*?)</td>", row, re.S)
            for row in body.split("</tr>") if "<td>" in row]


def test_attach_page_has_every_hop_and_the_lanes(client):
    resp = client.get("/trace/%s" % traces.TRACE_ID)
    assert resp.status_code == 200
    assert resp.mimetype == "text/html"
    page = _text(resp)
    data = _data(page)
    assert [lane["actor"] for lane in data["lanes"]] == [
        actor for actor, _ in web.ACTORS]
    assert data["phases"] == ["reserve", "cast", "connect/attach",
                              "complete"]
    assert data["journey"] == "attach"
    assert '<span id="journey-kind">attach</span> journey of trace' in page
    names = [hop["name"] for hop in data["trace"]["hops"]]
    assert names == [hop["name"] for hop in traces.attach_trace()["hops"]]
    for name in ("reserve_block_device_name", "attach_volume",
                 "connect_volume (os-brick iSCSI)",
                 "virDomainAttachDeviceFlags"):
        assert "<td>%s</td>" % name in page     # the table view
    assert '<script src="/trace/static/journey.js"></script>' in page
    _assert_no_secret(page)


def test_one_row_and_one_count_per_rest_call(client):
    """The summary counts and the table lists each REST call once (the
    client's hop, with the server's time); the data keeps both sides."""
    page = _text(client.get("/trace/%s" % traces.TRACE_ID))
    drawn = traces.drawn(traces.attach_trace())
    assert len(drawn) < len(traces.attach_trace()["hops"])
    assert '<span id="hop-count">%d</span> hops' % len(drawn) in page
    rows = _table_rows(page)
    assert [row[7] for row in rows] == [hop["name"] for hop in drawn]
    put = [row for row in rows
           if row[7] == "PUT /v3/{project}/attachments/{id}"]
    assert [row[:3] for row in put] == [["129.0", "88.0", "85.4"]]
    assert rows[0][2] == ""         # the API's entry: no server side
    assert "<th>server ms</th>" in page
    data = _data(page)
    hop = {h["id"]: h for h in data["trace"]["hops"]}
    assert hop["hop-10"]["server"]["id"] == "hop-10-srv"
    assert hop["hop-10-srv"]["client_id"] == "hop-10"


def test_a_detach_page_has_the_detach_phases(client):
    page = _text(client.get("/trace/%s" % traces.FAILED_TRACE_ID))
    data = _data(page)
    assert data["journey"] == "detach"
    assert data["phases"] == ["begin_detaching", "cast",
                              "unplug + disconnect", "attachment_delete"]
    assert [hop["phase"] for hop in data["trace"]["hops"]] == [
        hop["phase"] for hop in traces.failed_detach_trace()["hops"]]
    assert "unplug + disconnect" in [row[3] for row in _table_rows(page)]
    assert '<span id="journey-kind">detach</span>' in page
    assert "1 begin_detaching → 2 cast → 3 unplug + disconnect → " \
        "4 attachment_delete" in page


def test_a_trace_without_its_journey_is_drawn_as_an_attach():
    """An older trace dict (no journey, phases, server or client_id):
    the attach's phases, every hop drawn; a client_id naming no hop of
    the trace is dropped (the hop is drawn, not lost); an unknown phase
    is none."""
    def load(ident):
        trace = traces.attach_trace()
        del trace["journey"], trace["phases"]
        for hop in trace["hops"]:
            del hop["server"], hop["client_id"]
        trace["hops"][1]["client_id"] = "hop-99"
        trace["hops"][2]["phase"] = "<b>nonsense</b>"
        return trace
    page = _text(web.create_app(load).test_client().get(
        "/trace/%s" % traces.TRACE_ID))
    data = _data(page)
    assert (data["journey"], data["phases"]) == (None, list(web.PHASES))
    hops = data["trace"]["hops"]
    assert all(h["client_id"] is None and h["server"] is None for h in hops)
    assert hops[2]["phase"] is None
    assert len(_table_rows(page)) == len(hops)
    assert 'id="journey-kind"' not in page


def test_a_request_id_finds_its_trace(client):
    resp = client.get("/trace/%s" % traces.DETACH_REQUEST)
    assert resp.status_code == 200
    assert traces.FAILED_TRACE_ID in _text(resp)


def test_hostile_text_is_escaped_everywhere(client):
    """Error messages and names are attacker-influenced: no tag of theirs
    reaches the page as markup, in the table or in the JSON data block."""
    page = _text(client.get("/trace/%s" % traces.FAILED_TRACE_ID))
    assert "<img" not in page
    assert "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page      # the table
    block = page.split('type="application/json">', 1)[1].split(
        "</script>", 1)[0]
    assert "<" not in block and ">" not in block
    assert "\\u003cimg src=x" in block
    failed = [h for h in json.loads(block)["trace"]["hops"] if h["error"]]
    assert [h["name"] for h in failed] == ["detach_volume",
                                          "virDomainDetachDeviceFlags"]
    assert '<tr class="failed">' in page


def test_no_secret_in_page_json_or_listing(client):
    for ident in (traces.TRACE_ID, traces.FAILED_TRACE_ID):
        _assert_no_secret(_text(client.get("/trace/%s" % ident)))
        body = client.get("/trace/%s.json" % ident).get_json()
        _assert_no_secret(json.dumps(body))
    _assert_no_secret(_text(client.get("/trace/")))
    hop = {h["id"]: h for h in client.get(
        "/trace/%s.json" % traces.TRACE_ID).get_json()["hops"]}["hop-10"]
    assert hop["details"]["connection_info"]["auth_password"] == "***"


def test_masked_masks_secret_keys_and_key_value_text():
    value = {"auth_password": "s1", "nested": [{"X-Auth-Token": "t1"}],
             "Secret_Key": "s2", "hmac_keys": "k", "passphrase": "p",
             "argv": ["iscsiadm", "--password=s3", "-o", "x"],
             "message": 'failed: {"password": "s4"} token=s5;',
             "target_iqn": "iqn.2010-10.org.openstack:volume-1",
             "size": 1}
    out = web.masked(value)
    text = json.dumps(out)
    for secret in ("s1", "t1", "s2", "s3", "s4", "s5"):
        assert '"%s' % secret not in text and "=%s" % secret not in text
    assert out["target_iqn"] == value["target_iqn"]
    assert out["size"] == 1 and out["hmac_keys"] == "***"
    assert out["argv"] == ["iscsiadm", "--password=***", "-o", "x"]


@pytest.mark.parametrize("ident", [
    "not-an-id", "<script>", "req-123", "..%2f..%2fetc%2fpasswd",
    "6f1c2f0e-4a8b-4d1e-9c55-0d6b1e2a7c31x"])
def test_a_malformed_id_is_400(client, ident):
    resp = client.get("/trace/%s" % ident)
    assert resp.status_code in (400, 404)
    assert "<script>" not in _text(resp)
    if resp.status_code == 404:     # the path left /trace/<id>
        return
    assert "not a trace id or a request id" in _text(resp)


def test_an_unknown_trace_is_404(client):
    for path in ("/trace/11111111-2222-4333-8444-555555555555",
                 "/trace/req-11111111-2222-4333-8444-555555555555.json"):
        resp = client.get(path)
        assert resp.status_code == 404
        assert "no trace" in _text(resp)


def test_read_only_and_locked_down(client):
    path = "/trace/%s" % traces.TRACE_ID
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.open(path, method=method).status_code == 405
    resp = client.get(path)
    csp = resp.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert "<form" not in _text(resp)


def test_the_script_never_writes_html():
    """Trace text reaches the page only through textContent."""
    script = _text(web.create_app(traces.load).test_client().get(
        "/trace/static/journey.js"))
    assert "textContent" in script
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML",
                 "document.write", "eval("):
        assert sink not in script


def test_listing(client):
    page = _text(client.get("/trace/"))
    assert page.index(traces.FAILED_TRACE_ID) < page.index(traces.TRACE_ID)
    assert 'href="/trace/%s"' % traces.TRACE_ID in page
    bare = web.create_app(traces.load).test_client()
    assert "no listing" in _text(bare.get("/trace/"))
    assert client.get("/").status_code == 302


def test_a_span_that_never_stopped(client):
    def load(ident):
        trace = traces.attach_trace()
        [handler] = [h for h in trace["hops"] if h["id"] == "hop-08"]
        handler["duration_ms"] = None
        return trace
    page = _text(web.create_app(load).test_client().get(
        "/trace/%s" % traces.TRACE_ID))
    assert '"duration_ms": null' in page
    assert "<td>-</td>" in page


# --- a real trace store -------------------------------------------------

@pytest.fixture
def store(tmp_path):
    """An SQLite trace store with two traces osprofiler recorded: the
    compute API's attach (a WSGI span with an RPC CALL in it), then a
    Cinder request."""
    url = "sqlite:///%s" % (tmp_path / "osprofiler.sqlite")
    saved = notifier.get()
    ids = []
    try:
        for service, method, path in (
                ("nova-api", "POST", "/v2.1/servers/%s/os-volume_"
                 "attachments" % traces.SERVER),
                ("cinder-api", "PUT", "/v3/0123456789abcdef0123456789abcdef"
                 "/attachments/%s" % traces.ATTACHMENT)):
            driver = storage.SQLAlchemyDriver(url, project="nova",
                                              service=service, host="lab")
            notifier.set(driver.notify)
            profiler.init("hmac")
            with profiler.Trace("wsgi", info={"request": {
                    "method": method, "path": path, "query": ""}}):
                with profiler.Trace("rpc", info={"ministack": {
                        "kind": "CALL", "actor": "rabbitmq",
                        "name": "reserve_block_device_name"}}):
                    pass
            ids.append(profiler.get().get_base_id())
            profiler.clean()
    finally:
        notifier.set(saved)
        profiler.clean()
    return url, ids


def _conf(url, port=0):
    conf = cfg.ConfigOpts()
    web.register_opts(conf)
    conf([], project="miniapi")
    from ministack.trace import profiler as ms_profiler
    ms_profiler.register_opts(conf)
    conf.set_override("connection_string", url, group="profiler")
    return conf


def test_recent_traces_reads_the_store(store):
    url, (attach, cinder) = store
    listed = web.recent_traces(url)
    assert [t["trace_id"] for t in listed] == [cinder, attach]
    assert listed[1]["name"] == \
        "POST /v2.1/servers/{id}/os-volume_attachments"
    assert listed[0]["name"] == "PUT /v3/{project}/attachments/{id}"
    assert listed[1]["services"] == ["nova-api"]
    assert listed[1]["hops"] == 2
    assert listed[1]["started_at"].endswith("+00:00")
    assert web.recent_traces(url, limit=1) == listed[:1]


def test_the_page_from_conf_draws_a_stored_trace(store):
    url, (attach, _) = store
    client = web.app_from_conf(_conf(url)).test_client()
    page = _text(client.get("/trace/%s" % attach))
    assert "reserve_block_device_name" in page
    assert attach in _text(client.get("/trace/"))
    assert client.get("/trace/%s" % traces.TRACE_ID).status_code == 404


def test_an_unreadable_store_is_503(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "missing" / "osprofiler.sqlite")
    client = web.app_from_conf(_conf(url)).test_client()
    resp = client.get("/trace/")
    assert resp.status_code == 503
    assert str(tmp_path) not in _text(resp)


def test_a_store_the_page_cannot_read_is_503_saying_why():
    """Spans sent to a collector: the daemon still starts, the page
    says where the traces went."""
    client = web.app_from_conf(_conf("otlp://127.0.0.1:4318")).test_client()
    for path in ("/trace/", "/trace/%s" % traces.TRACE_ID):
        resp = client.get(path)
        assert resp.status_code == 503
        assert "otlp://" in _text(resp)


def test_the_course_daemon_serves_the_page_on_its_own_port(store):
    """ministack-course's [trace] listen_port: the page behind waitress,
    as the daemon runs it (ministack.service.run, SIGTERM's stop event),
    reading the store."""
    import socket
    import threading

    import requests

    from ministack_course import server
    url, (attach, _) = store
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    conf = _conf(url)
    conf.set_override("listen_port", port, group="trace")
    page = server.build(conf)
    assert (page.host, page.port) == ("127.0.0.1", port)
    stop = threading.Event()
    thread = threading.Thread(target=page.start, args=(stop,), daemon=True)
    thread.start()
    try:
        base = "http://127.0.0.1:%d" % port
        for _ in range(100):
            try:
                resp = requests.get(base + "/trace/%s" % attach, timeout=5)
                break
            except requests.ConnectionError:
                stop.wait(0.05)
        assert resp.status_code == 200
        assert "reserve_block_device_name" in resp.text
        assert requests.post(base + "/trace/", timeout=5).status_code == 405
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_miniapi_no_longer_serves_the_page():
    """The services know nothing of the course: miniapi's extra apps are
    the image and network APIs only."""
    from miniapi import conf as miniapi_conf
    from miniapi import service
    conf = cfg.ConfigOpts()
    miniapi_conf.register_opts(conf)
    conf([], project="miniapi")
    conf.set_override("image_listen_port", 0, group="api")
    conf.set_override("network_listen_port", 0, group="api")
    assert service._extra_apps(conf) == []
