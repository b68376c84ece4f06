"""Only a service may tell Nova that something happened to a server:
``POST /v2.1/os-server-external-events`` refuses the demo user (403,
upstream's ``forbidden`` body for policy
``os_compute_api:os-server-external-events:create``) and a refused
request changes nothing: no instance action is recorded, nothing is cast
to the server's host, the server is as it was.

A ``volume-extended`` event makes the compute host resize a disk in the
running guest (issue 29); Cinder sends it with its service account's
token (the ``service`` role). The demo user attacks its own server (the
lab's ``demo``) and the admin's view of it, with every event name the
schema knows, through both URL forms, and with headers that would make
a careless API believe it is a service: its own token as the service
token, ``X-Roles``, ``X-Service-Roles``, ``X-Identity-Status``.
"""

import uuid

import pytest

from tests.security.hardening import fault

URL = "/os-server-external-events"
MESSAGE = ("Policy doesn't allow os_compute_api:os-server-external-events:"
           "create to be performed.")
EVENTS = ("volume-extended", "network-changed", "network-vif-plugged",
          "network-vif-unplugged", "network-vif-deleted", "power-update",
          "accelerator-request-bound", "volume-reimaged")


@pytest.fixture(scope="module")
def server(demo_compute):
    """The demo user's own server (stack.sh boots ``demo``)."""
    servers = demo_compute.request("GET", "/servers?name=^demo$",
                                   expected=200)[2]["servers"]
    assert servers, "the lab has no demo server: ./lab.sh"
    return servers[0]["id"]


def _state(admin_compute, server_id):
    """What a refused event must not change: the server's extend_volume
    actions (as the admin sees them; an accepted volume-extended records
    one before it is cast to the host), its status and its host. (Other
    actions are left out: the lab's demo server is shared, someone may
    attach to it meanwhile.)"""
    actions = admin_compute.request(
        "GET", "/servers/%s/os-instance-actions" % server_id, expected=200,
        microversion="2.84")[2]["instanceActions"]
    shown = admin_compute.show_server(server_id)["server"]
    return ([a["request_id"] for a in actions
             if a["action"] == "extend_volume"],
            shown["status"], shown.get("OS-EXT-SRV-ATTR:host"))


@pytest.fixture
def unchanged(admin_compute, server):
    before = _state(admin_compute, server)
    yield
    assert _state(admin_compute, server) == before


def _event(name, server_id):
    event = {"name": name, "server_uuid": server_id}
    if name in ("volume-extended", "volume-reimaged"):
        event["tag"] = str(uuid.uuid4())
    return event


@pytest.mark.parametrize("name", EVENTS)
def test_the_demo_user_cannot_send_an_event(demo_compute, server, unchanged,
                                            name):
    fault(demo_compute.request("POST", URL, {"events": [
        _event(name, server)]}, microversion="2.93"), 403, "forbidden",
        MESSAGE)


def test_the_project_url_form_is_refused_too(demo_compute, demo_session,
                                             server, unchanged):
    fault(demo_compute.request(
        "POST", "/%s%s" % (demo_session.project_id, URL),
        {"events": [_event("volume-extended", server)]},
        microversion="2.51"), 403, "forbidden", MESSAGE)


@pytest.mark.parametrize("headers", [
    {"X-Roles": "admin,service", "X-Service-Roles": "service"},
    {"X-Identity-Status": "Confirmed", "X-Roles": "service",
     "X-Is-Admin-Project": "True"},
])
def test_headers_do_not_make_the_demo_user_a_service(
        demo_compute, server, unchanged, headers):
    fault(demo_compute.request("POST", URL, {"events": [
        _event("volume-extended", server)]}, microversion="2.51",
        headers=headers), 403, "forbidden", MESSAGE)


def test_its_own_token_is_no_service_token(demo_compute, demo_session,
                                           server, unchanged):
    """keystonemiddleware's answer (``service_token_roles_required``): a
    service token without the service role is invalid, 401."""
    fault(demo_compute.request("POST", URL, {"events": [
        _event("volume-extended", server)]}, microversion="2.51",
        headers={"X-Service-Token": demo_session.token}), 401, "error",
        "The request you have made requires authentication.")


def test_a_batch_for_many_servers_is_refused_whole(demo_compute, server,
                                                   unchanged):
    """Not a 207 that accepts some: the caller is refused before any
    event is looked at."""
    fault(demo_compute.request("POST", URL, {"events": [
        _event("volume-extended", server),
        _event("volume-extended", str(uuid.uuid4()))]},
        microversion="2.51"), 403, "forbidden", MESSAGE)
