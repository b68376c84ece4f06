"""/os-hypervisors on the real app, checked as tempest's hypervisor_client
checks it.

Every response goes through the schema tempest's ``hypervisor_client``
picks for the microversion (``schema_versions_info``: v2_1, v2_28, v2_33,
v2_53). Tempest 47 has no 2.88 schema (its client uses the 2.53 one at
every later version, and no tempest test asks for 2.88+), so from 2.88
the detail views are checked against tempest's 2.53 schema changed as
nova's API reference says 2.88 changes the view: the resource figures
removed, ``uptime`` (string or null) added and required.

The compute host of the fixtures is ``host1`` (a real heartbeat row);
what the API reads about "this machine" comes from a ``LocalHost`` whose
/proc is a fixture tree and whose commands (``qemu-system-* --version``,
``uptime``) answer canned lines, except in the last test, which reads the
real machine.
"""

import copy
import datetime
import os
import platform
import uuid

import pytest

from ministack import context
from minicompute.db import api as db_api
from miniapi.compute import host_facts
from tests.unit.miniapi import tempest_schemas as ts

CLIENT = "hypervisor_client"
UPTIME = " 10:00:00 up 3 days,  1:02,  1 user,  load average: 0.1, 0.2, 0.3"
QEMU = "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)"
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


@pytest.fixture
def local(app, tmp_path):
    """host1 is "this machine": its facts come from a fixture /proc."""
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "meminfo").write_text("MemTotal:        4028000 kB\n"
                                  "MemFree:          100000 kB\n")
    (proc / "cpuinfo").write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
        "model name\t: AMD EPYC\nphysical id\t: 0\nsiblings\t: 2\n"
        "cpu cores\t: 2\nflags\t\t: sse2 fpu sse\n\nprocessor\t: 1\n"
        "vendor_id\t: AuthenticAMD\nphysical id\t: 0\n")
    calls = []

    def execute(*argv, **kwargs):
        calls.append(argv)
        return (UPTIME + "\n" if "uptime" in argv else QEMU + "\n"), ""

    facts = host_facts.LocalHost("host1", "192.0.2.10", str(tmp_path),
                                 execute=execute, proc=str(proc))
    facts.calls = calls
    app.config["LOCAL_HOST"] = facts
    return facts


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


def _heartbeat(host):
    db_api.service_heartbeat(context.get_admin_context(), host,
                             "nova-compute", "compute")


# -- every view at every boundary, against tempest's schemas ----------------

@pytest.mark.parametrize("version", VERSIONS)
def test_views_match_tempest_schemas(api, local, make_server, version):
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


def test_ids_integer_then_uuid(api, compute):
    _, services, _ = api.get("/v2.1/os-services", version="2.53")
    (service,) = services["services"]
    _, old, _ = api.get("/v2.1/os-hypervisors/detail", version="2.52")
    (old,) = old["hypervisors"]
    assert isinstance(old["id"], int) and isinstance(
        old["service"]["id"], int)
    _, new, _ = api.get("/v2.1/os-hypervisors/detail", version="2.53")
    (new,) = new["hypervisors"]
    assert str(uuid.UUID(new["id"])) == new["id"]
    assert new["service"]["id"] == service["id"]
    # the compute node has its own UUID, stable across requests
    assert new["id"] != service["id"] and _ids(api) == [new["id"]]
    assert api.get("/v2.1/os-hypervisors/%s" % old["id"],
                   version="2.52")[0] == 200
    assert api.get("/v2.1/os-hypervisors/%s" % new["id"].upper(),
                   version="2.53")[0] == 200


def test_figures_from_instances_and_this_machine(api, local, make_server):
    make_server()
    make_server("vm2", vm_state="building")
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.28")
    (hyp,) = body["hypervisors"]
    # m1.nano: 1 vCPU, 128 MB, 1 GB root disk, each
    assert (hyp["running_vms"], hyp["vcpus_used"], hyp["memory_mb_used"],
            hyp["local_gb_used"], hyp["current_workload"]) == \
        (2, 2, 256, 2, 1)
    assert hyp["memory_mb"] == 4028000 // 1024
    assert hyp["free_ram_mb"] == hyp["memory_mb"] - 256
    assert hyp["vcpus"] >= 1
    stat = os.statvfs(local.state_path)
    assert hyp["local_gb"] == stat.f_blocks * stat.f_frsize // 1024 ** 3
    assert hyp["free_disk_gb"] == hyp["local_gb"] - 2
    assert hyp["cpu_info"]["vendor"] == "AMD"
    assert hyp["cpu_info"]["model"] == "AMD EPYC"
    assert hyp["cpu_info"]["arch"] == platform.machine()
    assert hyp["cpu_info"]["features"] == ["fpu", "sse", "sse2"]
    assert hyp["cpu_info"]["topology"]["cores"] == 2
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.27")
    assert body["hypervisors"][0]["cpu_info"].startswith('{"arch"')
    # the QEMU probe runs once per process, not once per request
    assert sum(1 for c in local.calls if "--version" in c) == 1


def test_host_that_is_not_this_machine(api, compute):
    """The default LocalHost is this machine's [DEFAULT] host, not host1."""
    _, body, _ = api.get("/v2.1/os-hypervisors/detail")
    (hyp,) = body["hypervisors"]
    assert (hyp["vcpus"], hyp["memory_mb"], hyp["local_gb"]) == (0, 0, 0)
    assert hyp["host_ip"] is None and hyp["cpu_info"] == ""
    status, body, _ = api.get("/v2.1/os-hypervisors/1/uptime")
    assert status == 501
    assert body["notImplemented"]["message"] == "Feature not supported"
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.88")
    assert body["hypervisors"][0]["uptime"] is None


def test_with_servers(api, make_server, admin_ctxt):
    _heartbeat("host2")
    server_id = make_server()
    url = "/v2.1/os-hypervisors?with_servers=true"
    _, body, _ = api.get(url, version="2.53")
    host1, host2 = body["hypervisors"]
    row = db_api.instance_get(admin_ctxt, server_id)
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


def test_paging(api, compute):
    _heartbeat("host2")
    for version, first in (("2.33", 1), ("2.53", _ids(api)[0])):
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
    _heartbeat("other")
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
    assert api.get("/v2.1/os-hypervisors/1?bogus=1")[0] == 200
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


def test_state_and_status_follow_the_service(api, local, make_server,
                                             admin_ctxt):
    _heartbeat("host2")
    make_server()
    _, services, _ = api.get("/v2.1/os-services", version="2.53")
    host2 = [s for s in services["services"] if s["host"] == "host2"][0]
    api.put("/v2.1/os-services/" + host2["id"],
            {"status": "disabled", "disabled_reason": "maintenance"},
            version="2.53")
    _, body, _ = api.get("/v2.1/os-hypervisors/statistics")
    stats = body["hypervisor_statistics"]
    assert stats["count"] == 1 and stats["running_vms"] == 1
    assert stats["memory_mb"] == 4028000 // 1024
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.53")
    hyp2 = body["hypervisors"][1]
    assert hyp2["status"] == "disabled"
    assert hyp2["service"]["disabled_reason"] == "maintenance"
    # host1 goes silent: down, no uptime
    service = db_api.service_get_by_host_and_binary(admin_ctxt, "host1",
                                                    "nova-compute")
    db_api.service_update(admin_ctxt, service.uuid, {
        "last_seen_up": datetime.datetime(2000, 1, 1)})
    _, body, _ = api.get("/v2.1/os-hypervisors/detail", version="2.88")
    hyp1 = body["hypervisors"][0]
    assert hyp1["state"] == "down" and hyp1["uptime"] is None
    status, body, _ = api.get("/v2.1/os-hypervisors/%s/uptime"
                              % service.id)
    assert status == 400
    assert body["badRequest"]["message"] == \
        "Compute service of host1 is unavailable at this time."
    assert not [c for c in local.calls if "uptime" in c]


def test_local_host_reads_this_machine(tmp_path):
    """The real LocalHost on the machine running the tests."""
    facts = host_facts.LocalHost("me", "127.0.0.1", str(tmp_path / "x"))
    assert facts.is_local("me") and not facts.is_local("other")
    assert facts.vcpus() >= 1
    assert facts.memory_mb() > 0
    total, free = facts.disk_gb()
    assert total >= free >= 0
    assert facts.uptime() is None or " up " in facts.uptime()
    assert facts.cpu_info == {} or facts.cpu_info["arch"] == \
        platform.machine()
    assert isinstance(facts.hypervisor_version, int)
