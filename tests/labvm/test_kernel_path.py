"""The kernel paths in the lab VM: os-brick's iSCSI connect, LVM activated.

In the VM iscsi_tcp loads and device-mapper exists, so minicompute's
``auto`` takes the kernel initiator (os-brick's ISCSIConnector, iscsiadm
and iscsid, a host block device in the guest's ``<disk type='block'>``)
and minicinder's LVs are active at /dev/<vg>/<lv>. Every check runs in
the VM through tools/labvm, with the openstack CLI as a user types it.
Guests are slow there (nested TCG): the demo server is reused, one second
server is made for the multiattach check, and all is removed after. The
checks act as the demo user, who owns the demo server; the admin makes
the multiattach volume type and runs the audit.
"""

import json
import shlex
import uuid

import pytest

from tests.support.labvm import vm_run

OPENRC = "source /opt/ministack/devstack/openrc demo demo >/dev/null"
ADMIN = "source /opt/ministack/devstack/openrc admin admin >/dev/null"
SERVER = "demo"
VG = "stack-volumes-lvmdriver-1"
IQN_PREFIX = "iqn.2010-10.org.openstack:volume-"


def _sh(line, timeout=600):
    return vm_run("%s && %s" % (OPENRC, line), timeout=timeout,
                  check=True).stdout


def _os(*args, timeout=600):
    out = _sh("openstack %s -f json" % " ".join(shlex.quote(a)
                                                 for a in args),
              timeout=timeout)
    return json.loads(out) if out.strip() else None


def _dm_name(vg, lv):
    """device-mapper's name of an active LV: each '-' doubled, then joined
    by one '-' (``dmsetup ls`` lists it so)."""
    return "%s-%s" % (vg.replace("-", "--"), lv.replace("-", "--"))


def _sessions():
    # exit 21: no sessions at all
    out = vm_run("iscsiadm -m session 2>/dev/null || true",
                 check=True).stdout
    return [line for line in out.splitlines() if IQN_PREFIX in line]


def _volume(name, *more):
    vol = _os("volume", "create", "--size", "1", *more, name)
    _sh("for i in $(seq 60); do openstack volume show %s -c status -f value "
        "| grep -qx available && exit 0; sleep 2; done; exit 1" % vol["id"])
    return vol["id"]


def _attach(server, volume):
    _sh("openstack server add volume %s %s" % (server, volume))
    _sh("for i in $(seq 120); do openstack volume show %s -c status -f value"
        " | grep -qx in-use && exit 0; sleep 2; done; exit 1" % volume)


def _detach(server, volume):
    _sh("openstack server remove volume %s %s" % (server, volume))
    _sh("for i in $(seq 120); do openstack volume show %s -c attachments "
        "-f json | grep -q %s || exit 0; sleep 2; done; exit 1"
        % (volume, server if len(server) == 36 else
           _os("server", "show", server)["id"]))


@pytest.fixture
def cleanup(lab_vm):
    made = []
    yield made
    for kind, ident in reversed(made):
        vm_run("%s && openstack %s delete %s" % (OPENRC, kind, ident),
               timeout=600)


def test_compute_takes_the_kernel_path(lab_vm):
    log = vm_run("journalctl -u devstack@n-cpu --no-pager | "
                 "grep 'iSCSI via the' | tail -1", check=True).stdout
    assert "iSCSI via the kernel initiator" in log
    iqn = vm_run("sed -n 's/^InitiatorName=//p' "
                 "/etc/iscsi/initiatorname.iscsi", check=True).stdout.strip()
    assert iqn and iqn in log
    assert vm_run("systemctl is-active iscsid", check=True).stdout.strip() \
        == "active"


def test_attach_logs_in_and_detach_logs_out(lab_vm, cleanup):
    vol = _volume("kernel-%s" % uuid.uuid4().hex[:6])
    cleanup.append(("volume", vol))
    assert not [s for s in _sessions() if vol in s]
    # the LV is active: device-mapper has it, /dev/<vg>/<lv> is a device
    assert _dm_name(VG, "volume-%s" % vol) in vm_run(
        "dmsetup ls", check=True).stdout
    assert vm_run("test -b /dev/%s/volume-%s" % (VG, vol)).returncode == 0

    _attach(SERVER, vol)
    try:
        assert [s for s in _sessions() if vol in s]
        # the libvirt domain's name is shown to the admin only
        xml = vm_run("virsh dumpxml $(%s && openstack server show %s -c "
                     "OS-EXT-SRV-ATTR:instance_name -f value)"
                     % (ADMIN, _os("server", "show", SERVER)["id"]),
                     check=True).stdout
        assert "/dev/disk/by-path/" in xml and vol in xml
    finally:
        _detach(SERVER, vol)
    assert not [s for s in _sessions() if vol in s]


def test_multiattach_keeps_the_session_until_the_last_detach(lab_vm,
                                                             cleanup):
    vm_run("%s && (openstack volume type show multiattach >/dev/null 2>&1 "
           "|| openstack volume type create --property "
           "multiattach='<is> True' multiattach)" % ADMIN, check=True)
    vol = _volume("shared-%s" % uuid.uuid4().hex[:6], "--type",
                  "multiattach")
    cleanup.append(("volume", vol))
    second = _os("server", "create", "--image", "ministack-guest",
                 "--flavor", "42", "--nic", "none", "--wait",
                 "kernel-second-%s"
                 % uuid.uuid4().hex[:6], timeout=1200)["id"]
    cleanup.append(("server", second))

    _attach(SERVER, vol)
    _attach(second, vol)
    assert len([s for s in _sessions() if vol in s]) == 1
    _detach(SERVER, vol)
    # the second guest still reads the disk through the same session
    assert [s for s in _sessions() if vol in s]
    _detach(second, vol)
    assert not [s for s in _sessions() if vol in s]


def test_audit_is_clean(lab_vm):
    done = vm_run("%s && /opt/stack/venv/bin/ministack-audit" % ADMIN,
                  timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
