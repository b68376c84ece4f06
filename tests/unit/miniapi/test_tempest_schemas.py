"""Every compute view miniapi serves, against upstream tempest's schemas.

Each test drives the real app (fake:/ RPC, SQLite, fake Cinder) with
the request a tempest client sends and checks the response exactly as
that client would, with the schema module its ``schema_versions_info``
picks for the microversion (see ``tempest_schemas``). Versions are the
boundaries where a view changes, plus the maximum we serve.
"""

import pytest

from minicompute.db import api as db_api
from ministack import context
from tests.unit.miniapi import tempest_schemas as ts

pytestmark = pytest.mark.usefixtures("_tempest")

SERVER_VERSIONS = ["2.1", "2.3", "2.9", "2.16", "2.19", "2.26", "2.47",
                   "2.63", "2.71", "2.73", "2.79", "2.89", "2.96"]


@pytest.fixture
def _tempest():
    ts.require_tempest()


def _admin(api, method, path, body=None, version=None):
    return api.request(method, path, body, version=version)


# -- versions ---------------------------------------------------------------

def test_versions(api):
    versions = ts.fixed_module("v2_1.versions")
    status, body, _ = api.get("/")
    ts.check(versions.list_versions, status, body)
    for link in body["versions"]:
        path = link["links"][0]["href"].split("localhost", 1)[1]
        status, doc, _ = api.get(path)
        ts.check(versions.get_one_version, status, doc)


# -- flavors ----------------------------------------------------------------

@pytest.mark.parametrize("version", ["2.1", "2.55", "2.61", "2.75", "2.96"])
def test_flavor_views(api, version):
    status, body, _ = api.get("/v2.1/flavors", version=version)
    ts.check_client("flavors_client", "list_flavors", version, status, body)
    status, body, _ = api.get("/v2.1/flavors/detail", version=version)
    ts.check_client("flavors_client", "list_flavors_details", version,
                    status, body)
    status, body, _ = api.get("/v2.1/flavors/42", version=version)
    ts.check_client("flavors_client", "create_update_get_flavor_details",
                    version, status, body)


@pytest.mark.parametrize("version", ["2.1", "2.55", "2.61", "2.75"])
def test_flavor_manage(api, version):
    flavor = {"name": "f-%s" % version, "ram": "1024", "vcpus": 1,
              "disk": 10, "id": 1000 + int(version.split(".")[1]),
              "OS-FLV-EXT-DATA:ephemeral": 10, "swap": 1024,
              "rxtx_factor": 2, "os-flavor-access:is_public": "False"}
    if version >= "2.55":
        flavor["description"] = "a flavor"
    status, body, _ = api.post("/v2.1/flavors", {"flavor": flavor},
                               version=version)
    ts.check_client("flavors_client", "create_update_get_flavor_details",
                    version, status, body)
    flavor_id = body["flavor"]["id"]
    assert flavor_id == str(flavor["id"])
    assert body["flavor"]["ram"] == 1024
    if version == "2.61":
        api.post("/v2.1/flavors/%s/os-extra_specs" % flavor_id,
                 {"extra_specs": {"hw:cpu_policy": "shared"}})
        status, body, _ = api.get("/v2.1/flavors/%s" % flavor_id,
                                  version=version)
        assert body["flavor"]["extra_specs"] == {"hw:cpu_policy": "shared"}
        ts.check_client("flavors_client",
                        "create_update_get_flavor_details", version,
                        status, body)
    if version >= "2.55":
        status, body, _ = api.put("/v2.1/flavors/%s" % flavor_id,
                                  {"flavor": {"description": "new"}},
                                  version=version)
        ts.check_client("flavors_client",
                        "create_update_get_flavor_details", version,
                        status, body)
        assert body["flavor"]["description"] == "new"
    status, body, _ = api.delete("/v2.1/flavors/%s" % flavor_id,
                                 version=version)
    ts.check_client("flavors_client", "delete_flavor", version, status,
                    body)
    assert api.get("/v2.1/flavors/%s" % flavor_id)[0] == 404


def test_flavor_extra_specs(api):
    specs_schema = ts.fixed_module("v2_1.flavors_extra_specs")
    url = "/v2.1/flavors/42/os-extra_specs"
    status, body, _ = api.post(url, {"extra_specs": {
        "hw:numa_nodes": "1", "hw:cpu_policy": "shared", "n": 3}})
    ts.check(specs_schema.set_get_flavor_extra_specs, status, body)
    assert body["extra_specs"]["n"] == "3"
    status, body, _ = api.get(url, token="u1:p1")
    ts.check(specs_schema.set_get_flavor_extra_specs, status, body)
    assert body["extra_specs"] == {"hw:cpu_policy": "shared",
                                   "hw:numa_nodes": "1", "n": "3"}
    status, body, _ = api.get(url + "/hw:numa_nodes", token="u1:p1")
    ts.check(specs_schema.set_get_flavor_extra_specs_key, status, body)
    assert body == {"hw:numa_nodes": "1"}
    status, body, _ = api.put(url + "/hw:numa_nodes",
                              {"hw:numa_nodes": "2"})
    ts.check(specs_schema.set_get_flavor_extra_specs_key, status, body)
    status, body, _ = api.delete(url + "/hw:numa_nodes")
    ts.check(specs_schema.unset_flavor_extra_specs, status, body)
    # the negative cases tempest checks
    assert api.delete(url + "/hw:numa_nodes")[0] == 404
    assert api.get(url + "/nope", token="u1:p1")[0] == 404
    assert api.put(url + "/hw:numa_nodes", {"hw:cpu_policy": "x"})[0] == 400
    assert api.put(url + "/hw:numa_nodes", {"hw:numa_nodes": "1",
                                             "hw:cpu_policy": "x"})[0] == 400
    for method, path, body in (("POST", url, {"extra_specs": {"a": "b"}}),
                               ("PUT", url + "/n", {"n": "4"}),
                               ("DELETE", url + "/n", None)):
        assert api.request(method, path, body, token="u1:p1")[0] == 403


def test_flavor_access(api):
    access_schema = ts.fixed_module("v2_1.flavors_access")
    status, body, _ = api.post("/v2.1/flavors", {"flavor": {
        "name": "private", "ram": 64, "vcpus": 1, "disk": 1,
        "os-flavor-access:is_public": False}})
    flavor_id = body["flavor"]["id"]
    # created without an id: a UUID
    assert len(flavor_id) == 36
    url = "/v2.1/flavors/%s" % flavor_id
    status, body, _ = api.get(url + "/os-flavor-access")
    ts.check(access_schema.add_remove_list_flavor_access, status, body)
    assert body == {"flavor_access": []}
    # invisible to another project until shared with it
    assert api.get(url, token="u1:p2")[0] == 404
    listed = api.get("/v2.1/flavors", token="u1:p2")[1]["flavors"]
    assert flavor_id not in [f["id"] for f in listed]
    status, body, _ = api.post(url + "/action", {
        "addTenantAccess": {"tenant": "p2"}})
    ts.check(access_schema.add_remove_list_flavor_access, status, body)
    assert body["flavor_access"] == [{"flavor_id": flavor_id,
                                      "tenant_id": "p2"}]
    assert api.post(url + "/action", {
        "addTenantAccess": {"tenant": "p2"}})[0] == 409
    listed = api.get("/v2.1/flavors", token="u1:p2")[1]["flavors"]
    assert flavor_id in [f["id"] for f in listed]
    assert api.post(url + "/action", {"removeTenantAccess": {
        "tenant": "p2"}}, token="u1:p2")[0] == 403
    status, body, _ = api.post(url + "/action", {
        "removeTenantAccess": {"tenant": "p2"}})
    ts.check(access_schema.add_remove_list_flavor_access, status, body)
    assert api.post(url + "/action", {"removeTenantAccess": {
        "tenant": "p2"}})[0] == 404
    # a public flavor has no access list
    assert api.get("/v2.1/flavors/42/os-flavor-access")[0] == 404
    assert api.post("/v2.1/flavors/42/action", {
        "addTenantAccess": {"tenant": "p2"}})[0] == 409


# -- services, zones, limits, extensions --------------------------------------

@pytest.mark.parametrize("version", ["2.1", "2.11", "2.53", "2.96"])
def test_services(api, version):
    status, body, _ = api.get("/v2.1/os-services?binary=nova-compute",
                              version=version)
    ts.check_client("services_client", "list_services", version, status,
                    body)
    assert [s["binary"] for s in body["services"]] == ["nova-compute"]


def test_availability_zones(api):
    zones = ts.fixed_module("v2_1.availability_zone")
    status, body, _ = api.get("/v2.1/os-availability-zone", token="u1:p1")
    ts.check(zones.list_availability_zone_list, status, body)
    assert body["availabilityZoneInfo"][0]["zoneName"] == "nova"
    status, body, _ = api.get("/v2.1/os-availability-zone/detail")
    ts.check(zones.list_availability_zone_list_detail, status, body)
    hosts = body["availabilityZoneInfo"][0]["hosts"]
    assert hosts["host1"]["nova-compute"]["available"] is True
    assert api.get("/v2.1/os-availability-zone/detail",
                   token="u1:p1")[0] == 403


@pytest.mark.parametrize("version", ["2.1", "2.36", "2.39", "2.57", "2.96"])
def test_limits(api, make_server, version):
    make_server(token="u1:p1")
    status, body, _ = api.get("/v2.1/limits", token="u1:p1",
                              version=version)
    ts.check_client("limits_client", "get_limit", version, status, body)
    absolute = body["limits"]["absolute"]
    assert absolute["totalInstancesUsed"] == 1
    assert absolute["totalRAMUsed"] == 128
    assert absolute["maxTotalInstances"] == -1
    assert absolute["maxServerMeta"] == 128
    assert absolute.get("maxImageMeta", 128) == 128
    assert api.get("/v2.1/limits?tenant_id=p2", token="u1:p1")[0] == 403


def test_extensions(api):
    extensions = ts.fixed_module("v2_1.extensions")
    status, body, _ = api.get("/v2.1/extensions", token="u1:p1")
    ts.check(extensions.list_extensions, status, body)
    aliases = [e["alias"] for e in body["extensions"]]
    assert aliases == sorted(aliases) and "os-flavor-access" in aliases
    status, body, _ = api.get("/v2.1/extensions/os-volumes")
    assert status == 200 and body["extension"]["alias"] == "os-volumes"
    assert api.get("/v2.1/extensions/nope")[0] == 404


# -- servers ----------------------------------------------------------------

def test_server_create_and_delete(api, compute):
    servers_v21 = ts.fixed_module("v2_1.servers")
    status, body, _ = api.post("/v2.1/servers", {"server": {
        "name": "s1", "imageRef": "6a1e0a38-6f1f-4a9e-9d32-1d4b3f7f0b11",
        "flavorRef": "42", "networks": "none"}}, version="2.37")
    ts.check(servers_v21.create_server_with_admin_pass, status, body)
    server_id = body["server"]["id"]
    db_api.instance_update(context.get_admin_context(), server_id,
                           {"vm_state": "active", "task_state": None})
    status, body, _ = api.delete("/v2.1/servers/%s" % server_id)
    ts.check(servers_v21.delete_server, status, body)


@pytest.mark.parametrize("version", SERVER_VERSIONS)
@pytest.mark.parametrize("token", ["admin:p1", "u1:p1"])
def test_server_views(api, make_server, volumes, version, token):
    server_id = make_server(token=token)
    vol = volumes.add_volume()
    api.post("/v2.1/servers/%s/os-volume_attachments" % server_id,
             {"volumeAttachment": {"volumeId": vol}}, token=token)
    status, body, _ = api.get("/v2.1/servers/%s" % server_id, token=token,
                              version=version)
    ts.check_client("servers_client", "get_server", version, status, body)
    status, body, _ = api.get("/v2.1/servers/detail", token=token,
                              version=version)
    ts.check_client("servers_client", "list_servers_detail", version,
                    status, body)
    status, body, _ = api.get("/v2.1/servers", token=token,
                              version=version)
    ts.check_client("servers_client", "list_servers", version, status,
                    body)


def test_server_in_error_shows_its_fault(api, make_server):
    server_id = make_server(vm_state="error")
    db_api.instance_update(context.get_admin_context(), server_id,
                           {"fault": "Reboot failed: boom"})
    for version in ("2.1", "2.96"):
        status, body, _ = api.get("/v2.1/servers/%s" % server_id,
                                  version=version)
        ts.check_client("servers_client", "get_server", version, status,
                        body)
        assert body["server"]["fault"]["message"] == "Reboot failed: boom"


def test_server_ips(api, make_server):
    servers_v21 = ts.fixed_module("v2_1.servers")
    server_id = make_server(token="u1:p1")
    status, body, _ = api.get("/v2.1/servers/%s/ips" % server_id,
                              token="u1:p1")
    ts.check(servers_v21.list_addresses, status, body)
    assert body == {"addresses": {}}
    assert api.get("/v2.1/servers/%s/ips/private" % server_id,
                   token="u1:p1")[0] == 404
    assert api.get("/v2.1/servers/%s/ips" % server_id,
                   token="u2:p2")[0] == 404


@pytest.mark.parametrize("version", ["2.1", "2.70", "2.79", "2.89",
                                     "2.96"])
def test_volume_attachment_views(api, make_server, volumes, version):
    server_id = make_server()
    vol = volumes.add_volume()
    url = "/v2.1/servers/%s/os-volume_attachments" % server_id
    status, body, _ = api.post(url, {"volumeAttachment": {"volumeId": vol}},
                               version=version)
    ts.check_client("servers_client", "attach_volume", version, status,
                    body)
    status, body, _ = api.get(url, version=version)
    ts.check_client("servers_client", "list_volume_attachments", version,
                    status, body)
    status, body, _ = api.get(url + "/" + vol, version=version)
    ts.check_client("servers_client", "show_volume_attachment", version,
                    status, body)


@pytest.mark.parametrize("version", ["2.1", "2.21", "2.51", "2.58", "2.62",
                                     "2.84", "2.96"])
@pytest.mark.parametrize("token", ["admin:p1", "u1:p1"])
def test_instance_action_views(api, make_server, version, token):
    server_id = make_server(token=token)
    api.post("/v2.1/servers/%s/action" % server_id,
             {"reboot": {"type": "HARD"}}, token=token)
    url = "/v2.1/servers/%s/os-instance-actions" % server_id
    status, body, _ = api.get(url, token=token, version=version)
    ts.check_client("servers_client", "list_instance_actions", version,
                    status, body)
    assert sorted(a["action"] for a in body["instanceActions"]) == \
        ["create", "reboot"]
    request_id = body["instanceActions"][0]["request_id"]
    admin = context.get_admin_context()
    ctxt = context.RequestContext(request_id=request_id, is_admin=True,
                                  project_id="p1")
    db_api.action_event_start(ctxt, server_id, "compute_reboot_instance",
                              "host1")
    db_api.action_event_finish(ctxt, server_id, "compute_reboot_instance",
                               "host1", result="Success")
    del admin
    status, body, _ = api.get(url + "/" + request_id, token=token,
                              version=version)
    ts.check_client("servers_client", "show_instance_action", version,
                    status, body)


# -- os-volumes (the proxy, up to 2.35) --------------------------------------

def test_os_volumes_views(api, volumes):
    vols = ts.fixed_module("v2_1.volumes")
    status, body, _ = api.post("/v2.1/os-volumes", {"volume": {
        "size": 1, "display_name": "v1", "metadata": {"Type": "work"}}},
        token="u1:p1")
    ts.check(vols.create_get_volume, status, body)
    created = body["volume"]
    assert created["displayName"] == "v1"
    assert created["metadata"] == {"Type": "work"}
    status, body, _ = api.get("/v2.1/os-volumes/%s" % created["id"],
                              token="u1:p1")
    ts.check(vols.create_get_volume, status, body)
    shown = body["volume"]
    for path in ("/v2.1/os-volumes", "/v2.1/os-volumes/detail"):
        status, body, _ = api.get(path, token="u1:p1")
        ts.check(vols.list_volumes, status, body)
        assert shown in body["volumes"]
    status, body, _ = api.delete("/v2.1/os-volumes/%s" % created["id"],
                                 token="u1:p1")
    ts.check(vols.delete_volume, status, body)
    assert api.get("/v2.1/os-volumes/%s" % created["id"],
                   token="u1:p1")[0] == 404
