"""Identity end to end over HTTP against the real miniapi daemon.

Tokens come from the daemon's keystone API and are used on its compute
and image APIs: discovery, the 201 + X-Subject-Token contract, and every
refusal (wrong password, tampered, foreign and expired tokens, malformed
bodies, another project), plus no secret in any response or log line.
"""

import requests
from cryptography import fernet

from ministack.identity import tokens
from tests.functional.identity import stack
from tests.functional.miniapi import conftest as api_conftest


def _auth(ports, user, password, project):
    return requests.post(ports.identity_url + "/v3/auth/tokens", json={
        "auth": {"identity": {"methods": ["password"], "password": {
            "user": {"name": user, "domain": {"name": "Default"},
                     "password": password}}},
            "scope": {"project": {"name": project,
                                  "domain": {"name": "Default"}}}}},
        timeout=30)


def _token(ports, user):
    resp = _auth(ports, user, stack.PASSWORDS[user], user)
    assert resp.status_code == 201, resp.text
    return resp.headers["X-Subject-Token"], resp.json()["token"]


def test_discovery_then_token_then_compute(keystone_api):
    ports = keystone_api["ports"]
    root = requests.get(ports.identity_url + "/", timeout=10)
    assert root.status_code == 300
    href = root.json()["versions"]["values"][0]["links"][0]["href"]
    assert href == ports.identity_url + "/v3/"
    token_id, token = _token(ports, "admin")
    catalog = {s["type"]: s["endpoints"][0]["url"] for s in token["catalog"]}
    assert catalog["compute"] == ports.url(ports.api) + "/v2.1"
    assert catalog["volumev3"].endswith("/v3/" + token["project"]["id"])
    resp = requests.get(catalog["compute"] + "/servers",
                        headers={"X-Auth-Token": token_id}, timeout=10)
    assert resp.status_code == 200 and resp.json() == {"servers": []}
    images = requests.get(catalog["image"] + "/v2/images",
                          headers={"X-Auth-Token": token_id}, timeout=10)
    assert [i["name"] for i in images.json()["images"]] == ["ftest-guest"]


def test_refusals(keystone_api):
    ports = keystone_api["ports"]
    compute = ports.url(ports.api) + "/v2.1/servers"
    assert _auth(ports, "admin", "wrong", "admin").status_code == 401
    assert _auth(ports, "demo", stack.PASSWORDS["demo"],
                 "admin").status_code == 401
    bad = requests.post(ports.identity_url + "/v3/auth/tokens",
                        data="{not json", timeout=10)
    assert bad.status_code == 400
    good, _ = _token(ports, "demo")
    forged_key = tokens.TokenFormatter(fernet.Fernet.generate_key())
    foreign = forged_key.issue("x", "admin", "y", "admin", [("r", "admin")],
                               ["password"], 3600)[0]
    with open(keystone_api["key_file"], "rb") as handle:
        real_key = tokens.TokenFormatter(handle.read().strip())
    expired = real_key.issue("x", "demo", "y", "demo", [("r", "member")],
                             ["password"], -5)[0]
    for token in (None, "admin:admin", good[:-4] + "AAAA", foreign, expired):
        headers = {"X-Auth-Token": token} if token else {}
        resp = requests.get(compute, headers=headers, timeout=10)
        assert resp.status_code == 401, token
        assert resp.json()["error"]["code"] == 401
        assert resp.headers["WWW-Authenticate"].startswith("Keystone uri=")


def test_member_is_isolated_and_not_admin(keystone_api):
    ports = keystone_api["ports"]
    admin, admin_body = _token(ports, "admin")
    demo, _ = _token(ports, "demo")
    base = ports.url(ports.api) + "/v2.1"
    created = requests.post(base + "/servers", json={"server": {
        "name": "adm-vm", "imageRef": api_conftest.IMAGE_ID,
        "flavorRef": "42", "networks": "none"}},
        headers={"X-Auth-Token": admin}, timeout=30)
    assert created.status_code == 202, created.text
    server_id = created.json()["server"]["id"]
    try:
        as_demo = {"X-Auth-Token": demo}
        assert requests.get(base + "/servers/" + server_id,
                            headers=as_demo, timeout=10).status_code == 404
        listed = requests.get(base + "/servers/detail", headers=as_demo,
                              timeout=10).json()["servers"]
        assert listed == []
        assert requests.get(base + "/servers/detail?all_tenants=True",
                            headers=as_demo, timeout=10).status_code == 403
        assert requests.get(base + "/os-services", headers=as_demo,
                            timeout=10).status_code == 403
        # Another project's id in a legacy URL: nova's malformed URL.
        other = "%s/%s/servers/%s" % (base, admin_body["project"]["id"],
                                      server_id)
        assert requests.get(other, headers=as_demo,
                            timeout=10).status_code == 400
    finally:
        requests.delete(base + "/servers/" + server_id,
                        headers={"X-Auth-Token": admin}, timeout=30)


def test_no_secret_in_the_log(keystone_api):
    ports = keystone_api["ports"]
    token_id, _ = _token(ports, "admin")
    _auth(ports, "admin", "leaked-guess", "admin")
    requests.get(ports.url(ports.api) + "/v2.1/servers",
                 headers={"X-Auth-Token": token_id}, timeout=10)
    log = keystone_api["daemon"].log()
    assert "Issued token" in log
    for secret in (token_id, stack.PASSWORDS["admin"], "leaked-guess",
                   stack.PASSWORDS["nova"]):
        assert secret not in log


def _openstack(env, *args):
    """The real ``openstack`` CLI with only the given OS_* environment."""
    import os
    import subprocess
    import sys
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    clean.update(env)
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "openstack"), *args],
        capture_output=True, text=True, env=clean, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_openstack_cli_token_and_app_credential(keystone_api):
    """OSC's token and v3applicationcredential plugins (no scope in the
    app credential body) get a working project-scoped token."""
    import json
    import os
    import subprocess
    import sys
    ports = keystone_api["ports"]
    auth_url = ports.identity_url + "/v3"
    token_id, token = _token(ports, "demo")
    rc, out, err = _openstack(
        {"OS_AUTH_TYPE": "v3token", "OS_AUTH_URL": auth_url,
         "OS_TOKEN": token_id, "OS_PROJECT_NAME": "demo",
         "OS_PROJECT_DOMAIN_NAME": "Default"},
        "token", "issue", "-f", "json")
    assert rc == 0, err
    assert json.loads(out)["project_id"] == token["project"]["id"]
    made = subprocess.run(
        [sys.executable, "-m", "ministack.identity.manage", "--config-file",
         keystone_api["bootstrap_conf"], "app_credential_create",
         "--user", "demo", "--project", "demo", "--name", "ftest-ac"],
        capture_output=True, text=True, check=True, timeout=60,
        env=dict(os.environ))
    fields = dict(line.split(" ", 1) for line in made.stdout.splitlines())
    env = {"OS_AUTH_TYPE": "v3applicationcredential",
           "OS_AUTH_URL": auth_url,
           "OS_APPLICATION_CREDENTIAL_ID": fields["id"],
           "OS_APPLICATION_CREDENTIAL_SECRET": fields["secret"]}
    rc, out, err = _openstack(env, "server", "list", "-f", "json")
    assert rc == 0, err
    assert json.loads(out) == []
    env["OS_APPLICATION_CREDENTIAL_SECRET"] = "wrong"
    rc, out, err = _openstack(env, "server", "list")
    assert rc != 0 and "401" in err and "Traceback" not in err


def test_service_token_helper(keystone_api):
    """ministack.identity.client: the user's token plus nova's service
    token (role ``service``), fetched from the identity API."""
    from oslo_config import cfg

    from ministack import context
    from ministack.identity import client
    from ministack.identity import conf as identity_conf
    ports = keystone_api["ports"]
    conf = cfg.ConfigOpts()
    identity_conf.register_opts(conf)
    conf([], project="ftest")
    for key, value in stack.service_user(ports.identity_url).items():
        conf.set_override(key, value, group="service_user")
    user_token, _ = _token(ports, "demo")
    ctxt = context.RequestContext(auth_token=user_token, user_id="u",
                                  project_id="p")
    headers = client.auth_headers(conf, ctxt)
    assert headers["X-Auth-Token"] == user_token
    with open(keystone_api["key_file"], "rb") as handle:
        formatter = tokens.TokenFormatter(handle.read().strip())
    service = formatter.verify(headers["X-Service-Token"])
    assert service.user_name == "nova"
    assert sorted(service.role_names) == ["admin", "service"]
    plugin = client.get_auth_plugin(conf, ctxt, "http://cinder/v3/p")
    import keystoneauth1.session
    sent = plugin.get_headers(keystoneauth1.session.Session())
    assert sent["X-Auth-Token"] == user_token
    assert formatter.verify(sent["X-Service-Token"]).user_name == "nova"
