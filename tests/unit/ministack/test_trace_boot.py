"""A boot from volume, traced: its own journey and phases -- nova-api's
reservation before the cast, the cast, the host's connect + spawn (its
own attachment_create for a volume it made included), the completion."""

from ministack.trace import hops
from ministack.trace import phases
from tests.unit.ministack.trace_rows import BASE
from tests.unit.ministack.trace_rows import Rows
from tests.unit.ministack.trace_rows import by_id
from tests.unit.ministack.trace_rows import own
from tests.unit.ministack.trace_rows import wsgi_info

PROJ = "/v3/0123456789abcdef0123456789abcdef"


def _rest(r, ident, parent, service, start, stop, method, path,
          **details):
    return r.span(ident, parent, service, "cinder", start, stop,
                  own("REST", "%s %s" % (method, PROJ + path), "cinder",
                      details=dict(details, method=method,
                                   path=PROJ + path, side="client")),
                  {"ministack": {"status": 200}})


def boot_rows():
    """A traced ``POST /servers`` with a volume the user brought."""
    r = Rows()
    api = r.span("api", None, "nova-api", "wsgi", 0, 300,
                 wsgi_info("POST", "/v2.1/servers"),
                 {"ministack": {"status": 202, "request_id": "req-%s" % BASE,
                                "global_request_id": None}})
    _rest(r, "reserve", api, "nova-api", 10, 100, "POST", "/attachments")
    r.span("reserve-srv", "reserve", "cinder-api", "wsgi", 20, 90,
           wsgi_info("POST", PROJ + "/attachments"),
           {"ministack": {"status": 200, "request_id": "req-cinder-1"}})
    cast = r.span("cast", api, "nova-api", "rpc", 200, 210,
                  own("CAST", "build_and_run_instance", "rabbitmq",
                      details={"side": "client"}))
    handler = r.span("build", cast, "nova-compute", "rpc", 220, 3000,
                     own("CALL", "build_and_run_instance", "nova-compute",
                         details={"side": "server"}))
    _rest(r, "made", handler, "nova-compute", 230, 300, "POST",
          "/attachments")
    _rest(r, "update", handler, "nova-compute", 400, 900, "PUT",
          "/attachments/%s" % BASE)
    r.span("define", handler, "nova-compute", "libvirt", 1000, 1100,
           own("LIBRARY", "virDomainDefineXML", "libvirt"))
    _rest(r, "complete", handler, "nova-compute", 2000, 2100, "POST",
          "/attachments/%s/action" % BASE, action="os-complete")
    return r.rows


def test_a_boot_is_its_own_journey_with_its_own_phases():
    trace = hops.build(boot_rows())
    assert trace["journey"] == phases.BOOT
    assert trace["phases"] == ["reserve", "cast", "connect + spawn",
                               "complete"]
    phase = {ident: hop["phase"] for ident, hop in by_id(trace).items()}
    assert phase == {
        "api": "reserve", "reserve": "reserve", "reserve-srv": "reserve",
        "cast": "cast", "build": "connect + spawn",
        "made": "connect + spawn", "update": "connect + spawn",
        "define": "connect + spawn", "complete": "complete"}


def test_the_cast_alone_names_the_boot():
    """A trace without the API's entry (the host's side only)."""
    rows = [row for row in boot_rows()
            if row["trace_id"] not in ("api", "reserve", "reserve-srv")]
    assert hops.build(rows)["journey"] == phases.BOOT


def test_an_attach_is_still_an_attach():
    from tests.unit.ministack.trace_rows import attach_rows
    assert hops.build(attach_rows())["journey"] == phases.ATTACH
