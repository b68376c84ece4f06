"""Which host did each hop (issue 27 §3): every span records its daemon's
``[DEFAULT] host`` (not the machine's name osprofiler stamps), hops.py
gives each hop its ``host`` (cinder-volume's: ``<host>@<backend>``),
``ministack-trace show`` prints it, and the journey page titles the
compute lane with it, one compute lane per host when a trace reached
two."""

import json
import re
import socket

from oslo_config import cfg
from osprofiler import profiler
from osprofiler import web as osprofiler_web
import pytest

from ministack import executor
from ministack import rpc
from ministack import wsgi
from ministack.context import RequestContext
from ministack.trace import hops
from ministack.trace import middleware
from ministack.trace import profiler as ms_profiler
from ministack.trace import storage
from ministack_course import lanes
from ministack_course import trace_cmd as cmd
from ministack_course import web
from tests.support import journey_traces as traces
from tests.unit.ministack.trace_rows import BASE
from tests.unit.ministack.trace_rows import Rows
from tests.unit.ministack.trace_rows import attach_rows
from tests.unit.ministack.trace_rows import by_id
from tests.unit.ministack.trace_rows import own


@pytest.fixture
def daemon(store):
    """``daemon(host, service, **options)``: this process becomes that
    daemon's (its ``[DEFAULT] host``, its notifier on the same store),
    as minicompute, miniapi and minicinder each call setup at start."""
    saved = dict(ms_profiler._STATE)

    def become(host, service, **options):
        conf = cfg.ConfigOpts()
        conf.register_opts([cfg.StrOpt("host")] + [
            cfg.StrOpt(name) for name in options])
        conf([], default_config_files=[])
        conf.set_override("host", host)
        for name, value in options.items():
            conf.set_override(name, value)
        ms_profiler.register_opts(conf)
        conf.set_override("enabled", True, "profiler")
        conf.set_override("hmac_keys", "unit-key", "profiler")
        conf.set_override("connection_string", store, "profiler")
        project = "cinder" if service.startswith("cinder") else "nova"
        assert ms_profiler.setup(conf, project, service)

    yield become
    ms_profiler._STATE.update(saved)


class _Compute:
    def attach_volume(self, ctxt, volume_id):
        from ministack.trace import profiler as spans
        with spans.span("libvirt", "LIBRARY", "virDomainAttachDeviceFlags",
                        actor="libvirt"):
            executor.execute("true")


def _rows(store, base):
    storage.flush()
    return {(row["service"], row["name"]): row
            for row in storage.trace_rows(store, base)}


def _traced_cast_to(daemon, compute_host):
    """nova-api (host vm) casts attach_volume; the compute daemon of
    ``compute_host`` handles it: the trace crosses the RPC context as it
    does between the two daemons. Returns the trace id."""
    daemon("vm", "nova-api")
    serializer = rpc.RequestContextSerializer()
    ctxt = RequestContext(request_id="req-%s" % BASE, overwrite=True)
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    try:
        with ms_profiler.span("rpc", "CAST", "attach_volume",
                              actor="rabbitmq",
                              details=lambda: {"side": "client"}):
            wire = serializer.serialize_context(ctxt)
    finally:
        profiler.clean()
    daemon(compute_host, "nova-compute")
    try:
        received = serializer.deserialize_context(wire)
        rpc.traced_endpoint("nova-compute")(_Compute)().attach_volume(
            received, volume_id="v-1")
    finally:
        profiler.clean()
    return base


def test_compute_spans_carry_the_compute_host(daemon, store):
    """The compute's spans say ``compute2`` (its [DEFAULT] host, the RPC
    server name), not the machine both daemons run on, which is what
    osprofiler itself stamps into every notification."""
    base = _traced_cast_to(daemon, "compute2")
    trace = hops.load(store, base)
    assert [(h["service"], h["name"], h["host"]) for h in trace["hops"]] == [
        ("nova-api", "attach_volume", "vm"),
        ("nova-compute", "attach_volume", "compute2"),
        ("nova-compute", "virDomainAttachDeviceFlags", "compute2"),
        ("nova-compute", "true", "compute2")]
    rows = _rows(store, base)
    handler = rows[("nova-compute", "rpc-start")]
    data = storage.notification_data(handler["data"])
    assert data["info"]["ministack"]["host"] == "compute2"
    assert handler["host"] == "compute2"            # the notifier's column
    assert data["info"]["host"] == socket.gethostname()     # osprofiler's
    assert socket.gethostname() != "compute2"
    command = storage.notification_data(
        rows[("nova-compute", "command-start")]["data"])
    assert command["info"]["ministack"]["host"] == "compute2"
    assert "volume_host" not in command["info"]["ministack"]


def test_the_cli_names_the_host_of_each_hop(daemon, store, capsys,
                                            tmp_path):
    base = _traced_cast_to(daemon, "compute2")
    no_page = ["--config-file", str(tmp_path / "none.conf")]
    assert cmd.main(["show", base, "--connection-string", store] +
                    no_page) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[7:9] == ["service", "host"]
    assert [line.split()[3:] for line in lines[2:]] == [
        ["nova-api", "vm", "CAST", "attach_volume"],
        ["nova-compute", "compute2", "CAST", "attach_volume"],
        ["nova-compute", "compute2", "LIBRARY",
         "virDomainAttachDeviceFlags"],
        ["nova-compute", "compute2", "COMMAND", "true"]]
    assert cmd.main(["show", base, "--json", "--connection-string",
                     store]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [hop["host"] for hop in shown["hops"]] == [
        "vm", "compute2", "compute2", "compute2"]


def test_cinder_volume_hops_carry_the_backend_host(daemon, store):
    """minicinder runs cinder-api and cinder-volume in one daemon: its
    API's hops say its host, its commands (cinder-volume's) the volume
    service's ``<host>@<volume_backend_name>``."""
    daemon("vm", "cinder-api", volume_backend_name="lvmdriver-1")

    def app(environ, start_response):
        environ[wsgi.ENV_REQUEST_ID] = "req-%s" % BASE
        executor.execute("true")
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    profiler.init("unit-key")
    headers = osprofiler_web.get_trace_id_headers()
    base = profiler.get().get_base_id()
    profiler.clean()
    environ = {"REQUEST_METHOD": "DELETE", "PATH_INFO": "/v3/p/attachments/x",
               "QUERY_STRING": "", "wsgi.url_scheme": "http",
               "HTTP_X_TRACE_INFO": headers["X-Trace-Info"],
               "HTTP_X_TRACE_HMAC": headers["X-Trace-HMAC"]}
    list(middleware.wrap(app, log=False)(
        environ, lambda status, headers, exc_info=None: None))
    trace = hops.load(store, base)
    assert [(h["service"], h["kind"], h["host"]) for h in trace["hops"]] == [
        ("cinder-api", "REST", "vm"),
        ("cinder-volume", "COMMAND", "vm@lvmdriver-1")]
    # The WSGI entry span records the host in its stop info.
    stop = storage.notification_data(
        _rows(store, base)[("cinder-api", "wsgi-stop")]["data"])
    assert stop["info"]["ministack"]["host"] == "vm"
    assert stop["info"]["ministack"]["volume_host"] == "vm@lvmdriver-1"


def test_the_daemons_host_info():
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt("host", default="compute2")])
    conf([], default_config_files=[])
    assert ms_profiler._volume_host(conf, "nova-compute") is None
    # minicinder without the option (a config of another daemon): its host.
    assert ms_profiler._volume_host(conf, "cinder-api") == "compute2"
    assert ms_profiler._conf_value(conf, "no_such_option") is None
    saved = dict(ms_profiler._STATE)
    try:
        ms_profiler._STATE.update(host=None, volume_host=None)
        assert ms_profiler.host_info() == {}
    finally:
        ms_profiler._STATE.update(saved)


# --- hops.py: the host of each hop -------------------------------------------

def _on_compute2(rows):
    for row in rows:
        if row["service"] == "nova-compute":
            row["host"] = "compute2"
    return rows


def test_a_hops_host_is_the_spans_then_the_stores():
    """The span's own record first; a trace recorded before spans had
    one: the notifier's host column; neither: osprofiler's machine
    name."""
    r = Rows()
    r.span("own", None, "nova-compute", "libvirt", 0, 10,
           own("LIBRARY", "virSecretDefineXML", "libvirt", host="compute2"))
    r.span("column", None, "nova-compute", "libvirt", 20, 30,
           own("LIBRARY", "virSecretUndefine", "libvirt"))
    bare = r.span("bare", None, "nova-compute", "libvirt", 40, 50,
                  dict(own("LIBRARY", "virDomainDetachDeviceFlags",
                           "libvirt"), host="machine"))
    for row in r.rows:
        if row["trace_id"] == bare:
            row["host"] = None
    h = by_id(hops.build(r.rows))
    assert (h["own"]["host"], h["column"]["host"], h["bare"]["host"]) == \
        ("compute2", "vm", "machine")


def test_the_table_shows_each_rows_host():
    trace = hops.build(_on_compute2(attach_rows()))
    h = by_id(trace)
    assert (h["cast-srv"]["host"], h["plug"]["host"], h["api"]["host"],
            h["tgt"]["host"]) == ("compute2", "compute2", "vm", "vm")
    # The client's REST hop is the compute's, its server side cinder-api's.
    assert (h["update"]["host"], h["complete"]["server"]["host"]) == \
        ("compute2", "vm")
    lines = hops.format_table(trace).splitlines()
    rows = [line.split() for line in lines[2:]]
    compute = [row for row in rows if "nova-compute" in row]
    assert compute and all(
        row[row.index("nova-compute") + 1] == "compute2" for row in compute)
    assert [row[row.index("nova-api") + 1] for row in rows
            if "nova-api" in row] == ["vm"] * 4
    plug = [line for line in lines if "virDomainAttachDeviceFlags" in line]
    assert re.search(r"\snova-compute\s+compute2\s+LIBRARY\s+"
                     r"virDomainAttachDeviceFlags$", plug[0])


def test_a_hop_without_a_host_shows_a_dash():
    trace = hops.build(attach_rows())
    for hop in trace["hops"]:
        hop["host"] = None
    rows = [line.split() for line in hops.format_table(trace).splitlines()]
    assert rows[2][3:5] == ["nova-api", "-"]


# --- the page's lanes --------------------------------------------------------

def _lane_keys(view):
    return [(lane["lane"], lane["host"]) for lane in view["lanes"]]


def test_one_compute_host_titles_the_seeds_compute_lane():
    view = web.view(traces.compute2_attach_trace())
    assert _lane_keys(view)[3] == ("nova-compute", "compute2")
    assert [lane["lane"] for lane in view["lanes"]] == [
        actor for actor, _ in web.ACTORS]
    hop = {h["id"]: h for h in view["trace"]["hops"]}
    assert (hop["hop-08"]["lane"], hop["hop-14"]["from_lane"]) == \
        ("nova-compute", "nova-compute")
    # A trace without hosts: the same lane, without one.
    assert _lane_keys(web.view(traces.attach_trace()))[3] == \
        ("nova-compute", None)


def test_two_compute_hosts_get_a_lane_each():
    view = web.view(traces.two_hosts_trace())
    assert _lane_keys(view)[2:6] == [
        ("rabbitmq", None), ("nova-compute@vm", "vm"),
        ("nova-compute@compute2", "compute2"), ("cinder", None)]
    assert [lane["title"] for lane in view["lanes"]][3:5] == \
        ["nova-compute", "nova-compute"]
    hop = {h["id"]: h for h in view["trace"]["hops"]}
    for prefix, host in (("", "vm"), ("b-", "compute2")):
        key = "nova-compute@" + host
        # The cast arrives at its host's lane, its calls leave from it,
        # the server's side of its REST calls too (from its caller).
        assert hop[prefix + "hop-08"]["lane"] == key
        assert hop[prefix + "hop-08"]["from_lane"] == "rabbitmq"
        for n in ("09", "10", "10-srv", "13", "14", "17"):
            assert hop[prefix + "hop-" + n]["from_lane"] == key, n
        assert hop[prefix + "hop-15"]["from_lane"] == "libvirt"
        assert hop[prefix + "hop-11"]["lane"] == "cinder"
    keys = {lane["lane"] for lane in view["lanes"]}
    assert all(h["lane"] in keys and h["from_lane"] in keys
               for h in view["trace"]["hops"])


def test_split_lanes_keep_a_lane_for_compute_hops_without_a_host():
    trace = traces.two_hosts_trace()
    # The reserve's handler on the first host recorded no host.
    {h["id"]: h for h in trace["hops"]}["hop-04"]["host"] = None
    view = web.view(trace)
    assert [key for key, _ in _lane_keys(view)][3:6] == [
        "nova-compute@vm", "nova-compute@compute2", "nova-compute"]
    assert {h["id"]: h for h in view["trace"]["hops"]}["hop-04"]["lane"] \
        == "nova-compute"


def test_lanes_survive_a_parent_loop():
    looped = [{"id": "a", "parent_id": "b", "actor": "libvirt",
               "from_actor": "nova-compute", "host": "compute2",
               "service": "nova-compute"},
              {"id": "b", "parent_id": "a", "actor": "os-brick",
               "from_actor": "nova-compute", "host": "vm",
               "service": "nova-compute"}]
    assert [lane["lane"] for lane in lanes.assign(looped)][3] == \
        "nova-compute"
    assert [h["from_lane"] for h in looped] == ["nova-compute"] * 2


def test_the_page_shows_the_host_and_escapes_it():
    """The table's host column and the data block carry each hop's host;
    a host is text from the trace like any other: escaped, masked."""
    trace = traces.compute2_attach_trace()
    hop = {h["id"]: h for h in trace["hops"]}
    hop["hop-16"]["host"] = "<img src=x onerror=alert(1)>"
    hop["hop-15"]["host"] = "password=%s" % traces.CHAP_SECRET
    client = web.create_app(lambda ident: trace).test_client()
    page = client.get("/trace/%s" % traces.COMPUTE2_TRACE_ID).get_data(
        as_text=True)
    assert "<th>service</th><th>host</th><th>kind</th>" in page
    assert "<td>nova-compute</td>\n<td>compute2</td>" in page
    assert "<td>cinder-volume</td>\n<td>vm@lvmdriver-1</td>" in page
    assert "<img" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert traces.CHAP_SECRET not in page
    block = page.split('type="application/json">', 1)[1].split(
        "</script>", 1)[0]
    assert "<" not in block
    data = json.loads(block)
    assert data["lanes"][3]["host"] == "compute2"
    hop = {h["id"]: h for h in data["trace"]["hops"]}
    assert hop["hop-10"]["server"]["host"] == "vm"
