"""Tokens through real Keystone, end to end over HTTP.

The lab's upstream Keystone issues the tokens; private miniapi (compute
and image APIs) and minicinder daemons validate them with
keystonemiddleware's auth_token, as the lab's daemons do: every API
accepts a keystone token and takes user, project and roles from
keystone's answer only; refuses a missing, forged or revoked token with
keystonemiddleware's 401; accepts nova's service token only with the
service role; and the admin's project, user and role administration
through the real ``openstack`` CLI yields accounts that work at once
(what tempest's dynamic credentials do). No token or password reaches a
daemon's log.
"""

import json
import os
import subprocess
import sys
import uuid

from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import pytest
import requests

from tests.support import keystone
from tests.support import waiting

# The accounts the CLI test creates (and the fixture below removes).
PREFIX = "ftest-identity-"

UNAUTHORIZED = {"error": {
    "code": 401, "title": "Unauthorized",
    "message": "The request you have made requires authentication."}}


def _urls(stack, project_id):
    return {"compute": stack["compute_url"] + "/servers",
            "volume": stack["volume_url"] % project_id + "/volumes",
            "image": stack["image_url"] + "/v2/images"}


def _get(url, token=None, **headers):
    if token:
        headers["X-Auth-Token"] = token
    return requests.get(url, headers=headers, timeout=30)


def test_keystone_tokens_work_on_every_api(identity_stack):
    lab = identity_stack["lab"]
    token, access = lab.demo.token()
    catalog = {entry["type"] for entry in access.service_catalog.catalog}
    assert {"identity", "compute", "volumev3", "block-storage",
            "image"} <= catalog
    for name, url in _urls(identity_stack, access.project_id).items():
        resp = _get(url, token)
        assert resp.status_code == 200, (name, resp.status_code, resp.text)
    images = _get(identity_stack["image_url"] + "/v2/images", token).json()
    assert identity_stack["ps"].image["name"] in \
        [i["name"] for i in images["images"]]


def test_refusals_are_keystonemiddlewares_401(identity_stack):
    """No token, a noauth-style or forged token, or identity headers
    without a token: 401 with keystonemiddleware's body, naming the
    lab's keystone; discovery stays open."""
    lab = identity_stack["lab"]
    token, access = lab.demo.token()
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    spoofed = {"X-User-Id": "admin", "X-Project-Id": access.project_id,
               "X-Roles": "admin", "X-Identity-Status": "Confirmed"}
    for name, url in _urls(identity_stack, access.project_id).items():
        for attempt in ({}, {"X-Auth-Token": "demo:demo"},
                        {"X-Auth-Token": forged}, spoofed):
            resp = requests.get(url, headers=attempt, timeout=30)
            assert resp.status_code == 401, (name, attempt, resp.text)
            assert resp.json() == UNAUTHORIZED
            assert resp.headers["WWW-Authenticate"] == \
                'Keystone uri="%s"' % lab.url
    for url in (identity_stack["api"].url + "/",
                identity_stack["compute_url"],
                identity_stack["cinder"].url + "/"):
        assert _get(url).status_code in (200, 300), url


def test_identity_headers_of_the_client_do_not_count(identity_stack):
    """auth_token replaces whatever identity headers the client sent: a
    member claiming the admin role still gets a member's answer."""
    lab = identity_stack["lab"]
    token, _ = lab.demo.token()
    resp = _get(identity_stack["compute_url"] + "/os-services", token,
                **{"X-Roles": "admin", "X-Service-Roles": "service"})
    assert resp.status_code == 403, resp.text


def test_projects_are_isolated_and_the_reader_reads(identity_stack):
    lab = identity_stack["lab"]
    demo, demo_access = lab.demo.token()
    alt, alt_access = lab.accounts["ministack-alt"].token()
    reader, reader_access = lab.accounts["ministack-reader"].token()
    assert reader_access.project_id == demo_access.project_id
    assert alt_access.project_id != demo_access.project_id
    compute = identity_stack["compute_url"]
    created = requests.post(compute + "/servers", json={"server": {
        "name": "id-%s" % uuid.uuid4().hex[:6],
        "imageRef": identity_stack["ps"].image["id"], "flavorRef": "42",
        "networks": "none"}}, headers={"X-Auth-Token": demo}, timeout=30)
    assert created.status_code == 202, created.text
    server = created.json()["server"]["id"]
    try:
        assert _get(compute + "/servers/" + server, alt).status_code == 404
        assert _get(compute + "/servers", alt).json() == {"servers": []}
        listed = _get(compute + "/servers", reader).json()["servers"]
        assert [s["id"] for s in listed] == [server]
        # Another project's id in the URL: cinder's malformed URL.
        resp = _get(identity_stack["volume_url"] % demo_access.project_id
                    + "/volumes", alt)
        assert resp.status_code == 400, resp.text
    finally:
        requests.delete(compute + "/servers/" + server,
                        headers={"X-Auth-Token": demo}, timeout=30)


def test_service_token_needs_the_service_role(identity_stack):
    """nova's token (role service) as X-Service-Token is accepted; a
    member's token in its place is refused (service_token_roles_required),
    as keystonemiddleware does upstream."""
    lab = identity_stack["lab"]
    token, access = lab.demo.token()
    url = _urls(identity_stack, access.project_id)["volume"]
    assert _get(url, token, **{
        "X-Service-Token": lab.service_token("nova")}).status_code == 200
    other, _ = lab.accounts["ministack-alt"].token()
    resp = _get(url, token, **{"X-Service-Token": other})
    assert resp.status_code == 401 and resp.json() == UNAUTHORIZED


def test_revoked_token_is_refused_by_every_api(identity_stack):
    """``openstack token revoke``: each service refuses the token once
    keystonemiddleware's cache lets go of it (token_cache_time,
    keystone.SHORT_TOKEN_CACHE_TIME seconds here)."""
    lab = identity_stack["lab"]
    token, access = lab.demo.token()
    urls = _urls(identity_stack, access.project_id)
    for name, url in urls.items():
        assert _get(url, token).status_code == 200, name   # now cached
    lab.keystone_client().tokens.revoke_token(token)
    pending = dict(urls)

    def still_accepting():
        for name, url in list(pending.items()):
            status = _get(url, token).status_code
            assert status in (200, 401), (name, status)
            if status == 401:
                del pending[name]
        return sorted(pending)
    waiting.wait_for("every API to refuse the revoked token",
                     still_accepting, lambda left: not left,
                     timeout=keystone.SHORT_TOKEN_CACHE_TIME + 60,
                     interval=0.5)


def _openstack(*args, output=True):
    """The real ``openstack`` CLI as the lab's admin (its clouds.yaml):
    the parsed ``-f json`` output (``output=False``: a command without
    one)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env["OS_CLIENT_CONFIG_FILE"] = keystone.CLOUDS_YAML
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "openstack"),
         "--os-cloud", "ministack-admin", *args]
        + (["-f", "json"] if output else []),
        capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, (args, proc.stderr)
    return json.loads(proc.stdout) if output else None


def _new_account_works(stack, lab, name, password, project_id):
    """A token of the new account works on every API. Keystone revokes a
    user's tokens when the password changes, to the second: a token
    issued within that second is refused, so a refused token is followed
    by a new one (polled, bounded)."""
    def statuses():
        access = v3.Password(
            auth_url=lab.auth_url, username=name, password=password,
            project_name=name, user_domain_name="Default",
            project_domain_name="Default").get_access(ks_session.Session())
        assert access.project_id == project_id
        found = {url: _get(url, access.auth_token).status_code
                 for url in _urls(stack, project_id).values()}
        assert set(found.values()) <= {200, 401}, found
        return found
    waiting.wait_for("a token of %s to work on every API" % name, statuses,
                     lambda found: set(found.values()) == {200},
                     timeout=10, interval=0.2)


def test_admin_creates_a_working_account_with_the_cli(identity_stack):
    """``openstack project create``, ``user create``, ``role add`` (what
    tempest's dynamic credentials do): the new user's token works on the
    services at once, in its new project."""
    lab = identity_stack["lab"]
    name = PREFIX + uuid.uuid4().hex[:8]
    ks = lab.keystone_client()
    project = _openstack("project", "create", "--domain", "Default", name)
    try:
        user = _openstack("user", "create", "--domain", "Default",
                          "--project", name, name)
        try:
            _openstack("role", "add", "--user", name, "--project", name,
                       "member", output=False)
            roles = _openstack("role", "assignment", "list", "--user", name,
                               "--project", name, "--names")
            assert [r["Role"] for r in roles] == ["member"]
            # The password through the API, not the CLI's argv.
            password = uuid.uuid4().hex
            ks.users.update(user["id"], password=password)
            _new_account_works(identity_stack, lab, name, password,
                               project["id"])
        finally:
            ks.users.delete(user["id"])
    finally:
        ks.projects.delete(project["id"])


def test_no_secret_in_the_logs(identity_stack):
    lab = identity_stack["lab"]
    token, access = lab.demo.token()
    for url in _urls(identity_stack, access.project_id).values():
        _get(url, token)
    secrets = [token, lab.admin.password, lab.demo.password,
               lab.service_password]
    for daemon in (identity_stack["api"], identity_stack["cinder"]):
        log = daemon.log()
        assert log, daemon.name
        for secret in secrets:
            assert secret not in log, daemon.name


@pytest.fixture(autouse=True)
def _no_leftover_project(identity_stack):
    """A test that dies half-way leaves no account of its own behind."""
    yield
    ks = identity_stack["lab"].keystone_client()
    for user in ks.users.list(domain="default"):
        if user.name.startswith(PREFIX):
            ks.users.delete(user)
    for project in ks.projects.list(domain="default"):
        if project.name.startswith(PREFIX):
            ks.projects.delete(project)
