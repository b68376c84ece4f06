"""Every minicinder view against upstream tempest's own response schemas.

Tempest (unmodified) validates each response with
``additionalProperties: false``: a key upstream does not return, or one
missing, fails the test and, on a create, leaks the resource. Here each
view is rendered through the real WSGI app at every microversion served
(3.0 to 3.71), for an admin and for a project member, and checked with
the schema tempest's service client picks for that microversion
(imported from the tempest venv, see ``tempest_schemas.py``). Keys that
tempest's schemas leave optional but upstream adds at a given
microversion (group_id 3.13, provider_id 3.21 for admins, shared_targets
and service_uuid 3.48, count 3.45, backend_state 3.49, cluster_name 3.61
for admins, volume_type_id 3.63, consumes_quota 3.65) are checked here
against the microversion too, and each view is checked with the schema
tempest's client picks at that version (``volumes`` changes at 3.61,
3.63, 3.64, 3.65 and 3.69; transfers at 3.55 and 3.57).

A volume is shown and listed at every microversion; the other flows run
at both sides of every microversion at which a view changes
(``GATES``), which is where a view can differ.
"""

import json
import uuid

import pytest

from minicinder import service
from minicinder.db import session as db_session
from minicinder.volume import manager as volume_manager
from minicinder.volume.drivers import fake
from tests.support import minicinder_inprocess as inprocess
from tests.unit.minicinder import tempest_schemas

if not tempest_schemas.available():
    pytest.skip(tempest_schemas.SKIP_REASON, allow_module_level=True)



def _v(version):
    major, minor = version.split(".")
    return int(major), int(minor)


VERSIONS = ["3.%d" % minor for minor in range(0, 72)]
# Microversions at which a response changes (services 3.7 cluster,
# summary 3.12, group_id 3.13, provider_id 3.21, attachments 3.27,
# summary metadata 3.36, count 3.45, shared_targets 3.48, backend_state
# 3.49, mode 3.54, transfers 3.55/3.57/3.59, time filters 3.60, volume
# fields 3.61/3.63/3.64/3.65/3.69, the ceiling 3.71): each, the one
# before, and the floor.
GATES = (7, 12, 13, 21, 27, 36, 45, 48, 49, 54, 55, 57, 59, 60, 61, 63,
         64, 65, 69, 71)
# The schema modules tempest's clients pick, by the first version each
# applies from (volumes_client / transfers_client schema_versions_info).
VOLUME_SCHEMAS = ((69, "v3_69.volumes"), (65, "v3_65.volumes"),
                  (64, "v3_64.volumes"), (63, "v3_63.volumes"),
                  (61, "v3_61.volumes"), (0, "volumes"))
TRANSFER_SCHEMAS = ((57, "v3_57.transfers"), (55, "v3_55.transfers"),
                    (0, "transfers"))


def _schema_at(table, version):
    minor = _v(version)[1]
    return tempest_schemas.volume_schema(
        next(name for first, name in table if minor >= first))
BOUNDARIES = sorted({"3.0"} | {"3.%d" % m for g in GATES
                               for m in (g - 1, g)}, key=lambda v: _v(v))
INSTANCE = "5a5a5a5a-0000-4000-8000-000000000001"
IMAGE = "5a5a5a5a-0000-4000-8000-0000000000aa"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One in-process minicinder (fake driver, SQLite) for the module
    (no volume quota: the module's projects keep many volumes)."""
    state = tmp_path_factory.mktemp("schemas")
    image_dir = state / "images" / IMAGE
    image_dir.mkdir(parents=True)
    (image_dir / "disk.qcow2").write_bytes(b"\0" * 512)
    (image_dir / "image.json").write_text(json.dumps({
        "id": IMAGE, "name": "guest", "disk": "disk.qcow2",
        "disk_format": "qcow2", "min_disk": 1, "min_ram": 64}))
    conf = inprocess.make_conf(quota_volumes=-1, state_path=str(state))
    path = state / "c.sqlite"
    database = db_session.Database("sqlite:///%s" % path)
    database.upgrade()
    svc = service.CinderService(conf, database, fake.FakeDriver(),
                                executor=volume_manager.InlineExecutor(),
                                compute=inprocess.FakeNova())
    admin = inprocess.CinderClient(svc.app)
    member = admin.as_user("demo", roles="member")
    yield admin, member, svc
    svc.stop()


@pytest.fixture(params=["admin", "member"])
def caller(request, world):
    return world[0] if request.param == "admin" else world[1]


def _at(client, version):
    client.version = version
    return client


def check(schema, response):
    tempest_schemas.validate(schema, response)
    return response.body


def _create(client, **extra):
    body = {"volume": dict({"size": 1, "name": "schema-%s" % uuid.uuid4(),
                            "metadata": {"Type": "Test"}}, **extra)}
    volumes = _schema_at(VOLUME_SCHEMAS, client.version or "3.0")
    return check(volumes.create_volume,
                 client.post("/volumes", body))["volume"]


@pytest.fixture(scope="module")
def shown_volume(world):
    """An attached volume of the member's project, made from an image
    (so it has volume_image_metadata), kept for the module."""
    volume_id = _create(world[1], imageRef=IMAGE)["id"]
    response = world[1].post("/volumes/%s/action" % volume_id, {
        "os-attach": {"instance_uuid": INSTANCE, "mountpoint": "/dev/vdc"}})
    assert response.status_code == 202, response.body
    return volume_id


@pytest.mark.parametrize("version", VERSIONS)
def test_volume_show_and_list_at_every_microversion(caller, version,
                                                    shown_volume):
    schema = _schema_at(VOLUME_SCHEMAS, version)
    client = _at(caller, version)
    shown = check(schema.show_volume,
                  client.get("/volumes/%s" % shown_volume))["volume"]
    assert shown["attachments"] and shown["volume_image_metadata"]
    _check_versioned_keys(shown, version, client.user == "admin")
    check(schema.list_volumes_no_detail, client.get("/volumes?limit=1"))
    detail = check(schema.list_volumes_with_detail,
                   client.get("/volumes/detail?limit=1"))
    _check_versioned_keys(detail["volumes"][0], version,
                          client.user == "admin")


@pytest.mark.parametrize("version", BOUNDARIES)
def test_volume_views(caller, version):
    """create, show, update, list (summary and detail, paged) and delete,
    with an attachment shown, as tempest's volumes client checks them."""
    schema = _schema_at(VOLUME_SCHEMAS, version)
    client = _at(caller, version)
    admin = client.as_user("admin")
    created = _create(client)
    assert "os-vol-tenant-attr:tenant_id" not in created
    shown = check(schema.show_volume,
                  client.get("/volumes/%s" % created["id"]))["volume"]
    _check_versioned_keys(shown, version, client.user == "admin")
    assert "os-vol-tenant-attr:tenant_id" in shown
    assert ("os-vol-host-attr:host" in shown) == (client.user == "admin")
    updated = client.put("/volumes/%s" % created["id"],
                         {"volume": {"name": "renamed"}})
    # Upstream's update renders the detail view, with the keys of 3.61+;
    # tempest's update schema has none of them (its update test runs
    # at 3.0): they are checked here, then left out.
    _check_versioned_keys(updated.body["volume"], version,
                          client.user == "admin")
    for key in ("cluster_name", "volume_type_id", "consumes_quota"):
        updated.body["volume"].pop(key, None)
    check(schema.update_volume, updated)
    check(schema.attach_volume, client.post(
        "/volumes/%s/action" % created["id"],
        {"os-attach": {"instance_uuid": INSTANCE,
                       "mountpoint": "/dev/vdb"}}))
    attached = check(schema.show_volume,
                     client.get("/volumes/%s" % created["id"]))["volume"]
    assert attached["attachments"][0]["server_id"] == INSTANCE
    page = check(schema.list_volumes_no_detail,
                 client.get("/volumes?limit=1"))
    assert page["volumes_links"][0]["rel"] == "next"
    detail = check(schema.list_volumes_with_detail,
                   client.get("/volumes/detail?limit=2&sort=id:asc"))
    for volume in detail["volumes"]:
        _check_versioned_keys(volume, version, client.user == "admin")
    counted = client.get("/volumes?with_count=true")
    assert ("count" in counted.body) == (_v(version) >= (3, 45))
    check(schema.detach_volume, client.post(
        "/volumes/%s/action" % created["id"], {"os-detach": {}}))
    check(schema.delete_volume, client.delete("/volumes/%s" % created["id"]))
    assert admin.get("/volumes/%s" % created["id"]).status_code == 404


def _check_versioned_keys(volume, version, is_admin):
    at = _v(version)
    assert ("group_id" in volume) == (at >= (3, 13))
    assert ("provider_id" in volume) == (is_admin and at >= (3, 21))
    assert ("shared_targets" in volume) == (at >= (3, 48))
    assert ("service_uuid" in volume) == (at >= (3, 48))
    assert ("migration_status" in volume) == is_admin
    assert ("cluster_name" in volume) == (is_admin and at >= (3, 61))
    assert ("volume_type_id" in volume) == (at >= (3, 63))
    assert "encryption_key_id" not in volume   # never encrypted here
    assert ("consumes_quota" in volume) == (at >= (3, 65))


@pytest.mark.parametrize("version", BOUNDARIES)
def test_volume_actions_and_metadata(caller, version):
    # tempest's actions and metadata calls check the base schemas.
    schema = tempest_schemas.volume_schema("volumes")
    client = _at(caller, version)
    admin = _at(client.as_user("admin"), version)
    volume_id = _create(client)["id"]
    url = "/volumes/%s" % volume_id

    def act(name, args, schema_name):
        return check(getattr(schema, schema_name), client.post(
            url + "/action", {name: args}))

    act("os-reserve", {}, "reserve_volume")
    act("os-unreserve", {}, "unreserve_volume")
    act("os-set_bootable", {"bootable": True}, "set_bootable_volume")
    act("os-update_readonly_flag", {"readonly": True},
        "update_volume_readonly")
    shown = client.get(url).body["volume"]
    assert shown["bootable"] == "true"
    assert shown["metadata"]["readonly"] == "True"
    act("os-update_readonly_flag", {"readonly": False},
        "update_volume_readonly")
    act("os-extend", {"new_size": 2}, "extend_volume")
    act("os-set_image_metadata", {"metadata": {"image_name": "n"}},
        "update_volume_image_metadata")
    act("os-show_image_metadata", {}, "show_volume_image_metadata")
    act("os-unset_image_metadata", {"key": "image_name"},
        "delete_volume_image_metadata")
    assert client.get(url).body["volume"]["size"] == 2
    check(schema.create_volume_metadata, client.post(
        url + "/metadata", {"metadata": {"k1": "v1", "k2": "v2"}}))
    check(schema.show_volume_metadata, client.get(url + "/metadata"))
    check(schema.update_volume_metadata, client.put(
        url + "/metadata", {"metadata": {"k1": "v1"}}))
    check(schema.show_volume_metadata_item, client.get(url + "/metadata/k1"))
    check(schema.update_volume_metadata_item, client.put(
        url + "/metadata/k1", {"meta": {"k1": "v9"}}))
    check(schema.delete_volume_metadata_item,
          client.delete(url + "/metadata/k1"))
    check(schema.reset_volume_status, admin.post(
        url + "/action", {"os-reset_status": {"status": "error"}}))
    check(schema.force_delete_volume, admin.post(
        url + "/action", {"os-force_delete": {}}))
    if _v(version) >= (3, 12):
        summary = check(schema.show_volume_summary,
                        client.get("/volumes/summary"))["volume-summary"]
        assert ("metadata" in summary) == (_v(version) >= (3, 36))


@pytest.mark.parametrize("version", BOUNDARIES)
def test_volume_type_views(world, version):
    schema = tempest_schemas.volume_schema("volume_types")
    admin, member = (_at(client, version) for client in world[:2])
    created = check(schema.create_volume_type, admin.post("/types", {
        "volume_type": {"name": "type-%s" % uuid.uuid4(),
                        "description": "d",
                        "extra_specs": {"spec1": "v1"}}}))["volume_type"]
    url = "/types/%s" % created["id"]
    for client in (admin, member):
        check(schema.show_volume_type, client.get(url))
        check(schema.show_volume_type, client.get("/types/default"))
        check(schema.list_volume_types, client.get("/types"))
        check(schema.list_volume_types_extra_specs,
              client.get(url + "/extra_specs"))
    check(schema.update_volume_types, admin.put(url, {"volume_type": {
        "name": "renamed-%s" % uuid.uuid4(), "is_public": True}}))
    check(schema.create_volume_types_extra_specs, admin.post(
        url + "/extra_specs", {"extra_specs": {"spec2": "v2"}}))
    check(schema.show_volume_types_extra_specs,
          admin.get(url + "/extra_specs/spec2"))
    check(schema.update_volume_type_extra_specs, admin.put(
        url + "/extra_specs/spec2", {"spec2": "v3"}))
    check(schema.delete_volume_types_extra_specs,
          admin.delete(url + "/extra_specs/spec2"))
    check(schema.delete_volume_type, admin.delete(url))


@pytest.mark.parametrize("version", BOUNDARIES)
def test_service_views(world, version):
    admin = _at(world[0], version)
    world[2].service_record.report()   # the heartbeat start() would run
    module = "v3_7.services" if _v(version) >= (3, 7) else "services"
    schema = tempest_schemas.volume_schema(module)
    services = check(schema.list_services,
                     admin.get("/os-services"))["services"]
    volume_service = next(s for s in services
                          if s["binary"] == "cinder-volume")
    assert volume_service["host"] == "unit-host@lvmdriver-1"
    assert volume_service["state"] == "up"
    assert ("backend_state" in volume_service) == (_v(version) >= (3, 49))
    body = {"host": volume_service["host"], "binary": "cinder-volume"}
    check(schema.disable_service,
          admin.put("/os-services/disable", body))
    check(schema.disable_log_reason, admin.put(
        "/os-services/disable-log-reason",
        dict(body, disabled_reason="maintenance")))
    check(schema.enable_service, admin.put("/os-services/enable", body))
    check(schema.freeze_host, admin.put("/os-services/freeze",
                                        {"host": "unit-host"}))
    check(schema.thaw_host, admin.put("/os-services/thaw",
                                      {"host": "unit-host"}))


@pytest.mark.parametrize("version", BOUNDARIES)
def test_limits_extensions_quotas_versions(caller, version):
    client = _at(caller, version)
    admin = _at(client.as_user("admin"), version)
    check(tempest_schemas.volume_schema("limits").show_limits,
          client.get("/limits"))
    check(tempest_schemas.volume_schema("extensions").list_extensions,
          client.get("/extensions"))
    quotas = tempest_schemas.volume_schema("quotas")
    project = client.project
    check(quotas.show_quota_set, client.get("/os-quota-sets/%s" % project))
    check(quotas.show_quota_set_usage,
          client.get("/os-quota-sets/%s?usage=True" % project))
    check(quotas.show_quota_set,
          client.get("/os-quota-sets/%s/defaults" % project))
    check(quotas.update_quota_set, admin.put(
        "/os-quota-sets/%s" % project, {"quota_set": {"volumes": 50}}))
    check(quotas.delete_quota_set,
          admin.delete("/os-quota-sets/%s" % project))
    versions = tempest_schemas.volume_schema("versions")
    listed = check(versions.list_versions, client.get("/", version=None))
    assert [v["id"] for v in listed["versions"]] == ["v3.0"]
    check(versions.volume_api_version_details, client.get("/v3/"))
    zones = client.get("/os-availability-zone").body
    assert zones == {"availabilityZoneInfo": [
        {"zoneName": "nova", "zoneState": {"available": True}}]}


@pytest.mark.parametrize("version", BOUNDARIES)
def test_transfer_and_type_access_views(world, version):
    schema = _schema_at(TRANSFER_SCHEMAS, version)
    types = tempest_schemas.volume_schema("volume_types")
    admin, member = (_at(client, version) for client in world[:2])
    receiver = _at(admin.as_user("alt", project="alt-project",
                                 roles="member"), version)
    volume_id = _create(member)["id"]
    created = check(schema.create_volume_transfer, member.post(
        "/os-volume-transfer", {"transfer": {"volume_id": volume_id}}))
    transfer = created["transfer"]
    url = "/os-volume-transfer/%s" % transfer["id"]
    check(schema.show_volume_transfer, member.get(url))
    check(schema.list_volume_transfers_no_detail,
          member.get("/os-volume-transfer"))
    check(schema.list_volume_transfers_with_detail,
          member.get("/os-volume-transfer/detail"))
    check(schema.accept_volume_transfer, receiver.post(
        url + "/accept", {"accept": {"auth_key": transfer["auth_key"]}}))
    second = check(schema.create_volume_transfer, receiver.post(
        "/os-volume-transfer", {"transfer": {"volume_id": volume_id}}))
    check(schema.delete_volume_transfer, receiver.delete(
        "/os-volume-transfer/%s" % second["transfer"]["id"]))
    private = admin.post("/types", {"volume_type": {
        "name": "private-%s" % uuid.uuid4(),
        "os-volume-type-access:is_public": False}}).body["volume_type"]
    check(types.add_type_access, admin.post(
        "/types/%s/action" % private["id"],
        {"addProjectAccess": {"project": member.project}}))
    check(types.list_type_access, admin.get(
        "/types/%s/os-volume-type-access" % private["id"]))
    check(types.remove_type_access, admin.post(
        "/types/%s/action" % private["id"],
        {"removeProjectAccess": {"project": member.project}}))


@pytest.mark.parametrize("version", [v for v in BOUNDARIES
                                     if _v(v) >= (3, 55)])
def test_volume_transfers_route_views(world, version):
    """The 3.55 ``volume-transfers`` API, as tempest's mv355 client
    checks it: no_snapshots kept, the 3.57 history fields, 3.59 paging."""
    schema = _schema_at(TRANSFER_SCHEMAS, version)
    admin, member = (_at(client, version) for client in world[:2])
    receiver = _at(admin.as_user("alt", project="alt-project",
                                 roles="member"), version)
    volume_id = _create(member)["id"]
    transfer = check(schema.create_volume_transfer, member.post(
        "/volume-transfers", {"transfer": {
            "volume_id": volume_id, "no_snapshots": True}}))["transfer"]
    assert transfer["no_snapshots"] is True
    assert ("accepted" in transfer) == (_v(version) >= (3, 57))
    url = "/volume-transfers/%s" % transfer["id"]
    shown = check(schema.show_volume_transfer, member.get(url))["transfer"]
    assert shown["no_snapshots"] is True
    assert shown["links"][0]["href"].endswith(url)
    check(schema.list_volume_transfers_no_detail,
          member.get("/volume-transfers"))
    listed = check(schema.list_volume_transfers_with_detail,
                   member.get("/volume-transfers/detail"))["transfers"]
    assert transfer["id"] in [t["id"] for t in listed]
    if _v(version) >= (3, 59):
        page = member.get("/volume-transfers?limit=1&sort=created_at:asc")
        assert len(page.body["transfers"]) == 1
        assert page.body["transfers_links"][0]["rel"] == "next"
        assert member.get("/volume-transfers?offset=x").status_code == 400
    else:
        assert member.get("/volume-transfers?limit=1").status_code == 400
    check(schema.accept_volume_transfer, receiver.post(
        url + "/accept", {"accept": {"auth_key": transfer["auth_key"]}}))
    if _v(version) >= (3, 57):
        history = admin.get("/volume-transfers/detail?all_tenants=1")
        assert transfer["id"] not in [t["id"] for t in
                                      history.body["transfers"]]
    second = check(schema.create_volume_transfer, receiver.post(
        "/os-volume-transfer", {"transfer": {"volume_id": volume_id}}))
    assert second["transfer"]["no_snapshots"] is False
    check(schema.delete_volume_transfer, receiver.delete(
        "/volume-transfers/%s" % second["transfer"]["id"]))


def test_volume_transfers_route_needs_3_55(world):
    member = _at(world[1], "3.54")
    assert member.get("/volume-transfers").status_code == 404
    legacy = member.post("/os-volume-transfer", {"transfer": {
        "volume_id": str(uuid.uuid4()), "no_snapshots": True}})
    assert legacy.status_code == 400
