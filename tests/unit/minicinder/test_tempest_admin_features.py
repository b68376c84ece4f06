"""What upstream tempest's volume tests exercise of the admin and
project-to-project APIs: services (disable, freeze), volume transfers,
volume type access and updates (fake driver, in-process app)."""

from tests.unit.minicinder.tempest_actions import fault as _fault


def test_services_disable_freeze(cinder):
    services = cinder.get("/os-services?host=unit-host").body["services"]
    assert [(s["binary"], s["host"]) for s in services] == [
        ("cinder-volume", "unit-host@lvmdriver-1")]
    assert cinder.get("/os-services?binary=cinder-scheduler").body == {
        "services": []}
    _fault(cinder.as_user("bob").get("/os-services"), 403)
    body = {"host": "unit-host@lvmdriver-1", "binary": "cinder-volume"}
    _fault(cinder.put("/os-services/enable", dict(body, host="nope")), 404)
    _fault(cinder.put("/os-services/disable", dict(body, binary="x")), 404)
    _fault(cinder.put("/os-services/disable-log-reason", body), 400)
    _fault(cinder.put("/os-services/freeze", {"host": "nope"}), 400)
    assert cinder.put("/os-services/disable-log-reason", dict(
        body, disabled_reason="maintenance")).status_code == 200
    [service] = cinder.get("/os-services").body["services"]
    assert (service["status"], service["disabled_reason"]) == (
        "disabled", "maintenance")
    zones = cinder.get("/os-availability-zone").body
    assert zones["availabilityZoneInfo"][0]["zoneState"] == {
        "available": False}
    # No backend takes new volumes: upstream's "No valid backend".
    vol = cinder.create_volume()
    assert cinder.volume(vol)["status"] == "error"
    assert cinder.put("/os-services/enable", body).status_code == 200
    assert cinder.volume(cinder.create_volume())["status"] == "available"
    assert cinder.put("/os-services/freeze", {"host": "unit-host"}) \
        .status_code == 200
    [service] = cinder.get("/os-services").body["services"]
    assert service["frozen"] is True


def test_transfer(cinder):
    giver = cinder.as_user("giver", project="p-giver")
    taker = cinder.as_user("taker", project="p-taker")
    vol = giver.create_volume()
    created = giver.post("/os-volume-transfer", {"transfer": {
        "volume_id": vol, "name": "gift"}}).body["transfer"]
    url = "/os-volume-transfer/%s" % created["id"]
    assert giver.volume(vol)["status"] == "awaiting-transfer"
    _fault(giver.delete("/volumes/%s" % vol), 400)
    _fault(taker.get(url), 404)
    assert taker.get("/os-volume-transfer").body == {"transfers": []}
    _fault(taker.post(url + "/accept", {"accept": {"auth_key": "x"}}), 400)
    accepted = taker.post(url + "/accept", {"accept": {
        "auth_key": created["auth_key"]}})
    assert accepted.status_code == 202
    moved = taker.volume(vol)
    assert (moved["status"], moved["user_id"],
            moved["os-vol-tenant-attr:tenant_id"]) == (
        "available", "taker", "p-taker")
    _fault(giver.get("/volumes/%s" % vol), 404)
    _fault(taker.get(url), 404)
    again = taker.post("/os-volume-transfer", {"transfer": {
        "volume_id": vol}}).body["transfer"]
    assert taker.delete("/os-volume-transfer/%s" % again["id"]) \
        .status_code == 202
    assert taker.volume(vol)["status"] == "available"


def test_type_access(cinder):
    member = cinder.as_user("demo")
    private = cinder.post("/types", {"volume_type": {
        "name": "private", "os-volume-type-access:is_public": False}}) \
        .body["volume_type"]
    _fault(member.post("/volumes", {"volume": {
        "size": 1, "volume_type": private["id"]}}), 404)
    assert private["id"] not in [
        t["id"] for t in member.get("/types").body["volume_types"]]
    action = "/types/%s/action" % private["id"]
    add = {"addProjectAccess": {"project": member.project}}
    assert cinder.post(action, add).status_code == 202
    _fault(cinder.post(action, add), 409)
    _fault(member.post(action, add), 403)
    assert private["id"] in [
        t["id"] for t in member.get("/types").body["volume_types"]]
    vol = member.post("/volumes", {"volume": {
        "size": 1, "volume_type": private["id"]}}).body["volume"]
    assert vol["volume_type"] == "private"
    assert cinder.get("/types/%s/os-volume-type-access" % private["id"]) \
        .body == {"volume_type_access": [{"volume_type_id": private["id"],
                                          "project_id": member.project}]}
    _fault(cinder.get("/types/%s/os-volume-type-access"
                      % cinder.get("/types/default").body["volume_type"][
                          "id"]), 404)
    remove = {"removeProjectAccess": {"project": member.project}}
    assert cinder.post(action, remove).status_code == 202
    _fault(cinder.post(action, remove), 404)


def test_type_update_and_extra_spec_keys(cinder):
    vtype = cinder.post("/types", {"volume_type": {
        "name": "silver", "extra_specs": {"k": "v"}}}).body["volume_type"]
    url = "/types/%s" % vtype["id"]
    _fault(cinder.post("/types", {"volume_type": {"name": "  "}}), 400)
    _fault(cinder.post("/types", {"volume_type": {"name": "silver"}}), 409)
    _fault(cinder.put(url, {"volume_type": {}}), 400)
    updated = cinder.put(url, {"volume_type": {
        "name": "bronze", "description": "d", "is_public": False}}).body
    assert updated["volume_type"]["is_public"] is False
    default = cinder.get("/types/default").body["volume_type"]["id"]
    _fault(cinder.put("/types/%s" % default, {"volume_type": {
        "name": "renamed"}}), 400)
    assert cinder.get(url + "/extra_specs/k").body == {"k": "v"}
    _fault(cinder.get(url + "/extra_specs/nope"), 404)
    _fault(cinder.put(url + "/extra_specs/k", {"other": "v"}), 400)
    assert cinder.put(url + "/extra_specs/k", {"k": "w"}).body == {"k": "w"}
    assert cinder.delete(url + "/extra_specs/k").status_code == 202
    _fault(cinder.delete(url + "/extra_specs/k"), 404)
