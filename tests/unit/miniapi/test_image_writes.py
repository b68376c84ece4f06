"""The image API's writes: create, upload, download, delete, as Glance v2
answers them."""

import hashlib
import json
import os

import pytest
from werkzeug.test import Client

from miniapi import image_api

PUBLIC = "11111111-1111-4111-8111-111111111111"
P1 = {"X-Auth-Token": "u:p1"}
P2 = {"X-Auth-Token": "u:p2"}
ADMIN = {"X-Auth-Token": "admin:p2"}
DATA = {"Content-Type": "application/octet-stream"}


@pytest.fixture
def client(tmp_path):
    os.makedirs(tmp_path / PUBLIC)
    (tmp_path / PUBLIC / "d.qcow2").write_bytes(b"base")
    with open(tmp_path / PUBLIC / "image.json", "w") as handle:
        json.dump({"id": PUBLIC, "name": "guest", "disk": "d.qcow2"},
                  handle)
    return Client(image_api.create_app(str(tmp_path),
                                       max_request_body_size=1024,
                                       image_size_cap=4096))


def _create(client, headers=P1, **body):
    return client.post("/v2/images", json=body, headers=headers)


def test_create_upload_download_delete(client, tmp_path):
    resp = _create(client, name="img", disk_format="raw",
                   container_format="bare", min_disk=1, tags=["b", "a"],
                   **{"owner_specified.openstack.md5": "x"})
    assert resp.status_code == 201
    image = resp.get_json()
    assert resp.headers["Location"] == "/v2/images/%s" % image["id"]
    assert (image["status"], image["visibility"], image["owner"]) == \
        ("queued", "shared", "p1")
    assert (image["size"], image["checksum"], image["tags"]) == \
        (None, None, ["a", "b"])
    assert image["owner_specified.openstack.md5"] == "x"
    path = "/v2/images/%s" % image["id"]
    assert client.get(path + "/file", headers=P1).status_code == 204
    payload = b"x" * 2000      # above the API's body limit, below the cap
    resp = client.put(path + "/file", data=payload, headers=dict(P1, **DATA))
    assert resp.status_code == 204
    shown = client.get(path, headers=P1).get_json()
    assert shown["status"] == "active" and shown["size"] == 2000
    assert shown["checksum"] == hashlib.md5(payload).hexdigest()
    assert (shown["os_hash_algo"], shown["os_hash_value"]) == \
        ("sha512", hashlib.sha512(payload).hexdigest())
    got = client.get(path + "/file", headers=P1)
    assert got.status_code == 200 and got.data == payload
    assert got.headers["Content-MD5"] == shown["checksum"]
    # A second upload: the image is no longer queued.
    again = client.put(path + "/file", data=b"y", headers=dict(P1, **DATA))
    assert again.status_code == 409
    assert client.delete(path, headers=P1).status_code == 204
    assert client.get(path, headers=P1).status_code == 404
    assert client.delete(path, headers=P1).status_code == 404
    assert sorted(os.listdir(tmp_path)) == [PUBLIC]


def test_visibility_and_ownership(client):
    image = _create(client, name="mine").get_json()
    path = "/v2/images/%s" % image["id"]
    # Another project does not see a shared image it is no member of.
    assert client.get(path, headers=P2).status_code == 404
    assert client.delete(path, headers=P2).status_code == 404
    assert client.put(path + "/file", data=b"x",
                      headers=dict(P2, **DATA)).status_code == 404
    # A public image is seen by all but deleted by no one else.
    resp = client.delete("/v2/images/%s" % PUBLIC, headers=P2)
    assert resp.status_code == 403
    assert resp.get_json()["forbidden"]["code"] == 403
    assert client.put("/v2/images/%s/file" % PUBLIC, data=b"x",
                      headers=dict(P2, **DATA)).status_code == 403
    assert client.get("/v2/images/%s/file" % PUBLIC,
                      headers=P2).data == b"base"
    # Only an admin publishes; an admin deletes any project's image.
    assert _create(client, visibility="public").status_code == 403
    assert _create(client, headers=ADMIN,
                   visibility="public").status_code == 201
    private = _create(client, visibility="private").get_json()
    assert client.delete("/v2/images/%s" % private["id"],
                         headers=ADMIN).status_code == 204
    protected = _create(client, protected=True).get_json()
    assert client.delete("/v2/images/%s" % protected["id"],
                         headers=P1).status_code == 403


@pytest.mark.parametrize("body, code", [
    ([], 400), ("x", 400), ({"disk_format": "exe"}, 400),
    ({"container_format": 1}, 400), ({"visibility": "world"}, 400),
    ({"min_disk": -1}, 400), ({"min_ram": "1"}, 400),
    ({"protected": "yes"}, 400), ({"tags": "a"}, 400),
    ({"tags": [1]}, 400), ({"name": 5}, 400), ({"name": "x" * 256}, 400),
    ({"id": "not-a-uuid"}, 400), ({"extra": 1}, 400),
    ({"status": "active"}, 403), ({"size": 1}, 403),
    ({"checksum": "x"}, 403), ({"deleted": True}, 403),
    ({"os_glance_import_task": "x"}, 403), ({"owner": "p9"}, 403),
    ({"name": "\ud800"}, 400), ({"x\u0000": "y"}, 400),
    ({"min_disk": float("nan")}, 400), ({"min_disk": True}, 400),
])
def test_bad_create_bodies(client, tmp_path, body, code):
    resp = client.post("/v2/images", data=json.dumps(body), headers=dict(
        P1, **{"Content-Type": "application/json"}))
    assert resp.status_code == code, resp.get_json()
    assert sorted(os.listdir(tmp_path)) == [PUBLIC]


@pytest.mark.parametrize("raw", [b"[" * 5000 + b"]" * 5000, b"{", b"\xff",
                                 b""])
def test_undecodable_create_bodies_are_400(client, tmp_path, raw):
    client = Client(image_api.create_app(str(tmp_path)))
    resp = client.post("/v2/images", data=raw, headers=dict(
        P1, **{"Content-Type": "application/json"}))
    assert resp.status_code == 400, resp.data
    assert sorted(os.listdir(tmp_path)) == [PUBLIC]


def test_id_in_use_is_409_and_bad_upload_leaves_it_queued(client):
    image_id = "55555555-5555-4555-8555-555555555555"
    assert _create(client, id=image_id).status_code == 201
    assert _create(client, id=image_id).status_code == 409
    path = "/v2/images/%s/file" % image_id
    resp = client.put(path, data=b"x", headers=dict(
        P1, **{"Content-Type": "application/json"}))
    assert resp.status_code == 415
    too_big = client.put(path, data=b"x" * 5000, headers=dict(P1, **DATA))
    assert too_big.status_code == 413
    shown = client.get("/v2/images/%s" % image_id, headers=P1).get_json()
    assert (shown["status"], shown["size"]) == ("queued", None)
    assert client.put(path, data=b"ok",
                      headers=dict(P1, **DATA)).status_code == 204


def test_the_registry_keys_cannot_be_set(client, tmp_path):
    """A client's ``kernel`` is a property, never a file the host boots."""
    image = _create(client, kernel="/etc/shadow").get_json()
    assert image["kernel"] == "/etc/shadow"
    from ministack import images
    record = images.get_image(image["id"], root=str(tmp_path))
    assert "kernel" not in record
    assert record["properties"] == {"kernel": "/etc/shadow"}
