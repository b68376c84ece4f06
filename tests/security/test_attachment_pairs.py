"""API hardening (issue 11, "Medium"), attacked on the lab: a volume and an
attachment, or a server and a volume, go together.

The demo user (project demo) plays the attacker against what belongs to
the admin project, through the deployed daemons' REST APIs: a detach
naming another volume's attachment (upstream: 400 "Mismatched volume and
attachment"), and every other path that takes a volume and an
attachment, or a server and a volume, together. Every assertion names
upstream's status and fault body; a resource a test creates is
registered for deletion at once (helpers in ``hardening.py``).
"""

import pytest

from tests.security import hardening
from tests.security.hardening import attachment_exists
from tests.security.hardening import fault
from tests.security.hardening import new_volume
from tests.security.hardening import reserve

MISMATCH = "Invalid input received: Mismatched volume and attachment"


@pytest.fixture(scope="module")
def demo_server(demo_compute, conf):
    """An ACTIVE server of the attacker's own, booted for this module."""
    yield from hardening.own_server(demo_compute, conf)


def test_os_detach_with_another_projects_attachment_is_refused(
        demo_volumes, admin_volumes, cleanup):
    """The attack: detach your own volume naming the victim's attachment
    id. Before, the victim's attachment was deleted."""
    victim_volume = new_volume(admin_volumes, cleanup, "victim")
    victim_att = reserve(admin_volumes, cleanup, victim_volume)
    own = new_volume(demo_volumes, cleanup, "attacker")
    response = demo_volumes.request(
        "POST", "/volumes/%s/action" % own,
        {"os-detach": {"attachment_id": victim_att}})
    fault(response, 400, "badRequest", MISMATCH)
    assert attachment_exists(admin_volumes, victim_att)
    assert admin_volumes.show_volume(victim_volume)["volume"]["status"] \
        == "reserved"


def test_force_detach_with_a_mismatched_attachment_is_refused(
        admin_volumes, cleanup):
    """os-force_detach (admin) takes both ids too; upstream checks the
    pair the same way before anything is torn down."""
    one = new_volume(admin_volumes, cleanup, "one")
    two = new_volume(admin_volumes, cleanup, "two")
    att = reserve(admin_volumes, cleanup, two)
    response = admin_volumes.request(
        "POST", "/volumes/%s/action" % one,
        {"os-force_detach": {"attachment_id": att}})
    fault(response, 400, "badRequest", MISMATCH)
    assert attachment_exists(admin_volumes, att)


def test_attachment_and_server_paths_keep_their_pairs(
        demo_volumes, demo_compute, admin_volumes, demo_server, cleanup):
    """The other paths naming a volume with an attachment or a server:
    another project's attachment or volume is never found (404) and is
    left as it was."""
    victim_volume = new_volume(admin_volumes, cleanup, "victim")
    victim_att = reserve(admin_volumes, cleanup, victim_volume)
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
        fault(response, 404, "itemNotFound")
    assert attachment_exists(admin_volumes, victim_att)

    base = "/servers/%s/os-volume_attachments" % demo_server
    fault(demo_compute.request("POST", base, {"volumeAttachment": {
        "volumeId": victim_volume}}), 404, "itemNotFound")
    one = "%s/%s" % (base, victim_volume)
    fault(demo_compute.request("GET", one), 404, "itemNotFound")
    fault(demo_compute.request("DELETE", one), 404, "itemNotFound")
    fault(demo_compute.request("PUT", one, {"volumeAttachment": {
        "volumeId": victim_volume, "delete_on_termination": True}},
        microversion="2.85"), 404, "itemNotFound")
    # The attacker's own volume, not attached to the attacker's server.
    own = new_volume(demo_volumes, cleanup, "attacker")
    fault(demo_compute.request("DELETE", "%s/%s" % (base, own)), 404,
          "itemNotFound")
    assert admin_volumes.show_volume(victim_volume)["volume"]["status"] \
        == "reserved"
    assert attachment_exists(admin_volumes, victim_att)
