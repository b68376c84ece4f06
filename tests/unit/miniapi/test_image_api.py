"""The read-only Glance v2 subset served next to the compute API."""

import json
import os

import pytest

from miniapi import image_api

IMAGES = [("11111111-1111-4111-8111-111111111111", "guest-a"),
          ("22222222-2222-4222-8222-222222222222", "guest-b")]


@pytest.fixture
def client(tmp_path):
    for image_id, name in IMAGES:
        os.makedirs(tmp_path / image_id)
        with open(tmp_path / image_id / "image.json", "w") as handle:
            json.dump({"id": image_id, "name": name, "disk": "d.qcow2",
                       "disk_format": "qcow2", "min_disk": 1}, handle)
    app = image_api.create_app(str(tmp_path))
    from werkzeug.test import Client
    return Client(app)


def test_discovery(client):
    resp = client.get("/")
    assert resp.status_code == 300
    assert resp.get_json()["versions"][0]["links"][0]["href"] == \
        "http://localhost/v2/"


def test_list_filters_and_show(client):
    body = client.get("/v2/images", headers={"X-Auth-Token": "u:p"}
                      ).get_json()
    assert [i["name"] for i in body["images"]] == ["guest-a", "guest-b"]
    assert body["images"][0]["status"] == "active"
    by_name = client.get("/v2/images?name=guest-b").get_json()["images"]
    assert [i["id"] for i in by_name] == [IMAGES[1][0]]
    by_ids = client.get("/v2/images?id=in:%s,x" % IMAGES[0][0]).get_json()
    assert [i["name"] for i in by_ids["images"]] == ["guest-a"]
    page = client.get("/v2/images?limit=1&marker=%s" % IMAGES[0][0])
    assert [i["name"] for i in page.get_json()["images"]] == ["guest-b"]
    shown = client.get("/v2/images/%s" % IMAGES[0][0]).get_json()
    assert shown["name"] == "guest-a" and shown["visibility"] == "public"


def test_name_lookup_is_404_and_bad_paging_400(client):
    """OSC looks up by name with a direct GET first: it must be 404."""
    resp = client.get("/v2/images/guest-a")
    assert resp.status_code == 404
    assert resp.get_json()["itemNotFound"]["code"] == 404
    assert client.get("/v2/images?limit=x").status_code == 400
    assert client.get("/v2/images?marker=nope").status_code == 400


def test_a_shelve_snapshot_is_private_to_its_project(client, tmp_path):
    from ministack import images
    disk = tmp_path / "scratch-disk"
    disk.write_bytes(b"qcow")
    snap = images.register_snapshot(
        {"id": "33333333-3333-4333-8333-333333333333",
         "name": "vm-shelved", "owner": "p1", "visibility": "private",
         "instance_uuid": "44444444-4444-4444-8444-444444444444"},
        {"disk": str(disk)}, root=str(tmp_path))
    path = "/v2/images/%s" % snap["id"]
    shown = client.get(path, headers={"X-Auth-Token": "u:p1"}).get_json()
    assert (shown["visibility"], shown["owner"]) == ("private", "p1")
    assert shown["image_type"] == "snapshot"
    assert shown["instance_uuid"] == snap["instance_uuid"]
    listed = client.get("/v2/images?name=vm-shelved",
                        headers={"X-Auth-Token": "u:p1"}).get_json()
    assert [i["id"] for i in listed["images"]] == [snap["id"]]
    other = {"X-Auth-Token": "u:p2"}
    assert client.get(path, headers=other).status_code == 404
    assert client.get("/v2/images?name=vm-shelved",
                      headers=other).get_json()["images"] == []
    assert client.get(path, headers={
        "X-Auth-Token": "admin:p2"}).status_code == 200
