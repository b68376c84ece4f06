"""ministack.trace.hops: spans to hops (kinds, actors, phases, names,
masking) and the table ``ministack-trace show`` prints."""

import json
import re

from osprofiler import profiler

from ministack.trace import hops
from ministack.trace import naming
from tests.unit.ministack.trace_rows import BASE
from tests.unit.ministack.trace_rows import CHAP
from tests.unit.ministack.trace_rows import TOKEN
from tests.unit.ministack.trace_rows import Rows
from tests.unit.ministack.trace_rows import attach_rows
from tests.unit.ministack.trace_rows import by_id
from tests.unit.ministack.trace_rows import own
from tests.unit.ministack.trace_rows import wsgi_info


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
    assert trace["journey"] == "attach"
    assert trace["phases"] == ["reserve", "cast", "connect/attach",
                               "complete"]


def test_a_rest_call_is_one_hop_with_both_timings():
    """nova's client call and cinder-api's entry of the same request: the
    client hop carries the server's side, the server's names its client
    (both stay in the list; whoever draws skips the server's)."""
    h = by_id(hops.build(attach_rows()))
    assert h["create"]["server"] == {
        "id": "create-srv", "service": "cinder-api", "host": "vm",
        "start_ms": 120.0, "duration_ms": 70.0, "status": 200,
        "request_id": "req-cinder-1", "error": None}
    assert (h["create"]["duration_ms"], h["create"]["client_id"]) == \
        (90.0, None)
    assert h["create-srv"]["client_id"] == "create"
    assert h["create-srv"]["server"] is None
    assert h["complete"]["server"]["id"] == "complete-srv"
    assert h["complete"]["server"]["status"] == 204
    assert h["complete-srv"]["client_id"] == "complete"
    # A client call without a server span (the store lost it, or the
    # call never reached Cinder), RPC and library hops: nothing joined.
    assert h["update"]["server"] is None
    for key in ("api", "call", "call-srv", "cast", "brick", "tgt"):
        assert (h[key]["server"], h[key]["client_id"]) == (None, None)


def test_only_a_client_call_and_its_own_entry_are_joined():
    r = Rows()
    # cinder-api's entry with no client span above it (a caller that does
    # not trace its side: the openstack CLI's volume request).
    r.span("alone", None, "cinder-api", "wsgi", 0, 10,
           wsgi_info("GET", "/v3/p/volumes/%s" % BASE))
    client = r.span("client", None, "nova-api", "cinder", 20, 60,
                    own("REST", "GET /v3/{project}/volumes/{id}", "cinder",
                        details={"side": "client"}))
    # Two entries under one call (a re-try after a 401): the first is the
    # call's server side, the re-try is drawn as a hop of its own.
    r.span("first", client, "cinder-api", "wsgi", 21, 30,
           wsgi_info("GET", "/v3/p/volumes/%s" % BASE),
           {"ministack": {"status": 401}})
    r.span("retry", client, "cinder-api", "wsgi", 31, 50,
           wsgi_info("GET", "/v3/p/volumes/%s" % BASE),
           {"ministack": {"status": 200}})
    h = by_id(hops.build(r.rows))
    assert h["alone"]["client_id"] is None
    assert h["client"]["server"]["id"] == "first"
    assert h["first"]["client_id"] == "client"
    assert h["retry"]["client_id"] is None


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
    trace = hops.build(r.rows)
    h = by_id(trace)
    assert trace["journey"] == "detach"
    assert trace["phases"] == ["begin_detaching", "cast",
                               "unplug + disconnect", "attachment_delete"]
    assert h["api"]["phase"] == "begin_detaching"
    assert h["begin"]["phase"] == "begin_detaching"
    assert h["cast"]["phase"] == "cast"
    assert h["srv"]["phase"] == "unplug + disconnect"
    assert h["srv"]["error"] == \
        "DeviceDetachFailed: Device detach failed for vdb"
    assert h["guest"]["actor"] == "guest"
    assert h["guest"]["error"] == "the guest did not release vdb"
    assert h["guest"]["phase"] == "unplug + disconnect"
    # driver_detach rolls Cinder back in the unplug (the seed): the
    # volume is never released, no attachment_delete phase follows.
    assert h["roll"]["phase"] == "unplug + disconnect"
    assert "attachment_delete" not in {hop["phase"] for hop in trace["hops"]}
    assert h["unfinished"]["duration_ms"] is None


def _detach_rows(api_entry=True, release=None):
    """A detach that completes: begin_detaching, the cast, the unplug on
    the host, then Cinder releases the volume (``release``: the
    attachment_delete of the 3.44 flow, or the legacy flow's two
    actions)."""
    r = Rows()
    proj = "/v3/0123456789abcdef0123456789abcdef"

    def rest(method, path):     # as nova's Cinder client names its calls
        return naming.rest_name(method, path)
    api = None
    if api_entry:
        api = r.span("api", None, "nova-api", "wsgi", 0, 100, wsgi_info(
            "DELETE", "/v2.1/servers/%s/os-volume_attachments/%s"
            % (BASE, BASE)), {"ministack": {"status": 202}})
        get = r.span("get", api, "nova-api", "cinder", 2, 9,
                     own("REST", rest("GET", "%s/volumes/%s" % (proj, BASE)),
                         "cinder", details={"side": "client"}))
        r.span("get-srv", get, "cinder-api", "wsgi", 3, 8,
               wsgi_info("GET", "%s/volumes/%s" % (proj, BASE)))
        r.span("begin", api, "nova-api", "cinder", 10, 20,
               own("REST", rest("POST", "%s/volumes/%s/action" % (proj, BASE)),
                   "cinder", details={"action": "os-begin_detaching",
                                      "side": "client"}))
    cast = r.span("cast", api, "nova-api", "rpc", 30, 40,
                  own("CAST", "detach_volume", "rabbitmq"))
    handler = r.span("srv", cast, "nova-compute", "rpc", 50, 900,
                     own("CALL", "detach_volume", "nova-compute",
                         details={"side": "server"}))
    r.span("unplug", handler, "nova-compute", "libvirt", 60, 300,
           own("LIBRARY", "virDomainDetachDeviceFlags", "libvirt"))
    r.span("guest", handler, "nova-compute", "guest", 300, 301,
           own("LIBRARY", "guest releases vdb", "guest"))
    r.span("disconnect", handler, "nova-compute", "volume", 310, 320,
           own("LIBRARY", "disconnect_volume (QEMU libiscsi)"))
    r.span("undefine", handler, "nova-compute", "libvirt", 321, 330,
           own("LIBRARY", "virSecretUndefine", "libvirt"))
    if release is None:
        delete = r.span("delete", handler, "nova-compute", "cinder", 400,
                        500, own("REST", rest("DELETE", "%s/attachments/%s"
                                           % (proj, BASE)), "cinder",
                                 details={"side": "client"}),
                        {"ministack": {"status": 200}})
        entry = r.span("delete-srv", delete, "cinder-api", "wsgi", 402, 490,
                       wsgi_info("DELETE", "%s/attachments/%s"
                                 % (proj, BASE)),
                       {"ministack": {"status": 200,
                                      "request_id": "req-cinder-9"}})
        r.span("tgt", entry, "cinder-api", "command", 410, 420,
               own("COMMAND", "tgtadm target unbind"))
    for n, action in enumerate(release or ()):
        r.span(action, handler, "nova-compute", "cinder", 400 + 50 * n,
               440 + 50 * n, own("REST", rest("POST", "%s/volumes/%s/action"
                                           % (proj, BASE)), "cinder",
                                 details={"action": action}))
    return r.rows


def test_a_detach_has_the_seeds_detach_phases():
    trace = hops.build(_detach_rows())
    h = by_id(trace)
    assert trace["journey"] == "detach"
    expected = {
        "api": "begin_detaching", "get": "begin_detaching",
        "get-srv": "begin_detaching", "begin": "begin_detaching",
        "cast": "cast", "srv": "unplug + disconnect",
        "unplug": "unplug + disconnect", "guest": "unplug + disconnect",
        "disconnect": "unplug + disconnect",
        "undefine": "unplug + disconnect",
        "delete": "attachment_delete", "delete-srv": "attachment_delete",
        "tgt": "attachment_delete"}
    assert {key: h[key]["phase"] for key in expected} == expected
    assert {hop["phase"] for hop in trace["hops"]} <= set(trace["phases"])


def test_the_legacy_detach_releases_the_volume_in_attachment_delete():
    h = by_id(hops.build(_detach_rows(
        release=("os-terminate_connection", "os-detach"))))
    assert h["os-terminate_connection"]["phase"] == "attachment_delete"
    assert h["os-detach"]["phase"] == "attachment_delete"


def test_the_journey_from_the_cast_without_the_apis_entry():
    """The compute's side alone (a trace the API did not start) is still
    a detach, from the cast's name; a trace of neither is labelled as an
    attach, and the phases say so."""
    trace = hops.build(_detach_rows(api_entry=False))
    assert trace["journey"] == "detach"
    assert by_id(trace)["srv"]["phase"] == "unplug + disconnect"
    r = Rows()
    r.span("get", None, "nova-api", "wsgi", 0, 10,
           wsgi_info("GET", "/v2.1/servers/%s" % BASE))
    other = hops.build(r.rows)
    assert (other["journey"], other["phases"]) == (None, list(hops.PHASES))
    assert other["hops"][0]["phase"] is None
    r = Rows()
    r.span("cast", None, "nova-api", "rpc", 0, 10,
           own("CAST", "attach_volume", "rabbitmq"))
    assert hops.build(r.rows)["journey"] == "attach"


def test_no_secret_survives():
    text = json.dumps(hops.build(attach_rows()))
    assert CHAP not in text
    assert TOKEN not in text
    assert "***" in text
    assert naming.mask(["tgtadm", "--password", CHAP]) == \
        ["tgtadm", "--password", "***"]
    assert CHAP not in naming.mask("auth_password=%s" % CHAP)


def test_format_table():
    table = hops.format_table(hops.build(attach_rows()))
    lines = table.splitlines()
    assert lines[0].startswith("trace %s  (attach, " % BASE)
    assert lines[1].split() == ["start", "ms", "dur", "ms", "server", "ms",
                                "phase", "service", "host", "kind", "name",
                                "status"]
    assert "reserve_block_device_name" in table
    assert "virDomainAttachDeviceFlags" in table
    assert any("tgtadm target new" in line and "cinder-volume" in line
               for line in lines)
    # One row per REST call: the client's, with the server's time.
    create = [line for line in lines
              if re.search(r"POST /v3/\S+/attachments\s", line)]
    assert len(create) == 1
    assert create[0].split()[:6] == ["110.0", "90.0", "70.0", "reserve",
                                     "nova-api", "vm"]
    assert "cinder-api" not in table
    assert len(lines) == 2 + len(
        [hop for hop in hops.build(attach_rows())["hops"]
         if not hop["client_id"]])


def test_format_table_of_a_detach():
    lines = hops.format_table(hops.build(_detach_rows())).splitlines()
    assert lines[0].startswith("trace %s  (detach, " % BASE)
    rows = [line.split() for line in lines[2:]]
    delete = [row for row in rows if row[-2].startswith("/v3/")
              and row[-3] == "DELETE"]
    assert delete == [["400.0", "100.0", "88.0", "attachment_delete",
                       "nova-compute", "vm", "REST", "DELETE",
                       "/v3/{project}/attachments/{id}", "200"]]
    assert lines[2].split()[2:4] == ["begin_detaching", "nova-api"]
    assert any(" unplug + disconnect " in line and "virSecretUndefine" in line
               for line in lines)
    # A server side without its client still has its row.
    r = Rows()
    r.span("alone", None, "cinder-api", "wsgi", 0, 10,
           wsgi_info("GET", "/v3/p/volumes/%s" % BASE),
           {"etype": "VolumeNotFound", "message": "no such volume"})
    table = hops.format_table(hops.build(r.rows))
    assert "cinder-api" in table and "VolumeNotFound" in table


def test_rest_names():
    assert naming.rest_name("GET", "/v2.1/0123456789abcdef0123456789abcdef/"
                          "servers/%s" % BASE) == \
        "GET /v2.1/{project}/servers/{id}"
    assert naming.rest_name("DELETE", "/v3/%s/attachments/%s"
                          % (BASE.replace("-", ""), BASE)) == \
        "DELETE /v3/{project}/attachments/{id}"


# --- the store and the spans, for real --------------------------------------


def test_rest_names_on_a_noauth_stack():
    # The project segment, whatever it is, on nova's and cinder's URLs.
    assert naming.rest_name("POST", "/v3/journey/volumes/%s/action"
                          % BASE) == "POST /v3/{project}/volumes/{id}/action"
    assert naming.rest_name("GET", "/v2.1/journey/servers/%s" % BASE) == \
        "GET /v2.1/{project}/servers/{id}"
    assert naming.rest_name("DELETE", "/v2.1/journey/servers/%s/"
                          "os-volume_attachments/%s" % (BASE, BASE)) == \
        "DELETE /v2.1/{project}/servers/{id}/os-volume_attachments/{id}"
    # Collections, discovery and keystone's paths stay as they are.
    for path in ("/v2.1/servers/detail", "/v2.1/os-services",
                 "/v2.1/os-volume_attachments/x", "/v3/volumes/detail",
                 "/v3/auth/tokens", "/v3/", "/v2.1", "/v2.1/journey",
                 "/v2/images/abc"):
        assert naming.rest_name("GET", path) == "GET " + path


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
