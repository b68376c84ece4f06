"""/os-hypervisors on the real app, checked as tempest's hypervisor_client
checks it.

Every response goes through the schema tempest's ``hypervisor_client``
picks for the microversion (``schema_versions_info``: v2_1, v2_28, v2_33,
v2_53). Tempest 47 has no 2.88 schema (its client uses the 2.53 one at
every later version, and no tempest test asks for 2.88+), so from 2.88
the detail views are checked against tempest's 2.53 schema changed as
nova's API reference says 2.88 changes the view: the resource figures
removed, ``uptime`` (string or null) added and required.

The compute hosts of the fixtures are ``host1`` and (``compute2``)
``host2``: each a heartbeat row, a node in ``compute_nodes`` with the
facts its resource tracker would report (``fakes.report_node``: the fake
driver's, host2's bigger) and a fake compute manager on fake:/, which
answers the ``get_host_uptime`` call.
"""

import copy
import datetime
import json
import uuid

import pytest

from minicompute.db import api as db_api
from minicompute.virt import fake as fake_driver
from tests.unit.miniapi import fakes
from tests.unit.miniapi import tempest_schemas as ts

CLIENT = "hypervisor_client"
UPTIME = fakes.UPTIME
DROPPED_AT_288 = ("vcpus", "memory_mb", "local_gb", "vcpus_used",
                  "memory_mb_used", "local_gb_used", "free_ram_mb",
                  "free_disk_gb", "current_workload", "running_vms",
                  "disk_available_least", "cpu_info")
VERSIONS = ["2.1", "2.27", "2.28", "2.32", "2.33", "2.52", "2.53", "2.74",
            "2.75", "2.87", "2.88", "2.96"]
DENIED = "Policy doesn't allow os_compute_api:os-hypervisors:%s to be " \
         "performed."


@pytest.fixture(autouse=True)
def _tempest():
    ts.require_tempest()


def _v288(schema_name):
    """tempest's 2.53 detail schema as nova's 2.88 changes it."""
    schema = copy.deepcopy(getattr(ts.schema_module(CLIENT, "2.53"),
                                   schema_name))
    body = schema["response_body"]["properties"]
    item = body["hypervisors"]["items"] if "hypervisors" in body \
        else body["hypervisor"]
    for field in DROPPED_AT_288:
        item["properties"].pop(field)
        if field in item["required"]:
            item["required"].remove(field)
    item["properties"]["uptime"] = {"type": ["string", "null"]}
    item["required"].append("uptime")
    return schema


def _check(name, version, status, body):
    if version >= "2.88" and name in ("list_hypervisors_detail",
                                      "get_hypervisor"):
        ts.check(_v288(name), status, body)
    else:
        ts.check_client(CLIENT, name, version, status, body)


def _ids(api, version="2.53"):
    _, body, _ = api.get("/v2.1/os-hypervisors", version=version)
    return [h["id"] for h in body["hypervisors"]]


def _host(host):
    """Another compute host, up and reported (no RPC server: nothing may
    call it)."""
    fakes.heartbeat(host)
    fakes.report_node(host)


# -- every view at every boundary, against tempest's schemas ----------------

@pytest.mark.parametrize("version", VERSIONS)
def test_views_match_tempest_schemas(api, compute, make_server, version):
    make_server()
    query = "?with_servers=true" if version >= "2.53" else ""
    status, body, _ = api.get("/v2.1/os-hypervisors" + query,
                              version=version)
    _check("list_search_hypervisors", version, status, body)
    (hyp,) = body["hypervisors"]
    assert hyp["hypervisor_hostname"] == "host1"
    assert (hyp["state"], hyp["status"]) == ("up", "enabled")
    assert ("servers" in hyp) is (version >= "2.53")
    status, body, _ = api.get("/v2.1/os-hypervisors/detail" + query,
                              version=version)
    _check("list_hypervisors_detail", version, status, body)
    status, body, _ = api.get("/v2.1/os-hypervisors/%s%s"
                              % (hyp["id"], query), version=version)
    _check("get_hypervisor", version, status, body)
    shown = body["hypervisor"]
    assert shown["hypervisor_type"] == "QEMU"
    assert shown["hypervisor_version"] == 7002022
    assert shown["host_ip"] == "192.0.2.10"
    if version < "2.88":
        assert not set(DROPPED_AT_288) - set(shown)
        assert "uptime" not in shown
        status, body, _ = api.get("/v2.1/os-hypervisors/statistics",
                                  version=version)
        _check("get_hypervisor_statistics", version, status, body)
        status, body, _ = api.get("/v2.1/os-hypervisors/%s/uptime"
                                  % hyp["id"], version=version)
        _check("get_hypervisor_uptime", version, status, body)
        assert body["hypervisor"]["uptime"] == UPTIME
    else:
        assert not set(DROPPED_AT_288) & set(shown)
        assert shown["uptime"] == UPTIME
        for path in ("statistics", "%s/uptime" % hyp["id"]):
            assert api.get("/v2.1/os-hypervisors/" + path,
                           version=version)[0] == 404
    if version < "2.53":
        status, body, _ = api.get("/v2.1/os-hypervisors/host/search",
                                  version=version)
        _check("list_search_hypervisors", version, status, body)
        status, body, _ = api.get("/v2.1/os-hypervisors/host/servers",
                                  version=version)
        _check("get_hypervisors_servers", version, status, body)
        assert len(body["hypervisors"][0]["servers"]) == 1
    else:
        for path in ("host/search", "host/servers"):
            assert api.get("/v2.1/os-hypervisors/" + path,
                           version=version)[0] == 404


def test_ids_integer_then_uuid(api, compute, admin_ctxt):
    _, services, _ = api.get("/v2.1/os-services", version="2.53")
    (service,) = services["services"]
    (node,) = db_api.compute_node_get_all(admin_ctxt)
    _, old, _ = api.get("/v2.1/os-hypervisors/detail", version="2.52")
    (old,) = old["hypervisors"]
    assert old["id"] == node.id and isinstance(old["service"]["id"], int)
    _, new, _ = api.get("/v2.1/os-hypervisors/detail", version="2.53")
    (new,) = new["hypervisors"]
    assert new["id"] == node.uuid == str(uuid.UUID(new["id"]))
    assert new["service"]["id"] == service["id"]
    # the compute node has its own UUID, stable across requests and
    # reports
    fakes.report_node("host1", vcpus=6)
    assert new["id"] != service["id"] and _ids(api) == [new["id"]]
    assert api.get("/v2.1/os-hypervisors/%s" % old["id"],
                   version="2.52")[0] == 200
    assert api.get("/v2.1/os-hypervisors/%s" % new["id"].upper(),
                   version="2.53")[0] == 200


def test_figures_from_instances_and_the_reported_node(api, compute,
                                                      make_server):
    make_server()
    make_server("vm2", vm_state="building")
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.28")
    (hyp,) = body["hypervisors"]
    # m1.nano: 1 vCPU, 128 MB, 1 GB root disk, each
    assert (hyp["running_vms"], hyp["vcpus_used"], hyp["memory_mb_used"],
            hyp["local_gb_used"], hyp["current_workload"]) == \
        (2, 2, 256, 2, 1)
    # the totals are what the host reported (the fake driver's)
    assert (hyp["vcpus"], hyp["memory_mb"], hyp["local_gb"],
            hyp["disk_available_least"]) == (4, 8192, 100, 90)
    assert hyp["free_ram_mb"] == 8192 - 256
    assert hyp["free_disk_gb"] == 100 - 2
    assert hyp["cpu_info"] == json.loads(
        fake_driver.FAKE_RESOURCES["cpu_info"])
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.27")
    cpu_info = body["hypervisors"][0]["cpu_info"]
    assert json.loads(cpu_info) == hyp["cpu_info"]
    # a new report changes what is shown, at once
    fakes.report_node("host1", memory_mb=4096, host_ip="192.0.2.99")
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.28")
    assert body["hypervisors"][0]["memory_mb"] == 4096
    assert body["hypervisors"][0]["host_ip"] == "192.0.2.99"


def test_a_service_without_node_and_a_node_without_service(
        api, compute, admin_ctxt):
    """As upstream: a compute service whose host never reported a node has
    no hypervisor, and a node whose service is gone is skipped."""
    fakes.heartbeat("silent")
    orphan = fakes.report_node("ghost")
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.53")
    assert [h["hypervisor_hostname"] for h in body["hypervisors"]] == \
        ["host1"]
    _, body, _ = api.get("/v2.1/os-services")
    assert {s["host"] for s in body["services"]} == {"host1", "silent"}
    for version, hyp_id in (("2.1", str(orphan.id)), ("2.53", orphan.uuid)):
        status, body, _ = api.get("/v2.1/os-hypervisors/" + hyp_id,
                                  version=version)
        assert status == 404
        assert body["itemNotFound"]["message"] == \
            "Hypervisor with ID '%s' could not be found." % hyp_id
    _, body, _ = api.get("/v2.1/os-hypervisors/statistics")
    assert body["hypervisor_statistics"]["count"] == 1


def test_uptime_is_asked_of_the_host(api, compute):
    """GET .../uptime is an RPC call to the hypervisor's host; a driver
    that cannot tell is 501, and null in the 2.88 view."""
    (hyp_id,) = _ids(api, "2.1")
    _, body, _ = api.get("/v2.1/os-hypervisors/%s/uptime" % hyp_id)
    assert body["hypervisor"]["uptime"] == UPTIME
    assert compute.uptime_calls == ["host1"]
    compute.uptime = None
    status, body, _ = api.get("/v2.1/os-hypervisors/%s/uptime" % hyp_id)
    assert status == 501
    assert body["notImplemented"]["message"] == "Feature not supported"
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.88")
    assert body["hypervisors"][0]["uptime"] is None


def test_with_servers(api, make_server, admin_ctxt, compute2):
    server_id = make_server()
    url = "/v2.1/os-hypervisors?with_servers=true"
    _, body, _ = api.get(url, version="2.53")
    host1, host2 = body["hypervisors"]
    row = db_api.instance_get(admin_ctxt, server_id)
    assert row.host == "host1"
    assert host1["servers"] == [{"name": "instance-%08x" % row.id,
                                 "uuid": server_id}]
    assert "servers" not in host2   # none hosted: absent before 2.75
    _, body, _ = api.get(url, version="2.75")
    assert body["hypervisors"][1]["servers"] == []
    _, body, _ = api.get("/v2.1/os-hypervisors?with_servers=false",
                         version="2.75")
    assert all("servers" not in h for h in body["hypervisors"])
    _, body, _ = api.get("/v2.1/os-hypervisors/%s?with_servers=1"
                         % host1["id"], version="2.53")
    assert body["hypervisor"]["servers"][0]["uuid"] == server_id
    # before 2.53 the query parameter means nothing
    _, body, _ = api.get(url, version="2.52")
    assert all("servers" not in h for h in body["hypervisors"])


def test_paging(api, compute2):
    for version, first in (("2.33", _ids(api, "2.33")[0]),
                           ("2.53", _ids(api)[0])):
        status, body, _ = api.get("/v2.1/os-hypervisors/detail?limit=1",
                                  version=version)
        _check("list_hypervisors_detail", version, status, body)
        (hyp,) = body["hypervisors"]
        assert hyp["id"] == first
        (link,) = body["hypervisors_links"]
        assert link["rel"] == "next"
        assert link["href"] == ("http://localhost/v2.1/os-hypervisors/"
                                "detail?limit=1&marker=%s" % first)
        nxt = link["href"].split("localhost", 1)[1]
        _, body, _ = api.get(nxt, version=version)
        assert [h["hypervisor_hostname"] for h in body["hypervisors"]] == \
            ["host2"]
        _, body, _ = api.get("/v2.1/os-hypervisors?limit=5",
                             version=version)
        assert len(body["hypervisors"]) == 2
        assert "hypervisors_links" not in body
        status, body, _ = api.get("/v2.1/os-hypervisors?marker=999",
                                  version=version)
        assert status == 400
        assert body["badRequest"]["message"] == "marker [999] not found"
    # before 2.33 paging parameters are ignored
    _, body, _ = api.get("/v2.1/os-hypervisors?limit=1", version="2.32")
    assert len(body["hypervisors"]) == 2 and "hypervisors_links" not in body
    # the legacy URL form keeps its project in the link
    _, body, _ = api.get("/v2.1/p1/os-hypervisors?limit=1", version="2.33")
    assert body["hypervisors_links"][0]["href"].startswith(
        "http://localhost/v2.1/p1/os-hypervisors?")


def test_hostname_pattern(api, compute):
    _host("other")
    url = "/v2.1/os-hypervisors/detail?hypervisor_hostname_pattern=OST"
    status, body, _ = api.get(url, version="2.53")
    _check("list_hypervisors_detail", "2.53", status, body)
    assert [h["hypervisor_hostname"] for h in body["hypervisors"]] == \
        ["host1"]
    status, body, _ = api.get("/v2.1/os-hypervisors?"
                              "hypervisor_hostname_pattern=nope",
                              version="2.53")
    assert status == 404
    assert body["itemNotFound"]["message"] == \
        "No hypervisor matching 'nope' could be found."
    status, body, _ = api.get(url + "&limit=1", version="2.53")
    assert status == 400 and "Paging over hypervisors" in \
        body["badRequest"]["message"]
    # before 2.53 the parameter is ignored: every hypervisor
    _, body, _ = api.get(url, version="2.52")
    assert len(body["hypervisors"]) == 2
    status, body, _ = api.get("/v2.1/os-hypervisors/nope/search")
    assert status == 404
    assert api.get("/v2.1/os-hypervisors/nope/servers")[0] == 404


@pytest.mark.parametrize("query", [
    "bogus=1", "limit=-1", "limit=x", "with_servers=maybe",
    "hypervisor_hostname_pattern=a%20b", "limit=1&limit=2"])
def test_bad_query_from_253(api, compute, query):
    status, body, _ = api.get("/v2.1/os-hypervisors?" + query,
                              version="2.53")
    assert status == 400, body
    assert "badRequest" in body


def test_unknown_query_ignored_before_253(api, compute):
    assert api.get("/v2.1/os-hypervisors?bogus=1", version="2.33")[0] == 200
    assert api.get("/v2.1/os-hypervisors/%s?bogus=1" % _ids(api, "2.1")[0]
                   )[0] == 200
    assert api.get("/v2.1/os-hypervisors/%s?bogus=1" % _ids(api)[0],
                   version="2.53")[0] == 400


@pytest.mark.parametrize("version,hyp_id,status", [
    ("2.1", "nope", 404), ("2.1", "999", 404),
    ("2.1", "c8d0c1b8-1f6c-4b8e-a7a1-3c8d8c7e0c11", 404),
    ("2.53", "1", 400), ("2.53", "c8d0c1b8-1f6c-4b8e-a7a1-3c8d8c7e0c11",
                         404)])
def test_show_unknown(api, compute, version, hyp_id, status):
    got, body, _ = api.get("/v2.1/os-hypervisors/" + hyp_id,
                           version=version)
    assert got == status
    expected = "Invalid uuid %s" % hyp_id if status == 400 else \
        "Hypervisor with ID '%s' could not be found." % hyp_id
    assert list(body.values())[0]["message"] == expected
    if version < "2.88":
        assert api.get("/v2.1/os-hypervisors/%s/uptime" % hyp_id,
                       version=version)[0] == status


@pytest.mark.parametrize("path,action", [
    ("", "list"), ("/detail", "list-detail"), ("/1", "show"),
    ("/statistics", "statistics"), ("/1/uptime", "uptime"),
    ("/host1/search", "search"), ("/host1/servers", "servers")])
def test_admin_only(api, compute, path, action):
    status, body, _ = api.get("/v2.1/os-hypervisors" + path, token="u1:p1")
    assert status == 403
    assert body["forbidden"]["message"] == DENIED % action


def test_state_and_status_follow_the_service(api, compute, compute2,
                                             make_server, admin_ctxt):
    make_server()
    _, services, _ = api.get("/v2.1/os-services", version="2.53")
    host2 = [s for s in services["services"] if s["host"] == "host2"][0]
    api.put("/v2.1/os-services/" + host2["id"],
            {"status": "disabled", "disabled_reason": "maintenance"},
            version="2.53")
    _, body, _ = api.get("/v2.1/os-hypervisors/statistics")
    stats = body["hypervisor_statistics"]
    assert stats["count"] == 1 and stats["running_vms"] == 1
    assert stats["memory_mb"] == 8192    # host1's only
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.53")
    hyp2 = body["hypervisors"][1]
    assert hyp2["status"] == "disabled"
    assert hyp2["service"]["disabled_reason"] == "maintenance"
    # host1 goes silent: down, no uptime, and the host is not asked
    service = db_api.service_get_by_host_and_binary(admin_ctxt, "host1",
                                                    "nova-compute")
    db_api.service_update(admin_ctxt, service.uuid, {
        "last_seen_up": datetime.datetime(2000, 1, 1)})
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.88")
    hyp1, hyp2 = body["hypervisors"]
    assert hyp1["state"] == "down" and hyp1["uptime"] is None
    assert hyp2["state"] == "up" and hyp2["uptime"] == UPTIME
    (node1,) = db_api.compute_node_get_all(admin_ctxt, host="host1")
    status, body, _ = api.get("/v2.1/os-hypervisors/%s/uptime" % node1.id)
    assert status == 400
    assert body["badRequest"]["message"] == \
        "Compute service of host1 is unavailable at this time."
    assert compute.uptime_calls == [] and compute2.uptime_calls == ["host2"]


# -- two hosts, each with its own facts --------------------------------------

def _by_name(hypervisors):
    return {h["hypervisor_hostname"]: h for h in hypervisors}


def test_two_hosts_each_with_its_own_facts(api, compute, compute2,
                                           make_server):
    """List, detail, show and search show both hosts, each with the facts
    its own resource tracker reported (not this machine's), and the 2.88
    uptime comes from each host."""
    make_server()
    _, body, _ = api.get("/v2.1/os-hypervisors", version="2.53")
    assert sorted(h["hypervisor_hostname"] for h in body["hypervisors"]) \
        == ["host1", "host2"]
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.87")
    detail = _by_name(body["hypervisors"])
    facts = {name: (h["vcpus"], h["memory_mb"], h["local_gb"],
                    h["disk_available_least"], h["host_ip"],
                    h["running_vms"], h["service"]["host"])
             for name, h in detail.items()}
    assert facts == {"host1": (4, 8192, 100, 90, "192.0.2.10", 1, "host1"),
                     "host2": (8, 16384, 200, 150, "192.0.2.20", 0,
                               "host2")}
    status, body, _ = api.get("/v2.1/os-hypervisors/%s"
                              % detail["host2"]["id"], version="2.87")
    _check("get_hypervisor", "2.87", status, body)
    assert body["hypervisor"]["memory_mb"] == 16384
    _, body, _ = api.get("/v2.1/os-hypervisors/detail?"
                         "hypervisor_hostname_pattern=host2",
                         version="2.53")
    assert [h["host_ip"] for h in body["hypervisors"]] == ["192.0.2.20"]
    _, body, _ = api.get("/v2.1/os-hypervisors/host/search")
    assert len(body["hypervisors"]) == 2
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.88")
    assert [h["uptime"] for h in body["hypervisors"]] == [UPTIME, UPTIME]
    assert compute.uptime_calls == ["host1"]
    assert compute2.uptime_calls == ["host2"]
    _, body, _ = api.get("/v2.1/os-hypervisors/statistics")
    stats = body["hypervisor_statistics"]
    assert (stats["count"], stats["vcpus"], stats["memory_mb"]) == \
        (2, 12, 24576)
