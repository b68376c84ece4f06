"""The audit on a kernel-path host: its iSCSI sessions vs its BDMs.

The snapshots are test_host_checks' two hosts, with ``vm`` connecting
through the kernel initiator: its BDM carries os-brick's device_path and
its ledger lists the kernel's sessions to our targets.
"""

from ministack_audit import hosts
from tests.unit.audit import test_host_checks as base

DEVICE = "/dev/disk/by-path/ip-192.0.2.10:3260-iscsi-%s-lun-1"


def kernel_snap(sessions):
    s = base.snap()
    bdm = s.bdms[0]
    bdm["connection_info"]["data"]["device_path"] = DEVICE % (
        base.TARGET + base.VOL1)
    s.hosts["vm"]["iscsi_sessions"] = sessions
    return s


def test_a_session_per_kernel_connected_bdm_is_clean():
    assert base.found(kernel_snap({base.TARGET + base.VOL1: base.VOL1})) \
        == []


def test_a_host_without_the_kernel_initiator_is_not_asked():
    s = kernel_snap(None)
    assert base.found(s) == []


def test_a_session_no_bdm_needs():
    stray = "55555555-5555-4555-8555-555555555555"
    s = kernel_snap({base.TARGET + base.VOL1: base.VOL1,
                     base.TARGET + stray: stray})
    (div,) = [d for d in base.checks.run(s)
              if d.kind == "session_without_disk"]
    assert div.host == "vm" and not div.safe
    assert div.data == {"target_iqn": base.TARGET + stray,
                        "volume_id": stray}
    assert "--logout" in div.fix


def test_a_kernel_connected_bdm_without_its_session():
    s = kernel_snap({})
    assert base.found(s) == [("bdm_without_session", "vm")]


def test_an_attach_in_flight_is_left_alone():
    s = kernel_snap({})
    s.in_flight = {base.INST1}
    assert base.found(s) == []


def test_read_sessions_keeps_our_targets(monkeypatch):
    answer = ("tcp: [1] 192.0.2.10:3260,1 %s%s (non-flash)\n"
              "tcp: [2] 192.0.2.99:3260,1 iqn.2001-05.com.other:x "
              "(non-flash)\n" % (base.TARGET, base.VOL1))
    monkeypatch.setattr(hosts.shutil, "which", lambda name: "/bin/" + name)
    monkeypatch.setattr(hosts.os.path, "isdir", lambda path: True)
    monkeypatch.setattr(hosts.executor, "execute",
                        lambda *cmd, **kw: (answer, ""))
    pattern = hosts.snapshot.template_re(base.TARGET + "%s")
    assert hosts.read_iscsi_sessions(pattern) == {
        base.TARGET + base.VOL1: base.VOL1}


def test_read_sessions_without_open_iscsi(monkeypatch):
    monkeypatch.setattr(hosts.shutil, "which", lambda name: None)
    assert hosts.read_iscsi_sessions(None) is None
