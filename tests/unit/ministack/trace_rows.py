"""Stored osprofiler notifications of a traced attach, built by hand, and
the helpers the trace unit tests share."""

import datetime
import json

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
