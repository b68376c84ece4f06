"""One host's faults leave the other host working, and end clean.

* compute2's minicompute SIGKILLed in the middle of an attach (held in
  the hypervisor step by SIGSTOPping compute2's libvirtd): the first
  host attaches meanwhile; compute2's supervisor starts its minicompute
  again and its start-up recovery rolls the attach back;
* compute2's libvirtd killed in the middle of an attach: the seed's
  first recovery path on compute2 (the driver attach fails: the Cinder
  attachment is deleted, the BDM destroyed, the volume ``available``),
  the first host unaffected; once libvirtd is back the next attach on
  compute2 works;
* compute2's minicompute stopped: its service goes down and the compute
  API refuses an attach to a server there with nova's 409, while the
  first host attaches.

Every test ends with ``ministack-audit`` finding nothing.
"""

import json
import os
import signal
import time

import pytest

from tests.support import login_shell
from tests.tempest_style import waiters

STATUS_DIR = "/opt/stack/status"


def _pid(name):
    with open(os.path.join(STATUS_DIR, name)) as handle:
        return int(handle.read().strip())


def _volume_status(admin, volume_id):
    return admin.volumes.show_volume(volume_id)["volume"]["status"]


def _wait_status(admin, volume_id, wanted, timeout=120):
    return waiters.wait_for_volume_status(admin.volumes, volume_id, wanted,
                                          timeout=timeout)


def _attached_volumes(admin, server_id):
    return [a["volumeId"] for a in admin.compute.list_volume_attachments(
        server_id)["volumeAttachments"]]


def _ministackctl(*args):
    done = login_shell.login_shell("ministackctl %s" % " ".join(args),
                                   timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _compute2_up(admin, up=True):
    def state():
        services = admin.admin_compute.request(
            "GET", "/os-services?binary=nova-compute&host=compute2",
            expected=200)[2]["services"]
        return services[0]["state"] if services else None
    waiters.wait_for("compute2's nova-compute to be %s" % (
        "up" if up else "down"), state,
        lambda s: s == ("up" if up else "down"), timeout=150, interval=2)


def _audit_clean():
    done = login_shell.login_shell("ministack-audit --json", timeout=300)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and not report["found"], report


def _meanwhile_the_first_host_attaches(admin, cleanup, server_id):
    volume_id = admin.create_volume(cleanup)["id"]
    admin.attach_volume(cleanup, server_id, volume_id)
    admin.detach_volume(server_id, volume_id)


@pytest.fixture
def compute2_libvirtd_resumed():
    """Whatever a test does to compute2's libvirtd, it answers after."""
    yield
    try:
        os.kill(_pid("libvirtd@compute2.pid"), signal.SIGCONT)
    except (OSError, ValueError):
        pass
    _ministackctl("start", "libvirtd@compute2", "minicompute@compute2")


def _hold_an_attach_in_the_hypervisor(admin, cleanup, server_id):
    """POST an attach to ``server_id`` (on compute2) with compute2's
    libvirtd stopped: the host runs attachment_update, then waits in
    libvirt's attach. :returns: the volume id."""
    volume_id = admin.create_volume(cleanup)["id"]
    os.kill(_pid("libvirtd@compute2.pid"), signal.SIGSTOP)
    admin.compute.attach_volume(server_id, volume_id)
    cleanup.add(admin._detach_if_attached, server_id, volume_id)
    _wait_status(admin, volume_id, "attaching", timeout=60)
    time.sleep(1)           # past attachment_update, into libvirt's call
    return volume_id


def test_compute2_minicompute_killed_mid_attach(
        admin, cleanup, pinned, first_host, compute2_libvirtd_resumed):
    server_id = pinned["compute2"][0]
    volume_id = _hold_an_attach_in_the_hypervisor(admin, cleanup, server_id)
    daemon = _pid("minicompute@compute2.child.pid")
    os.kill(daemon, signal.SIGKILL)
    _meanwhile_the_first_host_attaches(admin, cleanup,
                                       pinned[first_host][0])
    os.kill(_pid("libvirtd@compute2.pid"), signal.SIGCONT)
    # The supervisor starts a new minicompute@compute2; its start-up
    # recovery rolls the interrupted attach back.
    waiters.wait_for("a new minicompute@compute2",
                     lambda: _pid("minicompute@compute2.child.pid"),
                     lambda pid: pid != daemon, timeout=60,
                     ignoring=(OSError, ValueError))
    _wait_status(admin, volume_id, "available", timeout=180)
    assert volume_id not in _attached_volumes(admin, server_id)
    _audit_clean()


def test_compute2_libvirtd_killed_mid_attach(
        admin, cleanup, pinned, first_host, compute2_libvirtd_resumed):
    server_id = pinned["compute2"][0]
    volume_id = _hold_an_attach_in_the_hypervisor(admin, cleanup, server_id)
    os.kill(_pid("libvirtd@compute2.pid"), signal.SIGKILL)
    # The seed's first recovery path, on compute2 alone.
    _wait_status(admin, volume_id, "available", timeout=180)
    assert volume_id not in _attached_volumes(admin, server_id)
    _meanwhile_the_first_host_attaches(admin, cleanup,
                                       pinned[first_host][0])
    _ministackctl("start", "libvirtd@compute2")
    # Its guests outlived libvirtd; the next attach there works.
    admin.attach_volume(cleanup, server_id, volume_id)
    admin.detach_volume(server_id, volume_id)
    _audit_clean()


def test_attach_to_a_server_on_a_down_host_is_refused(
        admin, cleanup, pinned, first_host, compute2_libvirtd_resumed):
    server_id = pinned["compute2"][0]
    volume_id = admin.create_volume(cleanup)["id"]
    _ministackctl("stop", "minicompute@compute2")
    _compute2_up(admin, up=False)
    _, _, fault = admin.compute.request(
        "POST", "/servers/%s/os-volume_attachments" % server_id,
        {"volumeAttachment": {"volumeId": volume_id}}, expected=409)
    assert fault == {"conflictingRequest": {
        "code": 409, "message": "Compute service of compute2 is "
                                "unavailable at this time."}}, fault
    assert _volume_status(admin, volume_id) == "available"
    _meanwhile_the_first_host_attaches(admin, cleanup,
                                       pinned[first_host][0])
    _ministackctl("start", "minicompute@compute2")
    _compute2_up(admin)
    _audit_clean()
