"""The extend of an attached volume, traced (issue 29): the trace carried
into minicinder's worker thread, cinder-volume's call to nova as one
REST hop with both sides, and the extend's own phases."""

import threading

from osprofiler import profiler

from minicinder.compute import nova
from ministack.trace import hops
from ministack.trace import phases
from ministack.trace import profiler as ms_profiler
from tests.support.minicinder_inprocess import make_conf
from tests.unit.ministack.trace_rows import BASE
from tests.unit.ministack.trace_rows import Rows
from tests.unit.ministack.trace_rows import by_id
from tests.unit.ministack.trace_rows import own
from tests.unit.ministack.trace_rows import wsgi_info

PROJ = "/v3/0123456789abcdef0123456789abcdef"
SERVER = "51c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b33"


def _in_thread(func):
    seen = {}

    def run():
        try:
            func()
        finally:
            seen["left"] = profiler.get()
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    return seen


def test_carried_work_joins_the_trace_in_another_thread(store):
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    try:
        with ms_profiler.span("cinder", "LIBRARY", "os-extend",
                              actor="cinder"):
            def work():
                with ms_profiler.span("loop", "LIBRARY",
                                      "ioctl LOOP_SET_STATUS64",
                                      actor="cinder"):
                    pass
            job = ms_profiler.carried(work)
    finally:
        profiler.clean()
    seen = _in_thread(job)
    # the pooled thread keeps no trace once the work is done
    assert seen["left"] is None
    trace = hops.load(store, base)
    [outer, inner] = trace["hops"]
    assert inner["name"] == "ioctl LOOP_SET_STATUS64"
    assert inner["parent_id"] == outer["id"]


def test_carried_outside_a_trace_is_the_function_itself():
    profiler.clean()

    def work():
        return 1
    assert ms_profiler.carried(work) is work


class _Answer:
    status_code = 200
    headers = {"x-openstack-request-id": "req-nova"}
    text = ""

    def json(self):
        return {"events": [{"server_uuid": SERVER, "code": 200}]}


class _Session:
    def __init__(self):
        self.headers = []

    def post(self, url, json=None, headers=None, timeout=None):
        self.headers.append(headers)
        return _Answer()


def test_the_volume_extended_post_carries_the_trace(store):
    conf = make_conf()
    conf.set_override("endpoint", "http://nova.test:8774/v2.1", group="nova")
    session = _Session()
    api = nova.API(conf, session=session)
    assert api.extend_volume(None, [SERVER], BASE) == {SERVER: 200}
    assert "X-Trace-Info" not in session.headers[0]
    profiler.init("unit-key")
    base = profiler.get().get_base_id()
    try:
        assert api.extend_volume(None, [SERVER], BASE) == {SERVER: 200}
    finally:
        profiler.clean()
    assert session.headers[1]["X-Trace-Info"]
    [hop] = hops.load(store, base)["hops"]
    assert (hop["kind"], hop["actor"], hop["name"], hop["status"]) == (
        "REST", "nova-api", "POST /v2.1/os-server-external-events", 200)


def extend_rows():
    """A traced extend of an attached volume as the daemons record it."""
    r = Rows()
    entry = r.span("entry", None, "cinder-api", "wsgi", 0, 20,
                   dict(wsgi_info("POST", "%s/volumes/%s/action" % (
                       PROJ, BASE)), ministack={"action": "os-extend"}),
                   {"ministack": {"status": 202}})
    job = r.span("job", entry, "cinder-api", "cinder", 10, 900,
                 own("LIBRARY", "extend_volume", "cinder"))
    r.span("lvextend", job, "cinder-api", "command", 20, 60,
           own("COMMAND", "lvextend", "cinder"))
    r.span("ioctl", job, "cinder-api", "loop", 61, 62,
           own("LIBRARY", "ioctl LOOP_SET_STATUS64", "cinder"))
    r.span("tgt", job, "cinder-api", "command", 63, 65,
           own("COMMAND", "tgtadm logicalunit update", "cinder"))
    post = r.span("post", job, "cinder-api", "nova", 100, 200,
                  own("REST", "POST /v2.1/os-server-external-events",
                      "nova-api", details={"side": "client"}),
                  {"ministack": {"status": 200}})
    api = r.span("api", post, "nova-api", "wsgi", 110, 190,
                 wsgi_info("POST", "/v2.1/os-server-external-events"),
                 {"ministack": {"status": 200}})
    cast = r.span("cast", api, "nova-api", "rpc", 150, 160,
                  own("CAST", "external_instance_event", "rabbitmq",
                      details={"side": "client"}))
    handler = r.span("handler", cast, "nova-compute", "rpc", 210, 800,
                     own("CALL", "external_instance_event", "nova-compute",
                         details={"side": "server"}))
    get = r.span("get", handler, "nova-compute", "cinder", 220, 260,
                 own("REST", "GET %s/volumes/%s" % (PROJ, BASE), "cinder",
                     details={"side": "client"}))
    r.span("get-srv", get, "cinder-api", "wsgi", 225, 255,
           wsgi_info("GET", "%s/volumes/%s" % (PROJ, BASE)))
    r.span("resize", handler, "nova-compute", "libvirt", 300, 700,
           own("LIBRARY", "virDomainBlockResize", "libvirt"))
    return r.rows


def test_an_extend_has_the_extends_phases():
    trace = hops.build(extend_rows())
    h = by_id(trace)
    assert trace["journey"] == "extend"
    assert trace["phases"] == list(phases.EXTEND_PHASES)
    expected = {"entry": "extend", "job": "extend", "lvextend": "extend",
                "ioctl": "extend", "tgt": "extend",
                "post": "volume-extended", "api": "volume-extended",
                "cast": "cast", "handler": "resize", "get": "resize",
                "get-srv": "resize", "resize": "resize"}
    assert {key: h[key]["phase"] for key in expected} == expected
    # cinder-volume does the work and tells nova; one REST hop, both sides
    for key in ("job", "lvextend", "ioctl", "tgt", "post"):
        assert h[key]["service"] == "cinder-volume", key
    assert h["post"]["server"]["id"] == "api"
    assert h["api"]["client_id"] == "post"
    assert h["handler"]["kind"] == "CAST"
    assert "extend, " in hops.format_table(trace).splitlines()[0]


def test_the_extend_is_known_from_its_cast_without_cinders_entry():
    rows = [row for row in extend_rows()
            if row["trace_id"] not in ("entry", "job", "post")]
    assert hops.build(rows)["journey"] == "extend"
