"""A revoked token stops working on every service of the lab.

The attack: a token leaks (a log, a shell history, a stolen laptop); its
owner revokes it with ``openstack token revoke``. Keystone refuses it at
once; each service validates tokens with keystonemiddleware, which trusts
a validation for ``[keystone_authtoken] token_cache_time`` seconds (the
lab sets it in lib/keystone), so each service must refuse the token
within that time -- the compute API, the volume API and the image API.
The wait is a bounded poll, not a sleep.
"""

import os
import subprocess
import sys

import pytest
import requests

from tests.security import local_users as lu
from tests.support import waiting
from tests.tempest_style import auth


def _endpoints(conf, token_body):
    catalog = token_body["catalog"]
    return {
        "compute": auth._endpoint(catalog, ("compute",), conf.region)
        + "/servers",
        "volume": auth._endpoint(catalog, ("block-storage", "volumev3"),
                                 conf.region) + "/volumes",
        "image": auth._endpoint(catalog, ("image",), conf.region)
        + "/v2/images"}


def _cache_time():
    """The longest token_cache_time of the lab's services (300 is
    keystonemiddleware's default)."""
    times = [lu.ini(os.path.join(lu.CONF_DIR, name + ".conf"),
                    "keystone_authtoken", "token_cache_time") or "300"
             for name in ("miniapi", "minicinder")]
    return max(int(t) for t in times)


def test_revoked_token_is_refused_by_every_service(conf):
    if not conf.auth_url:
        pytest.skip("the lab runs without keystone (noauth)")
    resp = auth.password_login(conf, conf.user)
    token = resp.headers["X-Subject-Token"]
    urls = _endpoints(conf, resp.json()["token"])
    headers = {"X-Auth-Token": token}
    for name, url in urls.items():
        got = requests.get(url, headers=headers, timeout=30)
        assert got.status_code == 200, (name, got.status_code, got.text)
    # The owner revokes it, as an operator would: the real CLI, with the
    # lab's clouds.yaml (the token is on its command line, as upstream's
    # CLI takes it; it is dead the moment the command returns).
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env["OS_CLIENT_CONFIG_FILE"] = lu.CLOUDS_YAML
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "openstack"),
         "--os-cloud", "ministack", "token", "revoke", token],
        capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    check = requests.get(conf.auth_url + "/v3/auth/tokens", headers={
        "X-Auth-Token": token, "X-Subject-Token": token}, timeout=30)
    assert check.status_code in (401, 404), check.status_code
    pending = dict(urls)

    def still_accepting():
        for name, url in list(pending.items()):
            status = requests.get(url, headers=headers,
                                  timeout=30).status_code
            assert status in (200, 401), (name, status)
            if status == 401:
                del pending[name]
        return sorted(pending)
    waiting.wait_for("every API to refuse the revoked token (within "
                     "token_cache_time)", still_accepting,
                     lambda left: not left, timeout=_cache_time() + 30,
                     interval=1)
