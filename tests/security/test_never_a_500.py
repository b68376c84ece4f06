"""API hardening (issue 11, "Low"), attacked on the lab: input that used to
be a 5xx.

5000-digit sizes, counts and microversions, a lone surrogate in a name;
JSON values of the wrong type in keystone auth bodies (upstream
Keystone's answers); keystone's answer to deep nesting; tokens keystone
never issued (too long, non-ASCII), which auth_token passed on and
answered 503 for. Every assertion names upstream's status and fault body;
a resource a test creates is registered for deletion at once (helpers in
``hardening.py``).
"""

import json
import uuid

import pytest
import requests

from tests.security import hardening
from tests.security.hardening import catalog_url
from tests.security.hardening import fault
from tests.security.hardening import forget_server
from tests.security.hardening import forget_volume
from tests.security.hardening import new_volume
from tests.security.hardening import unique_name

HUGE = "1" * 5000


@pytest.fixture(scope="module")
def demo_server(demo_compute, conf):
    """An ACTIVE server of the attacker's own, booted for this module."""
    yield from hardening.own_server(demo_compute, conf)


# -- Low: never a 500 --------------------------------------------------------

def test_5000_digit_size_and_min_count_are_400(demo_volumes, demo_compute,
                                               conf, cleanup):
    response = demo_volumes.request("POST", "/volumes", {"volume": {
        "size": "9" * 5000, "name": unique_name("huge")}})
    if response[0] == 202:
        cleanup.add(forget_volume, demo_volumes, response[2]["volume"]["id"])
    message = fault(response, 400, "badRequest")
    assert message.startswith("Invalid input received: Invalid volume size "
                              "provided for create request:")
    response = demo_compute.request("POST", "/servers", {"server": {
        "name": unique_name("huge"), "imageRef": conf.image_ref,
        "flavorRef": conf.flavor_ref, "networks": "none",
        "min_count": "9" * 5000}})
    if response[0] == 202:
        cleanup.add(forget_server, demo_compute, response[2]["server"]["id"])
    assert fault(response, 400, "badRequest").startswith(
        "Only one server per request is supported (min_count=")


@pytest.mark.parametrize("service, headers", [
    ("volume", {"OpenStack-API-Version": "volume 3." + HUGE}),
    ("volume", {"OpenStack-API-Version": "volume " + HUGE + ".0"}),
    ("compute", {"OpenStack-API-Version": "compute 2." + HUGE}),
    ("compute", {"X-OpenStack-Nova-API-Version": "2." + HUGE}),
])
def test_5000_digit_microversion_is_406(demo_volumes, demo_compute,
                                        service, headers):
    client, path = ((demo_volumes, "/volumes") if service == "volume"
                    else (demo_compute, "/servers"))
    message = fault(client.request("GET", path, microversion="",
                                   headers=headers), 406, "notAcceptable")
    assert message.startswith("Version ") and "is not supported by the " \
        "API" in message and len(message) < 300


def test_lone_surrogate_in_a_name_is_400(demo_volumes, demo_compute,
                                         demo_server, conf, cleanup):
    """``"\\ud800"`` decodes to a lone surrogate, which no UTF-8 encoder
    (the database driver, the log) takes."""
    surrogate = '"\\ud800"'
    response = demo_volumes.request(
        "POST", "/volumes", raw='{"volume": {"size": 1, "name": %s}}'
        % surrogate)
    if response[0] == 202:
        cleanup.add(forget_volume, demo_volumes, response[2]["volume"]["id"])
    assert fault(response, 400, "badRequest").startswith(
        "Invalid input received: Invalid input for field/attribute "
        "volume/name.")
    volume_id = new_volume(demo_volumes, cleanup, "named")
    before = demo_volumes.show_volume(volume_id)["volume"]["name"]
    fault(demo_volumes.request("PUT", "/volumes/%s" % volume_id,
                               raw='{"volume": {"name": %s}}' % surrogate),
          400, "badRequest")
    assert demo_volumes.show_volume(volume_id)["volume"]["name"] == before

    response = demo_compute.request(
        "POST", "/servers", raw=json.dumps({"server": {
            "name": "@NAME@", "imageRef": conf.image_ref,
            "flavorRef": conf.flavor_ref, "networks": "none"}}).replace(
                '"@NAME@"', surrogate))
    if response[0] == 202:
        cleanup.add(forget_server, demo_compute, response[2]["server"]["id"])
    assert fault(response, 400, "badRequest").startswith(
        "Invalid input for field/attribute name.")
    before = demo_compute.show_server(demo_server)["server"]["name"]
    fault(demo_compute.request("PUT", "/servers/%s" % demo_server,
                               raw='{"server": {"name": %s}}' % surrogate),
          400, "badRequest")
    assert demo_compute.show_server(demo_server)["server"]["name"] == before


# Upstream Keystone 30.0.0 leaves the user of an application credential
# untyped in its auth schema and answers 500 to the first and third of
# these; the lab's keystone_wsgi.AuthBodyCheck answers keystone's 400.
@pytest.mark.parametrize("method, member", [
    ("application_credential", {"name": "demo", "domain": "Default"}),
    ("application_credential", {"name": ["demo"]}),
    ("application_credential", {"id": {"id": "x"}}),
    ("password", {"name": "demo", "domain": {"id": ["default"]},
                  "password": "x"}),
    ("password", {"name": {"n": 1}, "password": "x"}),
])
def test_auth_body_of_the_wrong_types_is_400(conf, method, member):
    """Keystone refuses an auth body with values of the wrong JSON type:
    400 in its error shape, never a 5xx."""
    if method == "application_credential":
        cred = {"name": "any", "secret": "any", "user": member}
    else:
        cred = {"user": member}
    resp = requests.post(conf.auth_url + "/v3/auth/tokens", json={
        "auth": {"identity": {"methods": [method], method: cred}}},
        timeout=30)
    assert resp.status_code < 500, (resp.status_code, resp.text[:300])
    assert resp.status_code == 400, (resp.status_code, resp.text[:300])
    error = resp.json()["error"]
    assert error["code"] == 400 and error["title"] == "Bad Request"


def test_tokens_no_keystone_issues_are_401_not_503(conf, demo_session):
    """A 20000-byte X-Auth-Token, passed on to keystone, overflowed its
    header limit and auth_token answered 503 "Keystone unavailable";
    non-ASCII and a long X-Service-Token likewise. Every service answers
    auth_token's 401, with its WWW-Authenticate. (Control characters
    never get that far: the HTTP server answers 400 "Invalid header".)"""
    urls = [demo_session.compute_endpoint + "/servers",
            demo_session.volume_endpoint + "/volumes",
            catalog_url(conf, conf.user, "image") + "/v2/images"]
    bad = [{"X-Auth-Token": "x" * 20000},
           {"X-Auth-Token": "x" * 9000},
           {"X-Auth-Token": "caf\xe9"},
           {"X-Auth-Token": demo_session.token,
            "X-Service-Token": "y" * 20000}]
    for url in urls:
        for headers in bad:
            resp = requests.get(url, headers=headers, timeout=30)
            assert resp.status_code == 401, (url, resp.status_code,
                                             resp.text[:200])
            assert resp.headers["WWW-Authenticate"].startswith(
                'Keystone uri="'), url
            assert resp.json()["error"]["code"] == 401
        assert requests.get(url, timeout=30, headers={
            "X-Auth-Token": demo_session.token}).status_code == 200


@pytest.mark.parametrize("method, path", [
    ("GET", "/v3/endpoints"), ("GET", "/v3/projects"),
    ("PATCH", "/v3/users/%s"), ("POST", "/v3/auth/tokens")])
def test_keystone_refuses_deep_nesting_on_every_route(conf, admin_session,
                                                      method, path):
    """Keystone parses the body of every request, GET included, and
    answered 500 to JSON nested past the parser's depth, and to lone
    surrogates: now 400 in its error shape."""
    token = {"X-Auth-Token": admin_session.token,
             "Content-Type": "application/json"}
    url = conf.auth_url + (path % uuid.uuid4().hex if "%s" in path
                           else path)
    for body in ("[" * 100000, '{"user": {"name": "\\ud800"}}'):
        resp = requests.request(method, url, data=body, headers=token,
                                timeout=30)
        assert resp.status_code == 400, (method, path, resp.status_code,
                                         resp.text[:200])
        assert resp.json()["error"]["title"] == "Bad Request"


def test_keystone_id_with_a_4_byte_character_is_404(conf, admin_session):
    """Keystone's tables are utf8 (utf8mb3): over a utf8mb4 connection a
    4-byte character in a project id was a collation error and a 500
    (found by the fuzz tier); the lab connects in utf8, as DevStack, and
    keystone answers its 404."""
    resp = requests.get(conf.auth_url + "/v3/projects/9\U000f2008x",
                        headers={"X-Auth-Token": admin_session.token},
                        timeout=30)
    assert resp.status_code == 404, (resp.status_code, resp.text[:200])
    assert resp.json()["error"]["code"] == 404


def test_keystone_name_with_a_4_byte_character_is_400(conf, demo_session):
    """Any user could make keystone 500: a 4-byte character (an emoji)
    in an application credential's name cannot be stored in keystone's
    utf8 (utf8mb3) MySQL tables. The lab's keystone_wsgi answers 400 in
    keystone's error shape instead; a plain name still works."""
    import configparser
    keystone_conf = configparser.ConfigParser(interpolation=None)
    keystone_conf.read("/etc/ministack/keystone/keystone.conf")
    if not keystone_conf.get("database", "connection",
                             fallback="").startswith("mysql"):
        pytest.skip("keystone's database is not MySQL/MariaDB (utf8mb4 "
                    "elsewhere stores any character)")
    url = "%s/v3/users/%s/application_credentials" % (
        conf.auth_url, demo_session.user_id)
    headers = {"X-Auth-Token": demo_session.token}
    resp = requests.post(url, headers=headers, timeout=30, json={
        "application_credential": {"name": "ac-\U0001F600-" +
                                   uuid.uuid4().hex[:6]}})
    assert resp.status_code == 400, (resp.status_code, resp.text[:200])
    assert resp.json()["error"]["title"] == "Bad Request"
    name = unique_name("ac")
    resp = requests.post(url, headers=headers, timeout=30, json={
        "application_credential": {"name": name}})
    assert resp.status_code == 201, (resp.status_code, resp.text[:200])
    credential = resp.json()["application_credential"]["id"]
    assert requests.delete("%s/%s" % (url, credential), headers=headers,
                           timeout=30).status_code == 204


def _with_host(url, method, host, token):
    """``method url`` sent with exactly this Host header (requests would
    always send its own)."""
    import http.client
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port,
                                            timeout=30)
    try:
        connection.putrequest(method, parts.path, skip_host=True)
        connection.putheader("Host", host)
        connection.putheader("X-Auth-Token", token)
        connection.putheader("Content-Length", "0")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("method, path", [
    ("GET", "/v3"), ("GET", "/v3/projects"), ("GET", "/v3/nowhere"),
    ("PUT", "/v3/users/%s/application_credentials"),
    ("POST", "/v3/auth/tokens")])
def test_keystone_host_name_idna_cannot_encode_is_400(conf, demo_session,
                                                      method, path):
    """A Host name with a label over 63 characters cannot be encoded to
    IDNA: werkzeug raised BadHost while keystone built its URL adapter,
    and every keystone route answered 500 (found by the fuzz tier with
    a 255-character Host). Now 400 in keystone's error shape; a long but
    valid name still reaches keystone."""
    url = conf.auth_url + (path % demo_session.user_id if "%s" in path
                           else path)
    for host in ("x" * 64, "x" * 255, "a." + "b" * 64 + ":5000"):
        status, body = _with_host(url, method, host, demo_session.token)
        assert status == 400, (method, path, host, status, body[:200])
        error = json.loads(body)["error"]
        assert error == {"code": 400, "title": "Bad Request",
                         "message": "Invalid Host header."}
    status, body = _with_host(conf.auth_url + "/v3", "GET",
                              "a" * 63 + ".example:5000", demo_session.token)
    assert status == 200, (status, body[:200])


def test_services_answer_a_host_name_idna_cannot_encode(demo_session, conf):
    """Nova, Cinder and Glance (werkzeug routing too) answer such a Host
    with their own 400 fault, and the same request with a good Host
    works."""
    for url in (demo_session.compute_endpoint + "/servers",
                demo_session.volume_endpoint + "/volumes",
                catalog_url(conf, conf.user, "image") + "/v2/images"):
        status, body = _with_host(url, "GET", "x" * 255, demo_session.token)
        assert status == 400, (url, status, body[:200])
        assert json.loads(body)["badRequest"]["code"] == 400
        status, body = _with_host(url, "GET", "ministack.example",
                                  demo_session.token)
        assert status == 200, (url, status, body[:200])
