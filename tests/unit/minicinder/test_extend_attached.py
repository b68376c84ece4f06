"""3.42: extending an in-use volume, and the 3.71 completion action.

The volume grows in place (the fake driver keeps its export), goes
in-use again at the new size and Nova is told once per server; each
failure ends as upstream: no room where it is -> in-use at the old size,
a backend failure -> error_extending, a target that cannot follow -> the
extend stands.
"""

from minicinder import exception

INSTANCE = "51c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b99"


def _attached(cinder, size=1):
    vol = cinder.create_volume(size=size)
    resp = cinder.post("/volumes/%s/action" % vol, {"os-attach": {
        "instance_uuid": INSTANCE, "mountpoint": "/dev/vdb"}})
    assert resp.status_code == 202, resp.body
    return vol


def _extend(cinder, vol, size, version="3.42"):
    return cinder.post("/volumes/%s/action" % vol,
                       {"os-extend": {"new_size": size}}, version=version)


def test_extend_in_use_volume_tells_nova(cinder, driver, nova):
    vol = _attached(cinder)
    assert _extend(cinder, vol, 2).status_code == 202
    shown = cinder.volume(vol)
    assert (shown["status"], shown["size"]) == ("in-use", 2)
    assert driver.volumes[vol] == 2
    assert "extend_attached_volume" in driver.calls
    assert nova.extended == [([INSTANCE], vol)]


def test_in_use_extend_needs_3_42(cinder, nova):
    vol = _attached(cinder)
    resp = _extend(cinder, vol, 2, version="3.41")
    assert resp.status_code == 400
    assert "must be 'available'" in resp.body["badRequest"]["message"]
    assert cinder.volume(vol)["size"] == 1 and nova.extended == []


def test_no_room_in_place_is_in_use_at_the_old_size(cinder, driver, nova):
    vol = _attached(cinder)
    driver.fail["extend_attached_volume"] = \
        exception.VolumeCannotExtendInPlace(volume_id=vol, new_size=2,
                                            reason="extents taken")
    assert _extend(cinder, vol, 2).status_code == 202
    shown = cinder.volume(vol)
    assert (shown["status"], shown["size"]) == ("in-use", 1)
    assert nova.extended == []


def test_backend_failure_is_error_extending(cinder, driver, nova):
    vol = _attached(cinder)
    driver.fail["extend_attached_volume"] = exception.VolumeBackendError(
        reason="lvextend failed")
    assert _extend(cinder, vol, 2).status_code == 202
    shown = cinder.volume(vol)
    assert (shown["status"], shown["size"]) == ("error_extending", 1)
    assert nova.extended == []


def test_target_update_failure_keeps_the_extend(cinder, driver, nova):
    vol = _attached(cinder)
    driver.fail["extend_attached_volume"] = exception.TargetUpdateFailed(
        volume_id=vol, reason="tgtd refused")
    assert _extend(cinder, vol, 2).status_code == 202
    shown = cinder.volume(vol)
    assert (shown["status"], shown["size"]) == ("in-use", 2)
    assert nova.extended == [([INSTANCE], vol)]


def test_nova_down_leaves_the_volume_grown(cinder, nova):
    vol = _attached(cinder)
    nova.down = True
    assert _extend(cinder, vol, 2).status_code == 202
    shown = cinder.volume(vol)
    assert (shown["status"], shown["size"]) == ("in-use", 2)


def test_extend_volume_completion_at_3_71(cinder):
    vol = _attached(cinder)
    url = "/volumes/%s/action" % vol
    body = {"os-extend_volume_completion": {"error": False}}
    resp = cinder.post(url, body, version="3.70")
    assert resp.status_code == 400
    assert "no such action" in resp.body["badRequest"]["message"]
    member = cinder.as_user("demo")
    assert member.post(url, body, version="3.71").status_code == 403
    resp = cinder.post(url, body, version="3.71")
    assert resp.status_code == 400
    assert "not waiting for an extend" in resp.body["badRequest"]["message"]
    bad = cinder.post(url, {"os-extend_volume_completion": {"x": 1}},
                      version="3.71")
    assert bad.status_code == 400
    assert cinder.volume(vol)["status"] == "in-use"


def test_time_and_quota_filters(cinder):
    vol = cinder.create_volume()
    listed = cinder.get("/volumes?created_at=gte:2000-01-01T00:00:00",
                        version="3.60").body["volumes"]
    assert vol in [v["id"] for v in listed]
    assert cinder.get("/volumes?created_at=lt:2000-01-01T00:00:00",
                      version="3.60").body["volumes"] == []
    assert cinder.get("/volumes?created_at=gte:2000-01-01",
                      version="3.59").status_code == 400
    assert cinder.get("/volumes?created_at=xx:2000-01-01",
                      version="3.60").status_code == 400
    assert cinder.get("/volumes?updated_at=gt:yesterday",
                      version="3.60").status_code == 400
    summary = cinder.get("/volumes/summary?created_at=lt:2000-01-01",
                         version="3.60").body["volume-summary"]
    assert summary["total_count"] == 0
    assert vol in [v["id"] for v in cinder.get(
        "/volumes?consumes_quota=true", version="3.65").body["volumes"]]
    assert cinder.get("/volumes?consumes_quota=false",
                      version="3.65").body["volumes"] == []
    assert cinder.get("/volumes?consumes_quota=true",
                      version="3.64").status_code == 400
