"""ministack-audit on two compute hosts: every host's libvirtd, guests,
CHAP secrets and initiators, each finding naming its host.

* with guests on both hosts and nothing wrong: no divergence, both
  hosts checked;
* compute2's libvirtd stopped: ``libvirt_unreachable`` for compute2, and
  the first host is still audited;
* a disk unplugged by hand from a guest of compute2: found on compute2,
  and ``--fix`` plugs it back through compute2's libvirtd, as compute2's
  initiator, from compute2's address;
* a CHAP secret left in compute2's libvirtd: ``secret_without_disk``,
  which ``--fix`` undefines there.
"""

import json
import re
import subprocess
import uuid

from tests.multinode import conftest as mn
from tests.support import login_shell
from tests.tempest_style import waiters

#: Domains of the lab's nova (instance_name_template); another suite's
#: private stack on the same machine names its guests otherwise.
LAB_DOMAIN = re.compile(r"domain instance-[0-9a-f]{8}$")


def _ours(divergence):
    return divergence["kind"] != "domain_without_instance" or \
        LAB_DOMAIN.match(divergence["subject"])


def _audit(*options):
    """``ministack-audit --json``: (exit code, report), the report's
    findings only those about the lab's own guests."""
    done = login_shell.login_shell(
        "ministack-audit --json --grace 0 %s" % " ".join(options),
        timeout=300)
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    report = json.loads(done.stdout)
    report["found"] = [d for d in report["found"] if _ours(d)]
    rc = done.returncode if report["found"] else 0
    return rc, report


def _fixed_everything():
    """``--fix`` repaired what it found (exit 1: it found something) and
    nothing remains."""
    rc, report = _audit("--fix")
    remaining = [d for d in report["remaining"] if _ours(d)]
    assert rc in (0, 1) and remaining == [], report
    assert all(d["fixed"] for d in report["found"]), report
    rc, report = _audit()
    assert (rc, report["found"]) == (0, []), report


def _ministackctl(*args):
    done = login_shell.login_shell("ministackctl %s" % " ".join(args),
                                   timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _kinds(report, host=None):
    return sorted(d["kind"] for d in report["found"]
                  if host is None or d.get("host") == host)


def test_clean_with_guests_on_both_hosts(hosts, pinned):
    rc, report = _audit()
    assert (rc, report["found"]) == (0, []), report
    assert sorted(h["name"] for h in report["hosts"]) == sorted(hosts)


def test_compute2_libvirtd_down_is_reported_and_the_rest_audited(
        hosts, pinned, first_host):
    _ministackctl("stop", "libvirtd@compute2")
    try:
        rc, report = _audit()
    finally:
        _ministackctl("start", "libvirtd@compute2")
    assert rc == 1, report
    assert _kinds(report) == ["libvirt_unreachable"], report
    assert report["found"][0]["host"] == "compute2"
    # The first host's guests were checked (and are fine).
    assert [h["name"] for h in report["hosts"]][0] == first_host
    rc, report = _audit()
    assert (rc, report["found"]) == (0, []), report


def test_a_disk_unplugged_by_hand_on_compute2_is_plugged_back(
        admin, cleanup, hosts, pinned, first_host, guest_of):
    server_id = pinned["compute2"][0]
    volume_id = admin.create_volume(cleanup)["id"]
    admin.attach_volume(cleanup, server_id, volume_id)
    guest = guest_of(server_id)
    device = guest.device_for(volume_id)
    uri = hosts["compute2"].libvirt_uri
    domain = admin.admin_compute.show_server(server_id)["server"][
        "OS-EXT-SRV-ATTR:instance_name"]
    # The domain's target of the volume's disk (its source names it).
    target = [line.split()[0] for line in mn.virsh(
        uri, "domblklist", domain).splitlines() if volume_id in line]
    assert len(target) == 1, target
    done = subprocess.run(["virsh", "-c", uri, "detach-disk", domain,
                           target[0], "--live"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    waiters.wait_for("the guest to lose %s" % device,
                     lambda: device not in guest.disks(), timeout=60)
    rc, report = _audit()
    assert rc == 1 and _kinds(report) == ["bdm_disk_missing"], report
    assert report["found"][0]["host"] == "compute2"
    _fixed_everything()
    assert guest.device_for(volume_id)
    iqn = mn.initiator_of("compute2", first_host)
    assert mn.sessions_of(volume_id) == {iqn: [hosts["compute2"].my_ip]}
    admin.detach_volume(server_id, volume_id)


def test_a_secret_left_on_compute2_is_undefined_by_fix(admin, cleanup,
                                                       hosts, pinned):
    volume_id = admin.create_volume(cleanup)["id"]
    usage = "ministack-chap-iqn.2010-10.org.openstack:volume-%s" % volume_id
    secret = str(uuid.uuid4())
    uri = hosts["compute2"].libvirt_uri
    xml = ("<secret ephemeral='no' private='yes'><uuid>%s</uuid>"
           "<usage type='iscsi'><target>%s</target></usage></secret>"
           % (secret, usage))
    done = subprocess.run(["virsh", "-c", uri, "secret-define",
                           "/dev/stdin"], input=xml, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    cleanup.add(subprocess.run, ["virsh", "-c", uri, "secret-undefine",
                                 secret], capture_output=True)
    rc, report = _audit()
    assert rc == 1 and _kinds(report) == ["secret_without_disk"], report
    assert report["found"][0]["host"] == "compute2"
    _fixed_everything()
    assert secret not in mn.virsh(uri, "secret-list")
