"""Bad or hostile input to the compute API: always nova's 4xx fault, never
a 500 (issue 11). The real app in-process (conftest); the same attacks run
against the deployed lab in tests/security/ (test_attachment_pairs,
test_project_boundaries, test_never_a_500, test_request_body_limit)."""

import pytest

from tests.unit.miniapi.inprocess import IMAGE_ID


def _server(**extra):
    server = {"name": "vm", "imageRef": IMAGE_ID, "flavorRef": "42",
              "networks": "none"}
    server.update(extra)
    return {"server": server}


@pytest.mark.parametrize("count", ["9" * 5000, "0" * 5000 + "2", 2, "2"])
def test_min_and_max_count_other_than_one_are_400(api, count):
    for key in ("min_count", "max_count"):
        status, body, _ = api.post("/v2.1/servers", _server(**{key: count}))
        assert status == 400, body
        message = body["badRequest"]["message"]
        assert message.startswith("Only one server per request")
        assert len(message) < 300
    assert api.get("/v2.1/servers")[1]["servers"] == []


def test_count_of_one_in_any_spelling_boots(api):
    status, body, _ = api.post("/v2.1/servers",
                               _server(min_count="001", max_count=1))
    assert status == 202, body


def test_a_5000_digit_integer_is_a_malformed_body(api):
    raw = ('{"server": {"name": "vm", "imageRef": "%s", "flavorRef": "42", '
           '"networks": "none", "min_count": %s}}' % (IMAGE_ID, "9" * 5000))
    status, body, _ = api.post("/v2.1/servers", raw=raw)
    assert status == 400
    assert body["badRequest"]["message"] == "Malformed request body"


@pytest.mark.parametrize("escape", ["\\ud800", "x\\udc00", "a\\u0000"])
def test_unstorable_name_is_400_on_create_and_update(api, make_server,
                                                     escape):
    raw = ('{"server": {"name": "%s", "imageRef": "%s", "flavorRef": "42", '
           '"networks": "none"}}' % (escape, IMAGE_ID))
    status, body, _ = api.post("/v2.1/servers", raw=raw)
    assert status == 400, body
    assert body["badRequest"]["message"].startswith(
        "Invalid input for field/attribute name.")
    server_id = make_server(name="kept")
    status, body, _ = api.put("/v2.1/servers/%s" % server_id,
                              raw='{"server": {"name": "%s"}}' % escape)
    assert status == 400, body
    assert api.get("/v2.1/servers/%s" % server_id)[1]["server"][
        "name"] == "kept"


@pytest.mark.parametrize("headers", [
    {"OpenStack-API-Version": "compute 2." + "1" * 5000},
    {"OpenStack-API-Version": "compute " + "2" * 5000 + ".1"},
    {"X-OpenStack-Nova-API-Version": "2." + "1" * 5000},
])
def test_huge_microversion_is_406(api, headers):
    status, body, _ = api.get("/v2.1/servers", headers=headers)
    assert status == 406, body
    message = body["notAcceptable"]["message"]
    assert message.startswith("Version 2") and len(message) < 300


def test_body_limit_is_oslo_middlewares(api):
    limit = 114688
    template = ('{"server": {"name": "%s", "imageRef": "x", '
                '"flavorRef": "42"}}')
    body = template % ("n" * (limit - len(template) + 2))
    assert len(body) == limit
    status, payload, _ = api.post("/v2.1/servers", raw=body)
    assert status == 400, payload   # a name too long, but read
    status, payload, headers = api.post("/v2.1/servers", raw=body + " ")
    assert status == 413
    assert payload == {"overLimit": {"code": 413, "message": (
        "Request is too large. Larger than max_request_body_size "
        "(114688).")}}
    assert "x-compute-request-id" in headers


def test_body_limit_follows_the_option(conf, engine, compute, volumes,
                                       monkeypatch):
    from miniapi import app as app_mod
    from miniapi.compute import images as images_adapter
    from tests.unit.miniapi import inprocess
    monkeypatch.setattr(images_adapter, "_images_module",
                        lambda: inprocess.FakeImages)
    conf.set_override("max_request_body_size", 2048,
                      group="oslo_middleware")
    client = inprocess.APIClient(app_mod.create_app(
        conf, transport=compute.transport, engine=engine,
        volume_api=volumes).test_client())
    assert client.post("/v2.1/servers", raw="x" * 2049)[0] == 413
    assert client.post("/v2.1/servers", raw="x" * 2048)[0] == 400


def test_image_api_refuses_large_bodies(tmp_path):
    """A large body is refused (413) as glance's pipeline does, rather
    than received for nothing (an image's data has its own cap)."""
    from werkzeug.test import Client

    from miniapi import image_api
    client = Client(image_api.create_app(str(tmp_path)))
    assert client.post("/v2/images", data="x" * 114688).status_code == 400
    resp = client.post("/v2/images", data="x" * 114689)
    assert resp.status_code == 413
    assert resp.get_json()["overLimit"]["message"] == (
        "Request is too large. Larger than max_request_body_size "
        "(114688).")
    small = Client(image_api.create_app(str(tmp_path),
                                        max_request_body_size=2048))
    assert small.post("/v2/images", data="x" * 2049).status_code == 413
