"""Only an admin may break the lab: ``ministack-fault`` and the compute
API's ``/v2.1/os-ministack-faults`` refuse anyone else (403, upstream's
``forbidden`` body), and a refused request arms nothing.

The demo user attacks with the raw REST client (every route and method
of the extension, with a body that would arm a fault for any attach of
the lab) and with the real command as a user types it, with the demo's
openrc and with the cloud of the demo's reader. The admin then checks
that nothing is armed.
"""

import os

import pytest

from tests.security.hardening import fault
from tests.support.login_shell import login_shell

URL = "/os-ministack-faults"
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ARM = {"fault": {"name": "driver-attach"}}


def _armed(admin_compute):
    status, _, body = admin_compute.request("GET", URL)
    assert status == 200, body
    return body["faults"]


@pytest.fixture(autouse=True)
def nothing_armed_before_or_after(admin_compute):
    assert _armed(admin_compute) == []
    yield
    armed = _armed(admin_compute)
    if armed:                       # the hole: take it back first
        admin_compute.request("DELETE", URL)
    assert armed == []


@pytest.mark.parametrize("method, path, body, action", [
    ("GET", URL, None, "list"),
    ("POST", URL, ARM, "create"),
    ("POST", URL, {"fault": {"name": "detach-refused",
                             "for_seconds": 86400}}, "create"),
    ("DELETE", URL, None, "delete"),
    ("DELETE", URL + "/driver-attach", None, "delete"),
])
def test_the_demo_user_cannot_arm_list_or_disarm(demo_compute, method,
                                                 path, body, action):
    fault(demo_compute.request(method, path, body), 403, "forbidden",
          "Policy doesn't allow ministack:os-ministack-faults:%s to be "
          "performed." % action)


def test_the_project_url_form_is_refused_too(demo_compute, demo_session):
    fault(demo_compute.request("POST", "/%s%s" % (demo_session.project_id,
                                                   URL), ARM),
          403, "forbidden")


@pytest.mark.parametrize("credentials", [
    "source %s/devstack/openrc demo demo &&" % REPO,
    "OS_CLOUD=ministack-reader"])
def test_the_command_as_a_non_admin_is_refused(credentials):
    done = login_shell("%s ministack-fault arm driver-attach" % credentials)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refused (HTTP 403)" in done.stderr, done.stderr
    assert "admin action" in done.stderr
    assert done.stdout == ""
