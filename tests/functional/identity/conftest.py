"""Private miniapi (compute and image APIs) and minicinder daemons that
validate tokens at the lab's keystone (``tests/support/keystone.py``),
as the lab's own daemons do, but with a 2-second token cache so that a
revocation shows within the test's patience. No compute host: API paths
only."""

import pytest

from tests.support import daemons
from tests.support import keystone
from tests.support import private_stack


@pytest.fixture(scope="module")
def lab():
    return keystone.LabKeystone.find()


@pytest.fixture(scope="module")
def identity_stack(lab, tmp_path_factory):
    private_stack.skip_unless_lab()
    ps = private_stack.PrivateStack(tmp_path_factory.mktemp("identity"),
                                    "id")
    image_port = daemons.free_port()
    try:
        cinder = ps.start_cinder({
            "DEFAULT": {"auth_strategy": "keystone",
                        "osapi_volume_listen": "127.0.0.1"},
            "keystone_authtoken": lab.authtoken(
                "cinder", keystone.SHORT_TOKEN_CACHE_TIME)})
        api = ps.start_api(cinder, {
            "DEFAULT": {"rpc_call_timeout": 5},
            "api": {"auth_strategy": "keystone",
                    "image_listen_port": image_port},
            "cinder": {"auth_strategy": "keystone", "http_retries": 0},
            "keystone_authtoken": lab.authtoken(
                "nova", keystone.SHORT_TOKEN_CACHE_TIME),
            "service_user": lab.service_user()})
        yield {"lab": lab, "ps": ps, "api": api, "cinder": cinder,
               "compute_url": api.url + "/v2.1",
               "volume_url": cinder.url + "/v3/%s",
               "image_url": "http://127.0.0.1:%d" % image_port}
    finally:
        ps.cleanup()
