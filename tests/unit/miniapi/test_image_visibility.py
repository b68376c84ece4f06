"""A server's shelve snapshot is private to its project (Glance's
visibility): another project can neither see it nor boot or rebuild
from it; an admin sees it."""

import pytest

from tests.unit.miniapi.inprocess import IMAGE_ID
from tests.unit.miniapi.inprocess import FakeImages

SNAPSHOT_ID = "5d9b7c0e-3c1b-4b7e-9d59-0f3c1c2a4b10"
SNAPSHOT = {"id": SNAPSHOT_ID, "name": "vm9-shelved", "size": 1024,
            "visibility": "private", "owner": "p2",
            "image_type": "snapshot"}
OWNER = "u2:p2"
OTHER = "u1:p1"


@pytest.fixture(autouse=True)
def snapshot(monkeypatch):
    listed = FakeImages.list_images()
    monkeypatch.setattr(FakeImages, "list_images",
                        staticmethod(lambda root=None: listed + [SNAPSHOT]))


def _create(api, image_ref, token):
    return api.post("/v2.1/servers", {"server": {
        "name": "vm", "imageRef": image_ref, "flavorRef": "42",
        "networks": "none"}}, token=token)


def test_another_project_cannot_boot_the_snapshot(api, compute):
    status, body, _ = _create(api, SNAPSHOT_ID, OTHER)
    assert status == 400
    assert body["badRequest"]["message"] == "Can not find requested image"
    # ... nor find it by its name
    assert _create(api, "vm9-shelved", OTHER)[0] == 400


def test_its_project_boots_the_snapshot(api, compute):
    status, body, _ = _create(api, SNAPSHOT_ID, OWNER)
    assert status == 202, body


@pytest.mark.parametrize("token, shown", [(OTHER, False), (OWNER, True),
                                          ("admin:p1", True)])
def test_image_api_shows_it_to_its_project_and_admins(api, token, shown):
    status, _, _ = api.get("/v2.1/images/" + SNAPSHOT_ID, token=token)
    assert status == (200 if shown else 404)
    _, body, _ = api.get("/v2.1/images", token=token)
    ids = [i["id"] for i in body["images"]]
    assert IMAGE_ID in ids
    assert (SNAPSHOT_ID in ids) is shown


def test_another_project_cannot_rebuild_from_it(api, make_server):
    server_id = make_server(token=OTHER)
    status, body, _ = api.post("/v2.1/servers/%s/action" % server_id,
                               {"rebuild": {"imageRef": SNAPSHOT_ID}},
                               token=OTHER)
    assert status == 400
    assert body["badRequest"]["message"] == "Cannot find image for rebuild"
