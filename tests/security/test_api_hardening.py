"""API hardening (issue 11, "Medium" and "Low"), attacked on the lab.

The demo user (project demo) plays the attacker against what belongs to
the admin project, through the deployed daemons' REST APIs:

* a detach naming another volume's attachment (upstream: 400
  "Mismatched volume and attachment"), and every other path that takes
  a volume and an attachment, or a server and a volume, together;
* a private volume type used by a project that cannot see it (404, as
  GET answers);
* input that used to be a 500: 5000-digit sizes, counts and
  microversions, a lone surrogate in a name; JSON values of the wrong
  type in keystone auth bodies (upstream Keystone's answers; two of them
  are still its 500, marked as expected failures);
* request bodies over oslo.middleware's 114688 bytes, on all four APIs
  (413 in each service's shape, keystone's HTML page included, chunked
  bodies too);
* a token of one project on a URL naming another (400 "Malformed request
  url" on Cinder, nova's "Malformed request URL: ..." on the compute API),
  admins included.

Every assertion names upstream's status and fault body; a resource a test
creates is registered for deletion at once.
"""

import json
import uuid

import pytest
import requests

from tests.tempest_style import waiters

LIMIT = 114688
TOO_LARGE = ("Request is too large. Larger than max_request_body_size "
             "(%d)." % LIMIT)
MISMATCH = "Invalid input received: Mismatched volume and attachment"
HUGE = "1" * 5000
TIMEOUT = 300


def _name(what):
    return "security-%s-%s" % (what, uuid.uuid4().hex[:6])


def _delete_volume(client, volume_id):
    client.delete_volume(volume_id)
    waiters.wait_for_volume_deleted(client, volume_id, timeout=TIMEOUT)


def _status_and_body(client, volume_id):
    status, _, body = client.request("GET", "/volumes/%s" % volume_id)
    return status, body


def _forget_volume(client, volume_id):
    """Undo of a create the hole let through: wait for it, delete it."""
    waiters.wait_for(
        "volume %s to settle" % volume_id,
        lambda: _status_and_body(client, volume_id),
        lambda r: r[0] == 404 or r[1]["volume"]["status"] != "creating",
        timeout=TIMEOUT)
    _delete_volume(client, volume_id)


def _forget_server(client, server_id):
    client.delete_server(server_id)
    waiters.wait_for_server_deleted(client, server_id, timeout=TIMEOUT)


def _volume(client, cleanup, what):
    volume = client.create_volume(size=1, name=_name(what))
    cleanup.add(_delete_volume, client, volume["id"])
    waiters.wait_for_volume_status(client, volume["id"], "available",
                                   timeout=TIMEOUT)
    return volume["id"]


def _reserve(client, cleanup, volume_id):
    """An attachment of ``volume_id`` (3.27 attachments API, no server and
    no connector: nothing is exported)."""
    attachment = client.request(
        "POST", "/attachments", {"attachment": {"volume_uuid": volume_id}},
        expected=200, microversion="3.27")[2]["attachment"]
    cleanup.add(client.request, "DELETE", "/attachments/%s" %
                attachment["id"], expected=(200, 404), microversion="3.27")
    return attachment["id"]


def _attachment_exists(admin_volumes, attachment_id):
    return admin_volumes.request(
        "GET", "/attachments/%s" % attachment_id, microversion="3.27",
        expected=(200, 404))[0] == 200


def _fault(response, code, name, message=None):
    status, _, body = response
    assert status == code, "expected %s, got %s: %s" % (code, status, body)
    assert set(body) == {name}, body
    assert body[name]["code"] == code, body
    if message is not None:
        assert body[name]["message"] == message, body
    return body[name]["message"]


@pytest.fixture(scope="module")
def demo_server(demo_compute, conf):
    """An ACTIVE server of the attacker's own, booted for this module."""
    server = demo_compute.create_server(_name("server"), conf.image_ref,
                                        conf.flavor_ref)
    try:
        waiters.wait_for_server_status(demo_compute, server["id"], "ACTIVE",
                                       timeout=conf.build_timeout)
        yield server["id"]
    finally:
        demo_compute.delete_server(server["id"])
        waiters.wait_for_server_deleted(demo_compute, server["id"],
                                        timeout=conf.build_timeout)


def _catalog_url(conf, creds, service_type):
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": creds.username, "password": creds.password,
                 "domain": {"name": creds.domain_name}}}},
        "scope": {"project": {"name": creds.project_name,
                              "domain": {"name": creds.domain_name}}}}}
    resp = requests.post(conf.auth_url + "/v3/auth/tokens", json=body,
                         timeout=30)
    assert resp.status_code == 201, resp.text[:300]
    for entry in resp.json()["token"]["catalog"]:
        if entry["type"] == service_type:
            return [e["url"] for e in entry["endpoints"]
                    if e["interface"] == "public" and
                    e.get("region_id") == conf.region][0].rstrip("/")
    raise AssertionError("no %s endpoint in the catalog" % service_type)


# -- Medium: a volume and an attachment (or a server) go together ----------

def test_os_detach_with_another_projects_attachment_is_refused(
        demo_volumes, admin_volumes, cleanup):
    """The attack: detach your own volume naming the victim's attachment
    id. Before, the victim's attachment was deleted."""
    victim_volume = _volume(admin_volumes, cleanup, "victim")
    victim_att = _reserve(admin_volumes, cleanup, victim_volume)
    own = _volume(demo_volumes, cleanup, "attacker")
    response = demo_volumes.request(
        "POST", "/volumes/%s/action" % own,
        {"os-detach": {"attachment_id": victim_att}})
    _fault(response, 400, "badRequest", MISMATCH)
    assert _attachment_exists(admin_volumes, victim_att)
    assert admin_volumes.show_volume(victim_volume)["volume"]["status"] \
        == "reserved"


def test_force_detach_with_a_mismatched_attachment_is_refused(
        admin_volumes, cleanup):
    """os-force_detach (admin) takes both ids too; upstream checks the
    pair the same way before anything is torn down."""
    one = _volume(admin_volumes, cleanup, "one")
    two = _volume(admin_volumes, cleanup, "two")
    att = _reserve(admin_volumes, cleanup, two)
    response = admin_volumes.request(
        "POST", "/volumes/%s/action" % one,
        {"os-force_detach": {"attachment_id": att}})
    _fault(response, 400, "badRequest", MISMATCH)
    assert _attachment_exists(admin_volumes, att)


def test_attachment_and_server_paths_keep_their_pairs(
        demo_volumes, demo_compute, admin_volumes, demo_server, cleanup):
    """The other paths naming a volume with an attachment or a server:
    another project's attachment or volume is never found (404) and is
    left as it was."""
    victim_volume = _volume(admin_volumes, cleanup, "victim")
    victim_att = _reserve(admin_volumes, cleanup, victim_volume)
    path = "/attachments/%s" % victim_att
    for method, body in (("GET", None), ("DELETE", None),
                         ("PUT", {"attachment": {"connector": {
                             "initiator": "iqn.1993-08.org.debian:01:eve",
                             "host": "attacker-host", "ip": "127.0.0.1",
                             "platform": "x86_64", "os_type": "linux",
                             "multipath": False}}}),
                         ("POST", {"os-complete": {}})):
        response = demo_volumes.request(
            method, path + ("/action" if method == "POST" else ""), body,
            microversion="3.44")
        _fault(response, 404, "itemNotFound")
    assert _attachment_exists(admin_volumes, victim_att)

    base = "/servers/%s/os-volume_attachments" % demo_server
    _fault(demo_compute.request("POST", base, {"volumeAttachment": {
        "volumeId": victim_volume}}), 404, "itemNotFound")
    one = "%s/%s" % (base, victim_volume)
    _fault(demo_compute.request("GET", one), 404, "itemNotFound")
    _fault(demo_compute.request("DELETE", one), 404, "itemNotFound")
    _fault(demo_compute.request("PUT", one, {"volumeAttachment": {
        "volumeId": victim_volume, "delete_on_termination": True}},
        microversion="2.85"), 404, "itemNotFound")
    # The attacker's own volume, not attached to the attacker's server.
    own = _volume(demo_volumes, cleanup, "attacker")
    _fault(demo_compute.request("DELETE", "%s/%s" % (base, own)), 404,
           "itemNotFound")
    assert admin_volumes.show_volume(victim_volume)["volume"]["status"] \
        == "reserved"
    assert _attachment_exists(admin_volumes, victim_att)


# -- Low: a private volume type ----------------------------------------------

def test_private_volume_type_cannot_be_used_by_another_project(
        demo_volumes, admin_volumes, cleanup):
    name = _name("private-type")
    vtype = admin_volumes.request("POST", "/types", {"volume_type": {
        "name": name, "os-volume-type-access:is_public": False}},
        expected=200)[2]["volume_type"]
    cleanup.add(admin_volumes.delete_volume_type, vtype["id"])
    _fault(demo_volumes.request("GET", "/types/%s" % vtype["id"]), 404,
           "itemNotFound")
    for ref, message in (
            (name, "Volume type with name %s could not be found." % name),
            (vtype["id"], "Volume type %s could not be found." %
             vtype["id"])):
        response = demo_volumes.request("POST", "/volumes", {"volume": {
            "size": 1, "name": _name("typed"), "volume_type": ref}})
        if response[0] == 202:   # the hole: register the undo first
            cleanup.add(_forget_volume, admin_volumes,
                        response[2]["volume"]["id"])
        _fault(response, 404, "itemNotFound", message)


# -- Low: never a 500 --------------------------------------------------------

def test_5000_digit_size_and_min_count_are_400(demo_volumes, demo_compute,
                                               conf, cleanup):
    response = demo_volumes.request("POST", "/volumes", {"volume": {
        "size": "9" * 5000, "name": _name("huge")}})
    if response[0] == 202:
        cleanup.add(_forget_volume, demo_volumes, response[2]["volume"]["id"])
    message = _fault(response, 400, "badRequest")
    assert message.startswith("Invalid input received: Invalid volume size "
                              "provided for create request:")
    response = demo_compute.request("POST", "/servers", {"server": {
        "name": _name("huge"), "imageRef": conf.image_ref,
        "flavorRef": conf.flavor_ref, "networks": "none",
        "min_count": "9" * 5000}})
    if response[0] == 202:
        cleanup.add(_forget_server, demo_compute, response[2]["server"]["id"])
    assert _fault(response, 400, "badRequest").startswith(
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
    message = _fault(client.request("GET", path, microversion="",
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
        cleanup.add(_forget_volume, demo_volumes, response[2]["volume"]["id"])
    assert _fault(response, 400, "badRequest").startswith(
        "Invalid input received: Invalid input for field/attribute "
        "volume/name.")
    volume_id = _volume(demo_volumes, cleanup, "named")
    before = demo_volumes.show_volume(volume_id)["volume"]["name"]
    _fault(demo_volumes.request("PUT", "/volumes/%s" % volume_id,
                                raw='{"volume": {"name": %s}}' % surrogate),
           400, "badRequest")
    assert demo_volumes.show_volume(volume_id)["volume"]["name"] == before

    response = demo_compute.request(
        "POST", "/servers", raw=json.dumps({"server": {
            "name": "@NAME@", "imageRef": conf.image_ref,
            "flavorRef": conf.flavor_ref, "networks": "none"}}).replace(
                '"@NAME@"', surrogate))
    if response[0] == 202:
        cleanup.add(_forget_server, demo_compute, response[2]["server"]["id"])
    assert _fault(response, 400, "badRequest").startswith(
        "Invalid input for field/attribute name.")
    before = demo_compute.show_server(demo_server)["server"]["name"]
    _fault(demo_compute.request("PUT", "/servers/%s" % demo_server,
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


# -- Low: request bodies over 112 KiB ----------------------------------------

def _padded(template, size):
    """``template`` % padding, exactly ``size`` bytes long."""
    body = template % ("p" * (size - len(template % "")))
    assert len(body) == size
    return body


def _post(url, data, headers=None):
    headers = dict({"Content-Type": "application/json"}, **(headers or {}))
    resp = requests.post(url, data=data, headers=headers, timeout=60)
    try:
        return resp.status_code, resp.json()
    except ValueError:
        return resp.status_code, resp.text[:300]


def _chunked(body, piece=8192):
    """A generator body: requests sends it chunked, with no length."""
    def pieces():
        for start in range(0, len(body), piece):
            yield body[start:start + piece].encode()
    return pieces()


def test_request_body_limit_on_every_service(conf, demo_session):
    """oslo.middleware's sizelimit: 114688 bytes are read, one more is
    413 before the body is read, chunked or not; each service answers in
    its own error shape."""
    token = {"X-Auth-Token": demo_session.token}
    compute = demo_session.compute_endpoint + "/servers"
    volume = demo_session.volume_endpoint + "/volumes"
    image = _catalog_url(conf, conf.user, "image") + "/v2/images"
    identity = conf.auth_url + "/v3/auth/tokens"
    fault = {"overLimit": {"code": 413, "message": TOO_LARGE}}
    # Keystone's own oslo.middleware sizelimit answers with webob's HTML
    # page (upstream's shape).
    keystone = "Request is too large."
    cases = [
        # url, body template, answer at the limit, headers, 413 body
        (compute, '{"server": {"name": "%s"}}', 400, token, fault),
        (volume, '{"volume": {"size": 1, "name": "%s"}}', 400, token,
         fault),
        (image, '{"name": "%s"}', 405, token, fault),
        (identity, '{"auth": {"identity": {"methods": ["password"], '
                   '"password": {"user": {"name": "%s", "password": "x", '
                   '"domain": {"name": "Default"}}}}}}', 401, {}, keystone),
    ]
    for url, template, at_limit, headers, too_large in cases:
        status, body = _post(url, _padded(template, LIMIT), headers)
        assert status == at_limit, (url, status, body)
        for data in (_padded(template, LIMIT + 1),
                     _chunked(_padded(template, LIMIT + 1)),
                     _padded(template, 1024 * 1024)):
            status, body = _post(url, data, headers)
            if isinstance(too_large, str):
                assert status == 413 and too_large in body, (url, status,
                                                              body)
            else:
                assert (status, body) == (413, too_large), (url, status,
                                                            body)


def test_tokens_no_keystone_issues_are_401_not_503(conf, demo_session):
    """A 20000-byte X-Auth-Token, passed on to keystone, overflowed its
    header limit and auth_token answered 503 "Keystone unavailable";
    non-ASCII and a long X-Service-Token likewise. Every service answers
    auth_token's 401, with its WWW-Authenticate. (Control characters
    never get that far: the HTTP server answers 400 "Invalid header".)"""
    urls = [demo_session.compute_endpoint + "/servers",
            demo_session.volume_endpoint + "/volumes",
            _catalog_url(conf, conf.user, "image") + "/v2/images"]
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


# -- Low: the project in the URL is the token's ------------------------------

def test_url_naming_another_project_is_malformed(demo_session,
                                                 admin_session, demo_volumes,
                                                 admin_volumes, demo_compute,
                                                 admin_compute, cleanup):
    """Cinder: 400 "Malformed request url" for any mismatch, admin
    included; the compute API's legacy /v2.1/{project_id}/ URLs: nova's
    400 naming both projects."""
    demo_pid, admin_pid = demo_session.project_id, admin_session.project_id
    volume_root = demo_session.volume_endpoint.rsplit("/", 1)[0]
    for client, url_project in ((demo_volumes, admin_pid),
                                (admin_volumes, demo_pid)):
        for method, path, body in (
                ("GET", "/volumes", None),
                ("GET", "/volumes/detail?all_tenants=1", None),
                ("POST", "/volumes", {"volume": {"size": 1,
                                                 "name": _name("x")}})):
            response = client.request(method, path, body, url="%s/%s%s" % (
                volume_root, url_project, path))
            if response[0] == 202:   # the hole: undo the create
                cleanup.add(_forget_volume, admin_volumes,
                            response[2]["volume"]["id"])
            _fault(response, 400, "badRequest", "Malformed request url")
    compute_root = demo_session.compute_endpoint.rstrip("/")
    for client, own, other in ((demo_compute, demo_pid, admin_pid),
                               (admin_compute, admin_pid, demo_pid)):
        response = client.request("GET", "/servers", url="%s/%s/servers" % (
            compute_root, other))
        _fault(response, 400, "badRequest", (
            "Malformed request URL: URL's project_id '%s' doesn't match "
            "Context's project_id '%s'" % (other, own)))
        assert client.request("GET", "/servers", url="%s/%s/servers" % (
            compute_root, own))[0] == 200
