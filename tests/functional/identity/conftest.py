"""The real miniapi daemon serving identity, compute and image APIs with
``auth_strategy = keystone`` (no compute host: API paths only)."""

import uuid

import pytest

from tests.functional import daemons
from tests.functional.identity import stack
from tests.functional.miniapi import conftest as api_conftest


@pytest.fixture(scope="module")
def keystone_api(tmp_path_factory):
    if not api_conftest.broker_up():
        pytest.skip("RabbitMQ (devstack/stack.sh) is not running")
    tmp = tmp_path_factory.mktemp("identity")
    key_file, nova_db = stack.bootstrap(tmp)
    ports = stack.Ports()
    common = {"state_path": str(tmp), "transport_url": daemons.RABBIT_URL,
              "control_exchange": "fid-%s" % uuid.uuid4().hex[:8],
              "rpc_call_timeout": 5}
    image_dir = api_conftest.write_image(str(tmp / "images"))
    daemon = stack.start_api(tmp / "api", ports, key_file, nova_db, common,
                             image_dir)
    yield {"daemon": daemon, "ports": ports, "key_file": key_file,
           "bootstrap_conf": str(tmp / "bootstrap.conf")}
    daemon.stop()
