"""Hostile bodies for POST /v3/auth/tokens: a value of the wrong JSON type
anywhere is a 400 naming the field, text no database can take is a 400,
and a body over the limit is 413, all in keystone's error shape; never a
500 (issue 11)."""

import json

import pytest

from ministack.identity import manage
from tests.unit.identity.conftest import password_body


def _app_cred(**cred):
    return {"auth": {"identity": {"methods": ["application_credential"],
                                  "application_credential": cred}}}


def _assert_400(resp, field):
    assert resp.status_code == 400, resp.get_json()
    error = resp.get_json()["error"]
    assert error["code"] == 400 and error["title"] == "Bad Request"
    assert field in error["message"]


@pytest.mark.parametrize("user, field", [
    ({"name": "demo", "domain": "Default"},
     "application_credential.user.domain"),
    ({"name": ["demo"]}, "application_credential.user.name"),
    ({"id": {"x": 1}}, "application_credential.user.id"),
    ({"id": 7}, "application_credential.user.id"),
    ({"name": "demo", "domain": {"id": ["default"]}},
     "application_credential.user.domain.id"),
    ({"name": "demo", "domain": {"name": 1}},
     "application_credential.user.domain.name"),
])
def test_application_credential_user_of_the_wrong_type(client, seeded,
                                                       user, field):
    manage.app_credential_create(seeded, "demo", "demo", "ci")
    resp = client.post("/v3/auth/tokens", json=_app_cred(
        name="ci", secret="s", user=user))
    _assert_400(resp, field)


def test_application_credential_by_name_still_works(client, seeded):
    _, secret = manage.app_credential_create(seeded, "demo", "demo", "ci")
    resp = client.post("/v3/auth/tokens", json=_app_cred(
        name="ci", secret=secret,
        user={"name": "demo", "domain": {"name": "Default"}}))
    assert resp.status_code == 201, resp.get_json()


@pytest.mark.parametrize("mangle, field", [
    (lambda u: u.update(domain="Default"), "password.user.domain"),
    (lambda u: u.update(name=["demo"]), "password.user.name"),
    (lambda u: u.update(id={"a": 1}), "password.user.id"),
    (lambda u: u.update(domain={"id": {"a": 1}}),
     "password.user.domain.id"),
    (lambda u: u.update(password=["x"]), "password.user.password"),
])
def test_password_user_of_the_wrong_type(client, seeded, mangle, field):
    body = password_body("demo", "demo-secret", "demo")
    mangle(body["auth"]["identity"]["password"]["user"])
    _assert_400(client.post("/v3/auth/tokens", json=body), field)


@pytest.mark.parametrize("scope, field", [
    ({"project": {"name": "demo", "domain": "Default"}},
     "scope.project.domain"),
    ({"project": {"name": "demo", "domain": {"name": ["Default"]}}},
     "scope.project.domain.name"),
    ({"project": {"id": 5}}, "scope.project.id"),
    ({"project": "demo"}, "scope.project"),
])
def test_scope_of_the_wrong_type(client, seeded, scope, field):
    body = password_body("demo", "demo-secret")
    body["auth"]["scope"] = scope
    _assert_400(client.post("/v3/auth/tokens", json=body), field)


def test_token_method_of_the_wrong_type(client, seeded):
    body = {"auth": {"identity": {"methods": ["token"],
                                  "token": {"id": ["x"]}}}}
    _assert_400(client.post("/v3/auth/tokens", json=body), "token.id")


@pytest.mark.parametrize("escape", ["\\ud800", "de\\u0000mo"])
def test_unstorable_text_is_400(client, seeded, escape):
    raw = json.dumps(password_body("demo", "demo-secret", "demo")).replace(
        '"name": "demo"', '"name": "%s"' % escape, 1)
    resp = client.post("/v3/auth/tokens", data=raw,
                       content_type="application/json")
    _assert_400(resp, "auth.identity.password.user.name")


def test_body_limit_in_keystones_shape(client, seeded):
    limit = 114688
    body = json.dumps(password_body("demo", "demo-secret", "demo"))
    padded = body[:-1] + ', "pad": "%s"}' % ("p" * (
        limit - len(body) - len(', "pad": ""}') + 1))
    assert len(padded) == limit
    resp = client.post("/v3/auth/tokens", data=padded,
                       content_type="application/json")
    assert resp.status_code == 201   # at the limit: read and served
    resp = client.post("/v3/auth/tokens", data=padded + " ",
                       content_type="application/json")
    assert resp.status_code == 413
    assert resp.get_json() == {"error": {
        "code": 413, "title": "Request Entity Too Large",
        "message": "Request is too large. Larger than "
                   "max_request_body_size (114688)."}}
