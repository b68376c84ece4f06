"""Traces in the shape of :func:`ministack.trace.hops.load`, for the
journey page's tests: a traced attach as the seed tells it, and a detach
the guest refuses (DeviceDetachFailed, then roll_detaching), with hostile
text (markup in names and errors) and secrets that must not be shown; a
detach and a failed attach with its recovery as this lab traces them
(:func:`detach_trace`, :func:`failed_attach_trace`: the hop names of
docs/tracing.md's tables, each hop's host).
Each REST call to Cinder is two hops, as hops.load gives them: nova's
client call (with ``server``) and cinder-api's entry (``client_id``).
Those two record no host (a trace read before hops had one); the
attach on host ``compute2`` (:func:`compute2_attach_trace`) and a trace
that reached two compute hosts (:func:`two_hosts_trace`) do."""

import copy

TRACE_ID = "6f1c2f0e-4a8b-4d1e-9c55-0d6b1e2a7c31"
FAILED_TRACE_ID = "0b9d7e44-2f3a-4c8e-b1d2-7e5a9c3f6d10"
ATTACH_REQUEST = "req-1d3e5f70-8a9b-4c0d-9e1f-2a3b4c5d6e7f"
DETACH_REQUEST = "req-9e8d7c6b-5a49-4838-8271-605f4e3d2c1b"
SERVER = "3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
VOLUME = "c0ffee00-1234-4abc-8def-0123456789ab"
ATTACHMENT = "a77ac4ed-0000-4111-8222-333344445555"
CHAP_SECRET = "Zq8sEcReTcHaPpAsSw0rD"

#: What must never reach the page (the fixture hides each somewhere).
SECRETS = (CHAP_SECRET, "gAAAAABtokenvalue", "hunter2-hmac")


def _id(n):
    return n if isinstance(n, str) else "hop-%02d" % n


def _hop(n, parent, service, actor, from_actor, kind, name, start,
         duration, phase, status=None, error=None,
         request_id=ATTACH_REQUEST, **details):
    return {"id": _id(n),
            "parent_id": None if parent is None else _id(parent),
            "service": service, "actor": actor, "from_actor": from_actor,
            "kind": kind, "name": name, "start_ms": start,
            "duration_ms": duration, "phase": phase, "status": status,
            "request_id": request_id, "error": error, "details": details,
            "server": None, "client_id": None}


def _rest(n, parent, service, from_actor, name, start, duration, phase,
          status, server_duration, server_request, request_id=ATTACH_REQUEST,
          **details):
    """A REST call to Cinder: nova's client hop ``hop-NN`` and cinder-api's
    entry ``hop-NN-srv`` (1 ms later, its child), joined as hops.load
    joins them."""
    client = _hop(n, parent, service, "cinder", from_actor, "REST", name,
                  start, duration, phase, status, request_id=request_id,
                  side="client", **details)
    server = _hop("%s-srv" % _id(n), n, "cinder-api", "cinder", from_actor,
                  "REST", name, start + 1.0, server_duration, phase, status,
                  request_id=server_request,
                  **({"action": details["action"]}
                     if "action" in details else {}))
    server["details"]["global_request_id"] = request_id
    server["client_id"] = client["id"]
    client["server"] = {key: server[key] for key in (
        "id", "service", "start_ms", "duration_ms", "status", "request_id",
        "error")}
    return [client, server]


def attach_trace():
    """A traced attach: the seed's hops, every actor's lane used."""
    p = "/v3/{project}"
    att = p + "/attachments/{id}"
    hops = [
        _hop(1, None, "nova-api", "nova-api", "user", "REST",
             "POST /v2.1/servers/{id}/os-volume_attachments",
             0.0, 412.5, "reserve", 200, server_id=SERVER,
             body={"volumeAttachment": {"volumeId": VOLUME}},
             headers={"X-Auth-Token": "gAAAAABtokenvalue"}),
        *_rest(2, 1, "nova-api", "nova-api", "GET %s/volumes/{id}" % p, 8.1,
               21.3, "reserve", 200, 18.9, "req-cinder-0001",
               path="/v3/p/volumes/" + VOLUME),
        _hop(3, 1, "nova-api", "rabbitmq", "nova-api", "CALL",
             "reserve_block_device_name", 31.0, 46.2, "reserve",
             topic="compute.lab"),
        _hop(4, 3, "nova-compute", "nova-compute", "rabbitmq", "CALL",
             "reserve_block_device_name", 33.0, 42.0, "reserve",
             volume_id=VOLUME, device=None),
        _hop(5, 4, "nova-compute", "nova-compute", "nova-compute", "DB",
             "INSERT INTO block_device_mapping", 52.4, 3.1, "reserve"),
        *_rest(6, 1, "nova-api", "nova-api", "POST %s/attachments" % p, 77.9,
               35.6, "reserve", 200, 31.2, "req-cinder-0002",
               volume_id=VOLUME, instance_uuid=SERVER, connector=None),
        _hop(7, 1, "nova-api", "rabbitmq", "nova-api", "CAST",
             "attach_volume", 116.0, 1.2, "cast", topic="compute.lab"),
        _hop(8, 7, "nova-compute", "nova-compute", "rabbitmq", "CAST",
             "attach_volume", 118.0, 278.4, "connect/attach",
             volume_id=VOLUME),
        _hop(9, 8, "nova-compute", "os-brick", "nova-compute", "LIBRARY",
             "os_brick get_connector_properties", 121.3, 6.2,
             "connect/attach", multipath=False),
        *_rest(10, 8, "nova-compute", "nova-compute", "PUT " + att, 129.0,
               88.0, "connect/attach", 200, 85.4, "req-cinder-0003",
               attachment_id=ATTACHMENT,
               connection_info={"driver_volume_type": "iscsi",
                                "auth_method": "CHAP",
                                "auth_username": "ministack",
                                "auth_password": CHAP_SECRET}),
        _hop(11, "hop-10-srv", "cinder-volume", "cinder", "cinder",
             "COMMAND", "tgtadm --op new --mode target", 140.2, 12.0,
             "connect/attach", argv=["tgtadm", "--lld", "iscsi", "--op",
                                     "new"]),
        _hop(12, 8, "nova-compute", "os-brick", "nova-compute", "LIBRARY",
             "connect_volume (os-brick iSCSI)", 219.5, 1.4, "connect/attach",
             protocol="ISCSI"),
        _hop(13, 8, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virSecretDefineXML", 222.0, 4.8, "connect/attach",
             secret="password=%s" % CHAP_SECRET),
        _hop(14, 8, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virDomainAttachDeviceFlags", 227.9, 96.3, "connect/attach",
             target_dev="vdb", flags=3),
        _hop(15, 14, "nova-compute", "guest", "libvirt", "LIBRARY",
             "device added: vdb", 323.0, 0.5, "connect/attach"),
        _hop(16, 8, "nova-compute", "nova-compute", "nova-compute", "DB",
             "UPDATE block_device_mapping SET connection_info", 326.1,
             2.7, "connect/attach"),
        *_rest(17, 8, "nova-compute", "nova-compute",
               "POST %s/action" % att, 330.0, 60.2,
               "complete", 204, 57.7, "req-cinder-0004",
               action="os-complete", attachment_id=ATTACHMENT),
    ]
    return {"trace_id": TRACE_ID, "journey": "attach",
            "phases": ["reserve", "cast", "connect/attach", "complete"],
            "request_ids": [ATTACH_REQUEST],
            "started_at": "2026-12-01T19:50:01.123456+00:00",
            "duration_ms": 412.5, "hops": hops}


def failed_detach_trace():
    """A detach the guest refuses: the driver detach fails after its
    retries (DeviceDetachFailed), nova-compute rolls Cinder back with
    roll_detaching; the error text carries markup (escaped, never run)."""
    p = "/v3/{project}"
    rid = DETACH_REQUEST
    error = ("DeviceDetachFailed: Device detach failed for vdb: "
             "<img src=x onerror=alert(1)> guest did not release the device"
             " after 2 attempts")
    unplug = "unplug + disconnect"
    hops = [
        _hop(1, None, "nova-api", "nova-api", "user", "REST",
             "DELETE /v2.1/servers/{id}/os-volume_attachments/{id}", 0.0,
             61.0, "begin_detaching", 202, request_id=rid),
        *_rest(2, 1, "nova-api", "nova-api",
               "POST %s/volumes/{id}/action (os-begin_detaching)" % p, 9.0,
               30.1, "begin_detaching", 202, 27.5, "req-cinder-0005",
               request_id=rid, action="os-begin_detaching"),
        _hop(3, 1, "nova-api", "rabbitmq", "nova-api", "CAST",
             "detach_volume", 45.0, 1.0, "cast", request_id=rid),
        _hop(4, 3, "nova-compute", "nova-compute", "rabbitmq", "CAST",
             "detach_volume", 47.0, 8110.0, unplug,
             request_id=rid, error=error, volume_id=VOLUME,
             attachment_id=ATTACHMENT),
        _hop(5, 4, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virDomainDetachDeviceFlags", 51.0, 4003.0, unplug,
             request_id=rid, target_dev="vdb", attempt=1),
        _hop(6, 4, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virDomainDetachDeviceFlags", 4056.0, 4004.0, unplug,
             request_id=rid, target_dev="vdb",
             attempt=2, error="<script>alert('x')</script> no "
                              "device-removed event"),
        *_rest(7, 4, "nova-compute", "nova-compute",
               "POST %s/volumes/{id}/action (os-roll_detaching)" % p,
               8100.0, 40.0, unplug, 202, 36.1, "req-cinder-0006",
               request_id=rid, action="os-roll_detaching",
               hmac_key="hunter2-hmac"),
    ]
    return {"trace_id": FAILED_TRACE_ID, "journey": "detach",
            "phases": ["begin_detaching", "cast", unplug,
                       "attachment_delete"],
            "request_ids": [rid],
            "started_at": "2026-12-01T19:52:11.000001+00:00",
            "duration_ms": 8157.0, "hops": hops}


DETACH_TRACE_ID = "5b46d753-b82d-4944-84af-b98325eb21ac"
FAILED_ATTACH_TRACE_ID = "fa11ed00-7a7a-4c4c-8d8d-0e0e0e0e0e0e"
DETACH_OK_REQUEST = "req-a52febd4-7199-44f2-8ccc-c658cafd4d37"
FAILED_ATTACH_REQUEST = "req-0fa11ed0-1111-4222-8333-444455556666"
#: The failed driver attach's error (libvirt's, markup included).
ATTACH_ERROR = ("libvirtError: internal error: unable to execute QEMU "
                "command 'blockdev-add': <b>iSCSI login failed</b>")


def detach_trace():
    """A detach as this lab traces it (tools/journey.py, no SQL traced:
    docs/tracing.md's table): begin_detaching, the cast, the unplug the
    guest releases, QEMU's disconnect, then attachment_delete with the
    tgt commands under it. No bdm.destroy hop (no SQL statement)."""
    p = "/v3/{project}"
    rid = DETACH_OK_REQUEST
    unplug = "unplug + disconnect"
    hops = [
        _hop(1, None, "nova-api", "nova-api", "user", "REST",
             "DELETE /v2.1/servers/{id}/os-volume_attachments/{id}", 0.0,
             31.0, "begin_detaching", 202, request_id=rid),
        *_rest(2, 1, "nova-api", "nova-api", "GET %s/volumes/{id}" % p, 4.0,
               6.9, "begin_detaching", 200, 4.8, "req-cinder-0011",
               request_id=rid),
        *_rest(3, 1, "nova-api", "nova-api",
               "POST %s/volumes/{id}/action (os-begin_detaching)" % p, 15.7,
               7.6, "begin_detaching", 202, 5.7, "req-cinder-0012",
               request_id=rid, action="os-begin_detaching"),
        _hop(4, 1, "nova-api", "rabbitmq", "nova-api", "CAST",
             "detach_volume", 27.1, 2.8, "cast", request_id=rid,
             side="client", topic="compute", server="vm"),
        _hop(5, 4, "nova-compute", "nova-compute", "rabbitmq", "CAST",
             "detach_volume", 29.4, 268.8, unplug, request_id=rid,
             side="server"),
        _hop(6, 5, "nova-compute", "os-brick", "nova-compute", "LIBRARY",
             "os_brick get_connector_properties", 47.0, 0.1, unplug,
             request_id=rid),
        _hop(7, 5, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virDomainDetachDeviceFlags", 50.2, 220.8, unplug,
             request_id=rid, target_dev="vdb", live=True),
        _hop(8, 7, "nova-compute", "guest", "libvirt", "LIBRARY",
             "guest releases vdb", 271.2, 0.0, unplug, request_id=rid),
        _hop(9, 5, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virDomainDetachDeviceFlags", 272.6, 2.6, unplug,
             request_id=rid, target_dev="vdb", live=False),
        _hop(10, 5, "nova-compute", "nova-compute", "nova-compute",
             "LIBRARY", "disconnect_volume (QEMU libiscsi)", 275.6, 1.8,
             unplug, request_id=rid),
        _hop(11, 10, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virSecretUndefine", 276.2, 1.2, unplug, request_id=rid),
        *_rest(12, 5, "nova-compute", "nova-compute",
               "DELETE %s/attachments/{id}" % p, 277.8, 17.0,
               "attachment_delete", 200, 15.3, "req-cinder-0013",
               request_id=rid),
        _hop(13, "hop-12-srv", "cinder-volume", "cinder", "cinder",
             "COMMAND", "tgtadm target show", 285.8, 2.6,
             "attachment_delete", request_id="req-cinder-0013"),
        _hop(14, "hop-12-srv", "cinder-volume", "cinder", "cinder",
             "COMMAND", "tgtadm target unbind", 289.0, 0.9,
             "attachment_delete", request_id="req-cinder-0013"),
    ]
    return {"trace_id": DETACH_TRACE_ID, "journey": "detach",
            "phases": ["begin_detaching", "cast", unplug,
                       "attachment_delete"],
            "request_ids": [rid, "req-cinder-0011", "req-cinder-0012",
                            "req-cinder-0013"],
            "started_at": "2026-12-04T18:07:42.180769+00:00",
            "duration_ms": 298.3, "hops": _on_host(hops, FIRST_HOST)}


def failed_attach_trace():
    """An attach whose driver attach fails (libvirt refuses the disk
    after Cinder exported it), as this lab traces it with SQL statements
    traced (OSPROFILER_TRACE_SQLALCHEMY=True): the compute's handler and
    virDomainAttachDeviceFlags red, then the recovery the seed draws:
    the driver disconnects what it connected, attachment_delete returns
    the volume to available (its tgt commands under it), and the manager
    destroys the BDM (the SQL UPDATE that soft-deletes it)."""
    p = "/v3/{project}"
    att = p + "/attachments/{id}"
    rid = FAILED_ATTACH_REQUEST
    ca = "connect/attach"
    destroy = ("UPDATE block_device_mapping SET deleted=block_device_mapping"
               ".id, deleted_at=?, updated_at=? WHERE block_device_mapping"
               ".id = ? AND block_device_mapping.deleted = ?")
    hops = [
        _hop(1, None, "nova-api", "nova-api", "user", "REST",
             "POST /v2.1/servers/{id}/os-volume_attachments", 0.0, 48.2,
             "reserve", 200, request_id=rid),
        *_rest(2, 1, "nova-api", "nova-api", "GET %s/volumes/{id}" % p, 3.6,
               15.4, "reserve", 200, 12.9, "req-cinder-0021",
               request_id=rid),
        _hop(3, 1, "nova-api", "rabbitmq", "nova-api", "CALL",
             "reserve_block_device_name", 22.3, 9.6, "reserve",
             request_id=rid, side="client", topic="compute", server="vm"),
        _hop(4, 3, "nova-compute", "nova-compute", "rabbitmq", "CALL",
             "reserve_block_device_name", 25.1, 5.3, "reserve",
             request_id=rid, side="server"),
        _hop(5, 4, "nova-compute", "nova-compute", "nova-compute", "DB",
             "INSERT INTO block_device_mapping", 26.0, 1.9, "reserve",
             request_id=rid, statement="INSERT INTO block_device_mapping "
             "(created_at, updated_at, deleted_at, deleted, instance_uuid"
             ", volume_id, device_name) VALUES (?, ?, ?, ?, ?, ?, ?)"),
        *_rest(6, 1, "nova-api", "nova-api", "POST %s/attachments" % p,
               32.2, 7.2, "reserve", 200, 4.9, "req-cinder-0022",
               request_id=rid),
        _hop(7, 1, "nova-api", "rabbitmq", "nova-api", "CAST",
             "attach_volume", 42.1, 4.2, "cast", request_id=rid,
             side="client", topic="compute", server="vm"),
        _hop(8, 7, "nova-compute", "nova-compute", "rabbitmq", "CAST",
             "attach_volume", 44.0, 96.5, ca, request_id=rid,
             side="server", error=ATTACH_ERROR),
        _hop(9, 8, "nova-compute", "os-brick", "nova-compute", "LIBRARY",
             "os_brick get_connector_properties", 50.2, 0.1, ca,
             request_id=rid),
        *_rest(10, 8, "nova-compute", "nova-compute", "PUT " + att, 50.5,
               17.6, ca, 200, 15.9, "req-cinder-0023", request_id=rid),
        _hop(11, "hop-10-srv", "cinder-volume", "cinder", "cinder",
             "COMMAND", "tgtadm target new", 58.0, 1.2, ca,
             request_id="req-cinder-0023"),
        _hop(12, "hop-10-srv", "cinder-volume", "cinder", "cinder",
             "COMMAND", "tgtadm target bind", 64.6, 0.7, ca,
             request_id="req-cinder-0023"),
        _hop(13, 8, "nova-compute", "nova-compute", "nova-compute",
             "LIBRARY", "connect_volume (QEMU libiscsi)", 72.6, 7.0, ca,
             request_id=rid),
        _hop(14, 13, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virSecretDefineXML", 73.5, 1.6, ca, request_id=rid,
             secret="password=%s" % CHAP_SECRET),
        _hop(15, 8, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virDomainAttachDeviceFlags", 81.0, 15.4, ca, request_id=rid,
             error=ATTACH_ERROR, target_dev="vdb"),
        _hop(16, 8, "nova-compute", "nova-compute", "nova-compute",
             "LIBRARY", "disconnect_volume (QEMU libiscsi)", 97.1, 1.5, ca,
             request_id=rid),
        _hop(17, 16, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virSecretUndefine", 97.6, 0.9, ca, request_id=rid),
        *_rest(18, 8, "nova-compute", "nova-compute",
               "DELETE " + att, 100.2, 16.8, "complete", 200, 15.0,
               "req-cinder-0024", request_id=rid),
        _hop(19, "hop-18-srv", "cinder-volume", "cinder", "cinder",
             "COMMAND", "tgtadm target unbind", 108.3, 0.8, "complete",
             request_id="req-cinder-0024"),
        _hop(20, 8, "nova-compute", "nova-compute", "nova-compute", "DB",
             "UPDATE block_device_mapping SET", 138.2, 1.8,
             ca, request_id=rid, statement=destroy),
    ]
    return {"trace_id": FAILED_ATTACH_TRACE_ID, "journey": "attach",
            "phases": ["reserve", "cast", ca, "complete"],
            "request_ids": [rid, "req-cinder-0021", "req-cinder-0022",
                            "req-cinder-0023", "req-cinder-0024"],
            "started_at": "2026-12-04T18:09:10.000001+00:00",
            "duration_ms": 140.5, "hops": _on_host(hops, FIRST_HOST)}


#: A second compute host (COMPUTE_HOSTS=2) and the first (the machine's).
COMPUTE2 = "compute2"
FIRST_HOST = "vm"
VOLUME_HOST = "vm@lvmdriver-1"
COMPUTE2_TRACE_ID = "c2c2c2c2-1111-4222-8333-444455556666"
TWO_HOSTS_TRACE_ID = "2f2f2f2f-aaaa-4bbb-8ccc-ddddeeeeffff"
SERVER_B = "5e4f3a2b-1c0d-4a7b-8c6d-3a2b1c0d9e8f"


def _on_host(hops, compute_host):
    """``hops`` with the host each daemon records: nova-compute's is
    ``compute_host``, cinder-volume's its backend, the APIs' ``vm``."""
    hosts = {"nova-compute": compute_host, "cinder-volume": VOLUME_HOST}
    for hop in hops:
        hop["host"] = hosts.get(hop["service"], FIRST_HOST)
    for hop in hops:
        if hop["server"]:
            hop["server"]["host"] = FIRST_HOST      # cinder-api's
    return hops


def compute2_attach_trace():
    """The seed's attach, its instance on host ``compute2``: the cast
    went to compute2's minicompute, whose hops say so."""
    trace = attach_trace()
    trace["trace_id"] = COMPUTE2_TRACE_ID
    _on_host(trace["hops"], COMPUTE2)
    return trace


def _renamed(hops, prefix, offset):
    """A copy of ``hops`` with ids ``prefix``-..., ``offset`` ms later."""
    hops = copy.deepcopy(hops)

    def new(ident):
        return None if ident is None else "%s-%s" % (prefix, ident)

    for hop in hops:
        hop["id"] = new(hop["id"])
        hop["parent_id"] = new(hop["parent_id"])
        hop["client_id"] = new(hop["client_id"])
        hop["start_ms"] += offset
        if hop["server"]:
            hop["server"]["id"] = new(hop["server"]["id"])
            hop["server"]["start_ms"] += offset
    return hops


def two_hosts_trace():
    """One traced session that attached a multiattach volume to two
    servers: the first on host ``vm``, the second on ``compute2`` (each
    API entry cast ``attach_volume`` to its server's host)."""
    first = _on_host(attach_trace()["hops"], FIRST_HOST)
    second = _renamed(_on_host(attach_trace()["hops"], COMPUTE2), "b", 500.0)
    second[0]["details"]["server_id"] = SERVER_B
    return {"trace_id": TWO_HOSTS_TRACE_ID, "journey": "attach",
            "phases": ["reserve", "cast", "connect/attach", "complete"],
            "request_ids": [ATTACH_REQUEST],
            "started_at": "2026-12-01T19:55:00.000001+00:00",
            "duration_ms": 912.5, "hops": first + second}


BOOT_TRACE_ID = "b0075e00-b00f-4b00-8b00-0000b0075e00"
BOOT_REQUEST = "req-b0075e00-1111-4222-8333-444455556666"


def boot_trace():
    """A traced boot from volume: nova-api reserves the user's volume
    before the cast, the host connects it and defines the guest with it
    as vda, then completes the attachment."""
    p = "/v3/{project}"
    att = p + "/attachments/{id}"
    hops = [
        _hop(1, None, "nova-api", "nova-api", "user", "REST",
             "POST /v2.1/servers", 0.0, 95.0, "reserve", 202,
             request_id=BOOT_REQUEST,
             body={"server": {"name": "bfv", "imageRef": "",
                              "block_device_mapping_v2": [{
                                  "uuid": VOLUME, "source_type": "volume",
                                  "destination_type": "volume",
                                  "boot_index": 0}]}}),
        *_rest(2, 1, "nova-api", "nova-api", "GET %s/volumes/{id}" % p, 8.0,
               20.0, "reserve", 200, 18.0, "req-cinder-0101",
               request_id=BOOT_REQUEST, path="/v3/p/volumes/" + VOLUME),
        *_rest(3, 1, "nova-api", "nova-api", "POST %s/attachments" % p, 40.0,
               30.0, "reserve", 200, 27.0, "req-cinder-0102",
               request_id=BOOT_REQUEST, volume_id=VOLUME,
               instance_uuid=SERVER, connector=None),
        _hop(4, 1, "nova-api", "rabbitmq", "nova-api", "CAST",
             "build_and_run_instance", 80.0, 1.0, "cast",
             request_id=BOOT_REQUEST, topic="compute.lab"),
        _hop(5, 4, "nova-compute", "nova-compute", "rabbitmq", "CAST",
             "build_and_run_instance", 82.0, 4700.0, "connect + spawn",
             request_id=BOOT_REQUEST),
        _hop(6, 5, "nova-compute", "os-brick", "nova-compute", "LIBRARY",
             "os_brick get_connector_properties", 90.0, 2.0,
             "connect + spawn", request_id=BOOT_REQUEST),
        *_rest(7, 5, "nova-compute", "nova-compute", "PUT " + att, 95.0,
               40.0, "connect + spawn", 200, 35.0, "req-cinder-0103",
               request_id=BOOT_REQUEST, attachment_id=ATTACHMENT,
               connection_info={"driver_volume_type": "iscsi",
                                "auth_method": "CHAP",
                                "auth_username": "ministack",
                                "auth_password": CHAP_SECRET}),
        _hop(8, 5, "nova-compute", "os-brick", "nova-compute", "LIBRARY",
             "connect_volume (QEMU libiscsi)", 140.0, 6.0,
             "connect + spawn", request_id=BOOT_REQUEST),
        _hop(9, 5, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virSecretDefineXML", 147.0, 2.0, "connect + spawn",
             request_id=BOOT_REQUEST),
        _hop(10, 5, "nova-compute", "libvirt", "nova-compute", "LIBRARY",
             "virDomainDefineXML", 150.0, 6.0, "connect + spawn",
             request_id=BOOT_REQUEST, target_dev="vda"),
        *_rest(11, 5, "nova-compute", "nova-compute",
               "POST %s/action" % att, 4700.0, 15.0, "complete", 204, 9.0,
               "req-cinder-0104", request_id=BOOT_REQUEST,
               action="os-complete", attachment_id=ATTACHMENT),
    ]
    return {"trace_id": BOOT_TRACE_ID, "journey": "boot",
            "phases": ["reserve", "cast", "connect + spawn", "complete"],
            "request_ids": [BOOT_REQUEST],
            "started_at": "2026-12-07T15:59:30.994002+00:00",
            "duration_ms": 4782.0, "hops": hops}


def drawn(trace):
    """The hops the page draws: one per REST call (no server side)."""
    return [hop for hop in trace["hops"] if not hop["client_id"]]


TRACES = {TRACE_ID: attach_trace, FAILED_TRACE_ID: failed_detach_trace,
          DETACH_TRACE_ID: detach_trace,
          FAILED_ATTACH_TRACE_ID: failed_attach_trace,
          COMPUTE2_TRACE_ID: compute2_attach_trace,
          TWO_HOSTS_TRACE_ID: two_hosts_trace,
          BOOT_TRACE_ID: boot_trace}
BY_REQUEST = {ATTACH_REQUEST: TRACE_ID, DETACH_REQUEST: FAILED_TRACE_ID,
              DETACH_OK_REQUEST: DETACH_TRACE_ID,
              FAILED_ATTACH_REQUEST: FAILED_ATTACH_TRACE_ID}


def load(ident):
    """Like ``hops.load`` over the fixture traces (LookupError when
    there is no such trace)."""
    ident = BY_REQUEST.get(ident, ident)
    if ident not in TRACES:
        raise LookupError(ident)
    return copy.deepcopy(TRACES[ident]())


def recent(limit):
    return [{"trace_id": t["trace_id"], "started_at": t["started_at"],
             "name": t["hops"][0]["name"],
             "services": sorted({h["service"] for h in t["hops"]}),
             "hops": len(t["hops"])}
            for t in (failed_detach_trace(), attach_trace())][:limit]
