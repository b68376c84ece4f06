"""The Networking v2.0 subset that reports no networks (miniapi, :9696).

Upstream tempest's dynamic-credential teardown lists each test project's
``default`` security group and deletes what it finds, and ``openstack
network list`` lists networks: both must get Neutron's shapes with the
true answer (nothing there), and every error in Neutron's ``NeutronError``
body, never an HTML page.
"""

import pytest
from werkzeug.test import Client

from miniapi import network_api
from ministack import exception

SOME_ID = "8a6cc53e-6b8f-4c53-9f5e-8a2a2a0e0f11"

# Neutron's (URL name, JSON key) of every collection served.
COLLECTIONS = sorted((name, key) for name, (key, _) in
                     network_api.COLLECTIONS.items())


@pytest.fixture
def client():
    return Client(network_api.create_app())


def _neutron_error(resp, status, error_type=None):
    """The answer is ``status`` with Neutron's error body; its inner
    dict."""
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/json"
    body = resp.get_json()
    assert list(body) == ["NeutronError"]
    error = body["NeutronError"]
    assert set(error) == {"type", "message", "detail"}
    assert isinstance(error["message"], str) and error["message"]
    assert error["detail"] == ""
    if error_type is not None:
        assert error["type"] == error_type
    return error


def test_versions_document(client):
    resp = client.get("/")
    assert resp.status_code == 200   # neutron's, not glance's 300
    assert resp.get_json() == {"versions": [{
        "id": "v2.0", "status": "CURRENT",
        "links": [{"rel": "self", "href": "http://localhost/v2.0/"}]}]}


@pytest.mark.parametrize("path", ["/v2.0", "/v2.0/"])
def test_v2_lists_every_collection_as_a_resource(client, path):
    resp = client.get(path)
    assert resp.status_code == 200
    resources = resp.get_json()["resources"]
    assert sorted((r["collection"], r["name"]) for r in resources) == \
        sorted((key, key[:-1]) for _, key in COLLECTIONS)
    by_collection = {r["collection"]: r for r in resources}
    for name, key in COLLECTIONS:
        assert by_collection[key]["links"] == [
            {"rel": "self", "href": "http://localhost/v2.0/%s" % name}]


def test_no_extensions(client):
    resp = client.get("/v2.0/extensions")
    assert resp.status_code == 200
    assert resp.get_json() == {"extensions": []}
    error = _neutron_error(client.get("/v2.0/extensions/security-group"),
                           404, "ExtensionNotFound")
    assert "security-group" in error["message"]


@pytest.mark.parametrize("name,key", COLLECTIONS)
@pytest.mark.parametrize("query", [
    "", "?project_id=x&name=default", "?tenant_id=x&fields=id&fields=name",
    "?limit=1&marker=%s&page_reverse=True" % SOME_ID,
    "?router%3Aexternal=True&shared=false", "?id=" + SOME_ID])
def test_every_collection_lists_empty(client, name, key, query):
    resp = client.get("/v2.0/%s%s" % (name, query),
                      headers={"X-Auth-Token": "demo:demo"})
    assert resp.status_code == 200
    assert resp.mimetype == "application/json"
    assert resp.get_json() == {key: []}


def test_tempest_default_security_group_cleanup_finds_nothing(client):
    """What tempest's dynamic credentials do when they tear a project
    down: list its ``default`` security groups, delete each one."""
    resp = client.get("/v2.0/security-groups?project_id=%s&name=default"
                      % SOME_ID)
    assert resp.status_code == 200
    assert resp.get_json()["security_groups"] == []


@pytest.mark.parametrize("name", sorted(network_api.COLLECTIONS))
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_any_id_is_neutrons_404(client, name, method):
    _, not_found = network_api.COLLECTIONS[name]
    resp = client.open("/v2.0/%s/%s" % (name, SOME_ID), method=method,
                       json={"x": {}} if method == "PUT" else None)
    error = _neutron_error(resp, 404, not_found)
    assert SOME_ID in error["message"]


@pytest.mark.parametrize("name", sorted(network_api.COLLECTIONS))
def test_create_is_refused_403(client, name):
    resp = client.post("/v2.0/%s" % name, json={"x": {"name": "n"}})
    error = _neutron_error(resp, 403, "PolicyNotAuthorized")
    assert name in error["message"]
    # Refused, and nothing made.
    key, _ = network_api.COLLECTIONS[name]
    assert client.get("/v2.0/%s" % name).get_json() == {key: []}


@pytest.mark.parametrize("method,path", [
    ("GET", "/v2.0/no-such-things"), ("POST", "/v2.0/no-such-things"),
    ("GET", "/v2.0/no-such-things/" + SOME_ID),
    ("DELETE", "/v2.0/no-such-things/" + SOME_ID),
    ("PUT", "/v2.0/extensions/" + SOME_ID),
    ("GET", "/v2.0/networks/%s/tags" % SOME_ID),
    ("GET", "/v2.0/networks.json"), ("GET", "/v2.0//networks"),
    ("GET", "/v3/networks")])
def test_unknown_url_is_404_in_neutron_shape(client, method, path):
    resp = client.open(path, method=method)
    _neutron_error(resp, 404)
    assert b"<html" not in resp.get_data().lower()


@pytest.mark.parametrize("method,path", [
    ("PATCH", "/v2.0/networks"), ("DELETE", "/v2.0/networks"),
    ("POST", "/v2.0/networks/" + SOME_ID)])
def test_wrong_method_is_405_in_neutron_shape(client, method, path):
    _neutron_error(client.open(path, method=method), 405,
                   "MethodNotAllowed")


def test_head_answers_like_get(client):
    resp = client.head("/v2.0/networks")
    assert resp.status_code == 200
    assert resp.get_data() == b""


@pytest.mark.parametrize("path", ["/", "/v2.0/networks",
                                  "/v2.0/ports/" + SOME_ID, "/v2.0/nope"])
def test_every_answer_carries_a_request_id(client, path):
    """The ContextMiddleware in front adds x-openstack-request-id, to
    success and error answers alike, a new one each time."""
    first = client.get(path).headers.get("x-openstack-request-id")
    second = client.get(path).headers.get("x-openstack-request-id")
    assert first and first.startswith("req-")
    assert second and second != first


def test_noauth_needs_no_token(client):
    """noauth trusts the caller (as the unit tiers run every API): with,
    without or with a junk token the answer is the same."""
    for headers in ({}, {"X-Auth-Token": "admin:admin"},
                    {"X-Auth-Token": "junk"}):
        resp = client.get("/v2.0/networks", headers=headers)
        assert resp.status_code == 200
        assert resp.get_json() == {"networks": []}


@pytest.mark.parametrize("strategy", ["keystone", "no-such-strategy"])
def test_strategy_without_what_it_needs_is_refused_at_start(strategy):
    """keystone needs the daemon's config ([keystone_authtoken]); an
    unknown strategy is a configuration error, not an open API."""
    with pytest.raises(exception.ConfigError):
        network_api.create_app(auth_strategy=strategy)


def test_large_bodies_are_refused_413():
    """Nothing reads a body here, yet one past the limit is refused
    before anything else, as oslo.middleware's sizelimit does in
    neutron's pipeline."""
    client = Client(network_api.create_app())
    assert client.post("/v2.0/networks", data="x" * 114688
                       ).status_code == 403
    resp = client.post("/v2.0/networks", data="x" * 114689)
    assert resp.status_code == 413
    assert resp.headers.get("x-openstack-request-id")
    small = Client(network_api.create_app(max_request_body_size=2048))
    assert small.post("/v2.0/networks", data="x" * 2049).status_code == 413
