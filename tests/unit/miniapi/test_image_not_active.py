"""A server is not booted nor rebuilt from an image whose data was
never uploaded (``queued``), as nova's ``ImageNotActive``: 400."""

from tests.unit.miniapi import inprocess

QUEUED = "7b2e0a38-6f1f-4a9e-9d32-1d4b3f7f0b12"


def _with_queued(monkeypatch):
    listed = inprocess.FakeImages.list_images()
    monkeypatch.setattr(inprocess.FakeImages, "list_images", staticmethod(
        lambda root=None: listed + [{"id": QUEUED, "name": "empty",
                                     "status": "queued"}]))


def test_boot_from_a_queued_image_is_400(api, compute, monkeypatch):
    _with_queued(monkeypatch)
    status, body, _ = api.post("/v2.1/servers", {"server": {
        "name": "vm", "imageRef": QUEUED, "flavorRef": "42",
        "networks": "none"}})
    assert status == 400, body
    assert body["badRequest"]["message"] == "Image %s is not active." % \
        QUEUED


def test_rebuild_to_a_queued_image_is_400(api, make_server, monkeypatch):
    server_id = make_server()
    _with_queued(monkeypatch)
    status, body, _ = api.post("/v2.1/servers/%s/action" % server_id,
                               {"rebuild": {"imageRef": QUEUED}})
    assert status == 400, body
    assert "is not active" in body["badRequest"]["message"]


def test_the_image_proxy_shows_a_queued_image_saving(api, monkeypatch):
    _with_queued(monkeypatch)
    status, body, _ = api.get("/v2.1/images/%s" % QUEUED, version="2.35")
    assert status == 200, body
    assert (body["image"]["status"], body["image"]["progress"]) == \
        ("SAVING", 25)
    status, body, _ = api.get("/v2.1/images/%s" % inprocess.IMAGE_ID,
                              version="2.35")
    assert (body["image"]["status"], body["image"]["progress"]) == \
        ("ACTIVE", 100)
