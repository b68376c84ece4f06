"""The keystone v3 subset as the clients drive it (openstack-clients.md
§1): discovery, the three auth methods, validation, and every refusal."""

import json

from ministack.identity import manage
from ministack.identity import tokens
from tests.unit.identity.conftest import login
from tests.unit.identity.conftest import password_body


def test_root_is_multiple_choices_with_v3_self_link(client):
    """GET / answers 300 with versions.values and a v3 self link."""
    resp = client.get("/")
    assert resp.status_code == 300
    (version,) = resp.get_json()["versions"]["values"]
    assert version["id"].startswith("v3.") and version["status"] == "stable"
    assert version["links"][0]["href"] == "http://localhost/v3/"


def test_v3_version_document(client):
    """GET /v3 answers 200 with a single version (keystoneauth shape 3)."""
    resp = client.get("/v3")
    assert resp.status_code == 200
    assert resp.get_json()["version"]["links"][0]["rel"] == "self"


def test_password_token_has_everything_clients_read(client):
    """201, X-Subject-Token, and user/project/roles/catalog/expiry."""
    resp = client.post("/v3/auth/tokens",
                       json=password_body("admin", "admin-secret", "admin"))
    assert resp.status_code == 201
    assert resp.headers["X-Subject-Token"].startswith("gAAAA")
    token = resp.get_json()["token"]
    assert token["methods"] == ["password"]
    assert token["user"]["name"] == "admin"
    assert token["user"]["domain"] == {"id": "default", "name": "Default"}
    assert token["project"]["name"] == "admin"
    assert {r["name"] for r in token["roles"]} == {"admin", "member",
                                                   "reader"}
    assert token["expires_at"].endswith("Z") and token["issued_at"]
    types = {s["type"]: s for s in token["catalog"]}
    assert set(types) == {"identity", "compute", "block-storage",
                          "volumev3", "image"}
    volume = types["volumev3"]["endpoints"]
    assert {e["interface"] for e in volume} == {"public", "internal",
                                                "admin"}
    assert all(e["region"] == e["region_id"] == "RegionOne" for e in volume)
    assert volume[0]["url"].endswith("/v3/%s" % token["project"]["id"])


def test_minimal_body_without_domains(client):
    """No domain keys at all (minimal clouds.yaml) means Default."""
    resp = client.post("/v3/auth/tokens", json=password_body(
        "demo", "demo-secret", "demo", domains=False))
    assert resp.status_code == 201
    assert resp.get_json()["token"]["project"]["name"] == "demo"


def test_by_ids_and_unscoped_uses_default_project(client, seeded):
    """user.id + no scope: the user's default project."""
    user = seeded.user(name="demo", domain_id="default")
    resp = client.post("/v3/auth/tokens", json={"auth": {"identity": {
        "methods": ["password"],
        "password": {"user": {"id": user.id, "password": "demo-secret"}}}}})
    assert resp.status_code == 201
    assert resp.get_json()["token"]["project"]["id"] == \
        user.default_project_id


def test_token_method_rescopes_and_never_outlives(client):
    """The token method keeps the user and the original expiry."""
    first = client.post("/v3/auth/tokens",
                        json=password_body("admin", "admin-secret", "admin"))
    old = first.get_json()["token"]
    resp = client.post("/v3/auth/tokens", json={"auth": {
        "identity": {"methods": ["token"],
                     "token": {"id": first.headers["X-Subject-Token"]}},
        "scope": {"project": {"name": "admin",
                              "domain": {"name": "Default"}}}}})
    assert resp.status_code == 201
    new = resp.get_json()["token"]
    assert new["user"]["id"] == old["user"]["id"]
    assert new["methods"] == ["password", "token"]
    assert new["expires_at"] <= old["expires_at"]


def test_application_credential(client, seeded):
    """By id and secret, no scope: the credential's project and roles."""
    cred_id, secret = manage.app_credential_create(seeded, "demo", "demo",
                                                   "ci")
    body = {"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"id": cred_id, "secret": secret}}}}
    resp = client.post("/v3/auth/tokens", json=body)
    assert resp.status_code == 201
    token = resp.get_json()["token"]
    assert token["project"]["name"] == "demo"
    assert token["application_credential"]["id"] == cred_id
    body["auth"]["identity"]["application_credential"]["secret"] = "wrong"
    assert client.post("/v3/auth/tokens", json=body).status_code == 401
    by_name = {"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"name": "ci", "secret": secret,
                                   "user": {"name": "demo",
                                            "domain": {"name": "Default"}}}}}}
    assert client.post("/v3/auth/tokens", json=by_name).status_code == 201


def test_credential_failures_are_one_indistinct_401(client):
    """Wrong password, unknown user, other domain: the same 401 body."""
    bodies = [password_body("admin", "nope", "admin"),
              password_body("ghost", "admin-secret", "admin")]
    other_domain = password_body("admin", "admin-secret", "admin")
    other_domain["auth"]["identity"]["password"]["user"]["domain"] = {
        "name": "Elsewhere"}
    bodies.append(other_domain)
    answers = []
    for body in bodies:
        resp = client.post("/v3/auth/tokens", json=body)
        assert resp.status_code == 401
        assert resp.headers["WWW-Authenticate"].startswith("Keystone uri=")
        answers.append(resp.get_json())
        assert "admin-secret" not in resp.get_data(as_text=True)
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["error"]["title"] == "Unauthorized"


def test_project_without_role_is_401(client):
    """demo has no role on admin's project: 401, no token."""
    resp = client.post("/v3/auth/tokens",
                       json=password_body("demo", "demo-secret", "admin"))
    assert resp.status_code == 401
    assert "X-Subject-Token" not in resp.headers


def test_malformed_bodies_are_400(client):
    """Missing keys, wrong types and bad JSON: 400 with keystone's body."""
    for raw in ("{", "[]", json.dumps({"auth": {}}),
                json.dumps({"auth": {"identity": {"methods": "password"}}}),
                json.dumps({"auth": {"identity": {"methods": []}}}),
                json.dumps({"auth": {"identity": {
                    "methods": ["password"], "password": {"user": {
                        "name": "admin", "password": 5}}}}})):
        resp = client.post("/v3/auth/tokens", data=raw,
                           content_type="application/json")
        assert resp.status_code == 400, raw
        assert resp.get_json()["error"]["code"] == 400


def test_unsupported_method_and_scope_are_401(client):
    resp = client.post("/v3/auth/tokens", json={"auth": {"identity": {
        "methods": ["totp"], "totp": {}}}})
    assert resp.status_code == 401
    body = password_body("admin", "admin-secret")
    body["auth"]["scope"] = {"system": {"all": True}}
    assert client.post("/v3/auth/tokens", json=body).status_code == 401


def test_validate_own_and_others_tokens(client):
    """Anyone validates their own token; only admin/service others'."""
    admin = login(client)
    demo = login(client, "demo", "demo-secret", "demo")
    resp = client.get("/v3/auth/tokens", headers={
        "X-Auth-Token": demo, "X-Subject-Token": demo})
    assert resp.status_code == 200
    assert resp.get_json()["token"]["user"]["name"] == "demo"
    assert client.get("/v3/auth/tokens", headers={
        "X-Auth-Token": demo, "X-Subject-Token": admin}).status_code == 403
    assert client.get("/v3/auth/tokens", headers={
        "X-Auth-Token": admin, "X-Subject-Token": demo}).status_code == 200
    assert client.head("/v3/auth/tokens", headers={
        "X-Auth-Token": admin, "X-Subject-Token": demo}).status_code == 200


def test_validate_refusals(client, conf):
    """No caller token 401; bad subject 404; tampered caller 401."""
    admin = login(client)
    assert client.get("/v3/auth/tokens",
                      headers={"X-Subject-Token": admin}).status_code == 401
    tampered = admin[:-4] + ("AAAA" if not admin.endswith("AAAA")
                             else "BBBB")
    assert client.get("/v3/auth/tokens", headers={
        "X-Auth-Token": admin, "X-Subject-Token": tampered}
    ).status_code == 404
    assert client.get("/v3/auth/tokens", headers={
        "X-Auth-Token": tampered, "X-Subject-Token": admin}
    ).status_code == 401
    foreign = tokens.TokenFormatter(
        "0" * 43 + "=").issue("u", "u", "p", "p", [("r", "admin")],
                              ["password"], 3600)[0]
    assert client.get("/v3/auth/tokens", headers={
        "X-Auth-Token": foreign, "X-Subject-Token": admin}
    ).status_code == 401


def test_catalog_route(client):
    token = login(client)
    resp = client.get("/v3/auth/catalog", headers={"X-Auth-Token": token})
    assert resp.status_code == 200
    assert {s["type"] for s in resp.get_json()["catalog"]} >= {
        "identity", "compute"}


def test_bootstrap_is_idempotent_and_stores_hashes(conf, seeded):
    """A second bootstrap keeps the key and adds nothing twice."""
    from tests.unit.identity.conftest import PASSWORDS
    assert manage.bootstrap(conf, seeded, environ=PASSWORDS) is False
    admin = seeded.user(name="admin", domain_id="default")
    assert admin.password.startswith("scrypt$")
    assert "admin-secret" not in admin.password
    project = seeded.project(name="admin", domain_id="default")
    assert len(seeded.roles(admin.id, project.id)) == 3
