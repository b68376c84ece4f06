"""The compute API under ``auth_strategy = keystone``: who sees what.

The real app in-process (conftest's fixtures) behind keystonemiddleware's
auth_token, whose call to keystone is answered by
``tests/unit/fake_keystone.py``. Policy: project isolation (404 and
absent from lists), all_tenants and os-services for admins only (403),
host fields for admins only, and 401 with keystonemiddleware's body for
missing or bad tokens.
"""

import pytest

from miniapi import app as app_mod
from miniapi.compute import images as images_adapter
from tests.unit import fake_keystone
from tests.unit.miniapi import inprocess

ADMIN = "unit-admin-token"
DEMO = "unit-demo-token"


@pytest.fixture
def kapi(conf, engine, compute, volumes, monkeypatch):
    monkeypatch.setattr(images_adapter, "_images_module",
                        lambda: inprocess.FakeImages)
    keystone = fake_keystone.FakeKeystone(monkeypatch)
    keystone.issue("u-admin", "p-admin", ["admin", "member", "reader"],
                   user_name="admin", project_name="admin", token_id=ADMIN)
    keystone.issue("u-demo", "p-demo", ["member", "reader"],
                   user_name="demo", project_name="demo", token_id=DEMO)
    conf.set_override("auth_strategy", "keystone", group="api")
    fake_keystone.configure(conf)
    app = app_mod.create_app(conf, transport=compute.transport,
                             engine=engine, volume_api=volumes)
    return inprocess.APIClient(app.test_client(), token=DEMO)


@pytest.fixture
def servers(kapi):
    made = {}
    for who, token in (("admin", ADMIN), ("demo", DEMO)):
        status, body, _ = kapi.post("/v2.1/servers", {"server": {
            "name": who + "-vm", "imageRef": inprocess.IMAGE_ID,
            "flavorRef": "42", "networks": "none"}}, token=token)
        assert status == 202, body
        made[who] = body["server"]["id"]
    return made


def test_missing_and_bad_tokens_are_401(kapi):
    for token in ("", "admin:p-admin", ADMIN[:-3] + "xyz", DEMO + " x"):
        status, body, headers = kapi.get("/v2.1/servers", token=token or " ")
        assert status == 401
        assert body["error"]["title"] == "Unauthorized"
        assert headers["WWW-Authenticate"].startswith("Keystone")


def test_discovery_is_public(kapi):
    for path in ("/", "/v2.1", "/v2.1/"):
        status, _, _ = kapi.get(path, token=" ")
        assert status == 200


def test_project_isolation(kapi, servers):
    """demo neither sees nor reaches admin's server; admin's list is
    its own project unless all_tenants."""
    status, body, _ = kapi.get("/v2.1/servers/detail")
    assert [s["id"] for s in body["servers"]] == [servers["demo"]]
    assert body["servers"][0]["tenant_id"] == "p-demo"
    for method, path in (
            ("GET", "/v2.1/servers/%s" % servers["admin"]),
            ("DELETE", "/v2.1/servers/%s" % servers["admin"]),
            ("GET", "/v2.1/servers/%s/os-volume_attachments"
             % servers["admin"]),
            ("GET", "/v2.1/servers/%s/os-instance-actions"
             % servers["admin"])):
        status, body, _ = kapi.request(method, path)
        assert status == 404, (method, path, body)
    status, body, _ = kapi.get("/v2.1/servers", token=ADMIN)
    assert [s["id"] for s in body["servers"]] == [servers["admin"]]
    status, body, _ = kapi.get("/v2.1/servers?all_tenants=True",
                               token=ADMIN)
    assert {s["id"] for s in body["servers"]} == set(servers.values())


def test_admin_only_actions_are_403_for_members(kapi, servers):
    assert kapi.get("/v2.1/servers/detail?all_tenants=True")[0] == 403
    assert kapi.get("/v2.1/os-services")[0] == 403
    assert kapi.get("/v2.1/os-services", token=ADMIN)[0] == 200
    assert kapi.get("/v2.1/servers/detail?all_tenants=False")[0] == 200


def test_host_fields_only_for_admin(kapi, servers):
    _, body, _ = kapi.get("/v2.1/servers/%s" % servers["demo"],
                          version="2.96")
    assert "OS-EXT-SRV-ATTR:host" not in body["server"]
    _, body, _ = kapi.get("/v2.1/servers/%s" % servers["demo"],
                          version="2.96", token=ADMIN)
    assert "OS-EXT-SRV-ATTR:host" in body["server"]


def test_legacy_url_with_another_project_is_400_even_for_admin(kapi,
                                                               servers):
    """nova's Resource: a matched route whose URL names another project
    is a malformed URL, whoever asks."""
    status, body, _ = kapi.get("/v2.1/p-admin/servers/%s" % servers["admin"])
    assert status == 400
    assert body["badRequest"]["message"] == (
        "Malformed request URL: URL's project_id 'p-admin' doesn't match "
        "Context's project_id 'p-demo'")
    status, body, _ = kapi.get("/v2.1/p-demo/servers", token=ADMIN)
    assert status == 400
    assert "'p-demo' doesn't match Context's project_id 'p-admin'" in \
        body["badRequest"]["message"]
    status, _, _ = kapi.get("/v2.1/p-demo/servers/%s" % servers["demo"])
    assert status == 200
    # An unknown route stays 404, as upstream's router answers first.
    assert kapi.get("/v2.1/p-admin/no-such-thing")[0] == 404
