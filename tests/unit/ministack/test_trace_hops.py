"""ministack.trace.hops: spans to hops (kinds, actors, phases, names,
masking) and the table ``ministack-trace show`` prints."""

import json
from osprofiler import profiler
from ministack.trace import hops
from ministack.trace import naming
from tests.unit.ministack.trace_rows import (
    BASE, CHAP, TOKEN, Rows, attach_rows, by_id, own, wsgi_info)


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
    assert naming.mask(["tgtadm", "--password", CHAP]) == \
        ["tgtadm", "--password", "***"]
    assert CHAP not in naming.mask("auth_password=%s" % CHAP)


def test_format_table():
    table = hops.format_table(hops.build(attach_rows()))
    lines = table.splitlines()
    assert lines[0].startswith("trace %s" % BASE)
    assert "reserve_block_device_name" in table
    assert "virDomainAttachDeviceFlags" in table
    assert any("tgtadm target new" in line and "cinder-volume" in line
               for line in lines)


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
