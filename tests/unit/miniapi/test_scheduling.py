"""Where a new server goes, with two compute hosts (host1 and host2, each
up with its node reported and a fake compute manager on fake:/).

Upstream's rules, as nova-api and its scheduler apply them: the default
spread (fewest instances), a requested destination at 2.74 (``host``,
``hypervisor_hostname``: admin only, 400 when unknown, filtered), a
forced one in ``availability_zone`` (``nova:HOST``, ``nova::NODE``,
``nova:HOST:NODE``: admin only, never a 400 for an unknown host), and
"No valid host" as the server's ERROR fault. The bodies are the ones
``openstack server create`` sends (``--nic none``, an image).
"""

import datetime

import pytest

from minicompute.db import api as db_api
from tests.unit.miniapi import fakes
from tests.unit.miniapi.inprocess import IMAGE_ID

NO_VALID_HOST = ("No valid host was found. There are not enough hosts "
                 "available.")
DENIED = "Policy doesn't allow %s to be performed."
REQUESTED = "compute:servers:create:requested_destination"
FORCED = "os_compute_api:servers:create:forced_host"


def _osc_body(name, **server):
    """``openstack server create --image IMG --flavor 42 --nic none``."""
    body = {"name": name, "imageRef": IMAGE_ID, "flavorRef": "42",
            "networks": "none", "min_count": 1, "max_count": 1,
            "block_device_mapping_v2": [{
                "uuid": IMAGE_ID, "boot_index": 0, "source_type": "image",
                "destination_type": "local",
                "delete_on_termination": True}]}
    body.update(server)
    return {"server": body}


def _create(api, name="vm", version="2.74", token=None, **server):
    return api.post("/v2.1/servers", _osc_body(name, **server),
                    version=version, token=token)


def _server(api, server_id):
    _, body, _ = api.get("/v2.1/servers/" + server_id, version="2.96")
    return body["server"]


def _placed(api, status, body, _headers=None):
    """(host, node) of the server just created (202)."""
    assert status == 202, body
    server = _server(api, body["server"]["id"])
    return (server["OS-EXT-SRV-ATTR:host"],
            server["OS-EXT-SRV-ATTR:hypervisor_hostname"])


def _no_valid_host(api, status, body, _headers=None):
    assert status == 202, body
    server = _server(api, body["server"]["id"])
    assert server["status"] == "ERROR"
    assert server["fault"]["code"] == 500
    assert server["fault"]["message"] == NO_VALID_HOST
    assert server["OS-EXT-SRV-ATTR:host"] is None
    return server


def _down(admin_ctxt, host):
    service = db_api.service_get_by_host_and_binary(admin_ctxt, host,
                                                    "nova-compute")
    db_api.service_update(admin_ctxt, service.uuid, {
        "last_seen_up": datetime.datetime(2000, 1, 1)})


def _disable(admin_ctxt, host):
    service = db_api.service_get_by_host_and_binary(admin_ctxt, host,
                                                    "nova-compute")
    db_api.service_update(admin_ctxt, service.uuid, {"disabled": True})


def _instances(admin_ctxt):
    return db_api.instance_get_all(admin_ctxt, {"all_tenants": True})


# -- the default spread -----------------------------------------------------

def test_two_servers_land_on_two_hosts(api, compute, compute2):
    placed = [_placed(api, *_create(api, "vm%d" % i)) for i in (1, 2)]
    assert sorted(placed) == [("host1", "host1"), ("host2", "host2")]


def test_each_build_is_cast_to_its_own_host(api, compute, compute2):
    managers = {"host1": compute, "host2": compute2}
    for name in ("vm1", "vm2"):
        status, body, _ = _create(api, name)
        host, _node = _placed(api, status, body)
        server_id = body["server"]["id"]
        kwargs = managers.pop(host).wait_for_cast("build_and_run_instance",
                                                  server_id)
        assert kwargs["instance"]["host"] == host
    assert managers == {}


def test_a_host_that_never_reported_its_node_gets_nothing(
        api, compute, compute2, admin_ctxt):
    """A compute service up but without a compute node is not a
    candidate (upstream: not a placement resource provider)."""
    fakes.heartbeat("host3")
    for i in range(3):
        _placed(api, *_create(api, "vm%d" % i))
    assert {i.host for i in _instances(admin_ctxt)} == {"host1", "host2"}
    status, body, _ = _create(api, host="host3")
    assert status == 400
    assert body["badRequest"]["message"] == \
        "Compute host host3 could not be found."


def test_down_or_disabled_hosts_are_skipped(api, compute, compute2,
                                            admin_ctxt):
    _down(admin_ctxt, "host1")
    assert _placed(api, *_create(api, "vm1"))[0] == "host2"
    _disable(admin_ctxt, "host2")
    _no_valid_host(api, *_create(api, "vm2"))


# -- 2.74: host and hypervisor_hostname ---------------------------------------

def test_requested_host_as_admin(api, compute, compute2, admin_ctxt):
    """``openstack --os-compute-api-version 2.74 server create --host``:
    the server goes there although host1 is emptier."""
    _placed(api, *_create(api, "first", host="host2"))
    status, body, _ = _create(api, "second", host="host2")
    assert _placed(api, status, body) == ("host2", "host2")
    kwargs = compute2.wait_for_cast("build_and_run_instance",
                                    body["server"]["id"])
    assert kwargs["instance"]["host"] == "host2"
    assert not compute.wait_for_casts(1, body["server"]["id"], timeout=0.2)


def test_requested_node_and_host_with_node(api, compute, compute2):
    assert _placed(api, *_create(api, hypervisor_hostname="host2")) == \
        ("host2", "host2")
    assert _placed(api, *_create(api, host="host2",
                                 hypervisor_hostname="host2")) == \
        ("host2", "host2")


def test_requested_destination_is_admin_only(api, compute, compute2,
                                             admin_ctxt):
    for server in ({"host": "host2"}, {"hypervisor_hostname": "host2"}):
        status, body, _ = _create(api, token="u1:p1", **server)
        assert status == 403, body
        assert body["forbidden"]["message"] == DENIED % REQUESTED
    assert _instances(admin_ctxt) == []


@pytest.mark.parametrize("server,named", [
    ({"host": "nope"}, "nope"),
    ({"hypervisor_hostname": "nope"}, "nope"),
    ({"host": "host1", "hypervisor_hostname": "host2"}, "host1"),
    ({"host": "nope", "hypervisor_hostname": "host2"}, "nope")])
def test_unknown_requested_host_or_node_is_400(api, compute, compute2,
                                               admin_ctxt, server, named):
    status, body, _ = _create(api, **server)
    assert status == 400, body
    assert body["badRequest"]["message"] == \
        "Compute host %s could not be found." % named
    assert _instances(admin_ctxt) == []


@pytest.mark.parametrize("key", ["host", "hypervisor_hostname"])
def test_requested_destination_before_274_is_400(api, compute, compute2,
                                                 admin_ctxt, key):
    status, body, _ = _create(api, version="2.73", **{key: "host2"})
    assert status == 400, body
    assert body["badRequest"]["message"] == \
        "Additional properties are not allowed ('%s' was unexpected)" % key
    assert _instances(admin_ctxt) == []


@pytest.mark.parametrize("value", ["", "a b", "x" * 256, "host/2"])
def test_requested_host_must_be_a_hostname(api, compute, value):
    status, body, _ = _create(api, host=value)
    assert status == 400, body


@pytest.mark.parametrize("state", ["down", "disabled", "forced_down"])
def test_requested_host_down_or_disabled_is_no_valid_host(
        api, compute, compute2, admin_ctxt, state):
    if state == "down":
        _down(admin_ctxt, "host2")
    elif state == "disabled":
        _disable(admin_ctxt, "host2")
    else:
        service = db_api.service_get_by_host_and_binary(
            admin_ctxt, "host2", "nova-compute")
        db_api.service_update(admin_ctxt, service.uuid,
                              {"forced_down": True})
    status, body, _ = _create(api, host="host2")
    server = _no_valid_host(api, status, body)
    assert not compute2.wait_for_casts(1, server["id"], timeout=0.2)
    assert not compute.wait_for_casts(1, server["id"], timeout=0.2)


# -- the forced host of availability_zone ------------------------------------

@pytest.mark.parametrize("zone", [
    "nova:host2", "nova::host2", "nova:host2:host2", ":host2", "::host2",
    "elsewhere:host2"])
def test_forced_host_zone_forms(api, compute, compute2, zone):
    """``openstack server create --availability-zone nova:host2``: the
    zone part is not checked once a host is forced (as upstream)."""
    status, body, _ = _create(api, version="2.1", availability_zone=zone)
    assert _placed(api, status, body) == ("host2", "host2")
    assert _server(api, body["server"]["id"])[
        "OS-EXT-AZ:availability_zone"] == "nova"


def test_forced_host_is_admin_only(api, compute, compute2, admin_ctxt):
    for zone in ("nova:host2", "nova::host2", "nova:host2:host2"):
        status, body, _ = _create(api, token="u1:p1",
                                  availability_zone=zone)
        assert status == 403, body
        assert body["forbidden"]["message"] == DENIED % FORCED
    assert _instances(admin_ctxt) == []
    # the plain zone stays open to everyone
    assert _create(api, token="u1:p1", availability_zone="nova")[0] == 202


@pytest.mark.parametrize("zone", ["nova:nope", "nova::nope",
                                  "nova:host1:host2"])
def test_unknown_forced_host_is_no_valid_host(api, compute, compute2,
                                              zone):
    """Not checked by the API upstream: the scheduler finds no host."""
    _no_valid_host(api, *_create(api, availability_zone=zone))


def test_forced_host_down_or_disabled_is_no_valid_host(
        api, compute, compute2, admin_ctxt):
    """ministack filters a forced host too (upstream would place the
    server on a down one and wait; a disabled one it refuses)."""
    _down(admin_ctxt, "host2")
    _no_valid_host(api, *_create(api, availability_zone="nova:host2"))
    _disable(admin_ctxt, "host1")
    _no_valid_host(api, *_create(api, availability_zone="nova:host1"))


@pytest.mark.parametrize("zone,message", [
    ("nova:a:b:c", "Invalid input received: Unable to parse "
                   "availability_zone"),
    ("elsewhere", "The requested availability zone is not available"),
    ("elsewhere::host2", "The requested availability zone is not "
                         "available")])
def test_bad_zones_are_400(api, compute, compute2, admin_ctxt, zone,
                           message):
    status, body, _ = _create(api, availability_zone=zone)
    assert status == 400, body
    assert body["badRequest"]["message"] == message
    assert _instances(admin_ctxt) == []


def test_both_mechanisms_are_400(api, compute, compute2, admin_ctxt):
    status, body, _ = _create(api, host="host2",
                              availability_zone="nova:host2")
    assert status == 400, body
    assert body["badRequest"]["message"] == (
        "One mechanism with host and/or hypervisor_hostname and another "
        "mechanism with zone:host:node are mutually exclusive.")
    assert _instances(admin_ctxt) == []


# -- both hosts in os-services; work for a down host is 409 ------------------

def test_os_services_shows_both_hosts(api, compute, compute2, admin_ctxt):
    _down(admin_ctxt, "host2")
    _, body, _ = api.get("/v2.1/os-services?binary=nova-compute",
                         version="2.53")
    assert {s["host"]: s["state"] for s in body["services"]} == \
        {"host1": "up", "host2": "down"}
    assert all(s["zone"] == "nova" for s in body["services"])


def test_attach_and_detach_on_a_down_host_are_409(api, compute, compute2,
                                                  volumes, admin_ctxt):
    """nova's ``check_instance_host(check_is_up=True)``: the host of the
    server is down (the other is up): 409, nothing changes."""
    _, body, _ = _create(api, host="host2")
    server_id = body["server"]["id"]
    db_api.instance_update(admin_ctxt, server_id, {
        "vm_state": "active", "task_state": None, "power_state": 1})
    attached = volumes.add_volume()
    url = "/v2.1/servers/%s/os-volume_attachments" % server_id
    status, body, _ = api.post(url, {"volumeAttachment": {
        "volumeId": attached}}, version="2.89")
    assert status == 200, body
    _down(admin_ctxt, "host2")
    message = "Compute service of host2 is unavailable at this time."
    volume_id = volumes.add_volume()
    status, body, _ = api.post(url, {"volumeAttachment": {
        "volumeId": volume_id}}, version="2.89")
    assert status == 409, body
    assert body["conflictingRequest"]["message"] == message
    assert volumes.status(volume_id) == "available"
    status, body, _ = api.delete("%s/%s" % (url, attached), version="2.89")
    assert status == 409, body
    assert body["conflictingRequest"]["message"] == message
    assert [b.volume_id for b in db_api.bdm_get_all_by_instance(
        admin_ctxt, server_id) if b.volume_id] == [attached]
