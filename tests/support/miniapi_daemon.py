"""The real miniapi daemon as a subprocess, for functional tests (the
fixtures are in ``tests/functional/miniapi/conftest.py``; minicinder's
suite starts one too).

miniapi runs from its console script with a generated config
(``api_sections``), its own SQLite nova DB in the test's temp dir, one
registered image, a free port, and the real RabbitMQ broker
(``tests/support/daemons.py``). ``Raw`` sends raw HTTP, so invalid input
can be sent as is.
"""

import json
import os
import uuid

import kombu
import pytest
import requests

from tests.support import daemons

IMAGE_ID = "9a4b0c1e-2f3d-4e5a-8b6c-7d8e9f0a1b2c"


def broker_up():
    try:
        with kombu.Connection(daemons.RABBIT_URL.replace("rabbit://",
                                                         "amqp://"),
                              connect_timeout=3) as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
        return True
    except Exception:
        return False


needs_broker = pytest.mark.skipif(
    not broker_up(), reason="RabbitMQ (devstack/stack.sh) is not running")


def write_image(root):
    """Register one guest image record, as devstack's lib/image does."""
    image_dir = os.path.join(root, IMAGE_ID)
    os.makedirs(image_dir, exist_ok=True)
    with open(os.path.join(image_dir, "image.json"), "w") as handle:
        json.dump({"id": IMAGE_ID, "name": "ftest-guest",
                   "disk": "disk.qcow2", "disk_format": "qcow2",
                   "min_disk": 1, "min_ram": 128}, handle)
    return root


def api_sections(tmp_path, cinder_url=None, **api_extra):
    state = str(tmp_path)
    sections = {
        "DEFAULT": {"state_path": state,
                    "transport_url": daemons.RABBIT_URL,
                    "control_exchange": "ftest-%s" % uuid.uuid4().hex[:8],
                    "rpc_call_timeout": 5},
        "database": {"connection": "sqlite:///%s/nova.sqlite" % state},
        "api": dict({"listen": "127.0.0.1",
                     "image_dir": write_image(os.path.join(state,
                                                           "images"))},
                    **api_extra),
    }
    if cinder_url:
        sections["cinder"] = {"endpoint_template":
                              cinder_url + "/v3/%(project_id)s",
                              "http_retries": 0}
    return sections


def start_api(tmp_path, cinder_url=None, **api_extra):
    return daemons.start_daemon(
        "miniapi", api_sections(tmp_path, cinder_url, **api_extra),
        tmp_path, ready=daemons.http_ready("/"),
        port_option=("api", "listen_port"))


class Raw:
    """Raw HTTP against a daemon, so invalid input can be sent as is."""

    def __init__(self, base, token="admin:p1"):
        self.base = base
        self.token = token

    def __call__(self, method, path, body=None, raw=None, version=None,
                 token=None, headers=None):
        hdrs = {"X-Auth-Token": token or self.token,
                "Content-Type": "application/json"}
        if version:
            hdrs["OpenStack-API-Version"] = "compute %s" % version
        hdrs.update(headers or {})
        data = raw if raw is not None else (
            json.dumps(body) if body is not None else None)
        return requests.request(method, self.base + path, data=data,
                                headers=hdrs, timeout=30)
