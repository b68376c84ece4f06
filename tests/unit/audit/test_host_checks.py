"""The audit's checks and repairs on snapshots of two compute hosts,
``vm`` (the first) and ``compute2`` (no I/O)."""

import datetime

from ministack.ledgers import checks
from ministack.ledgers import repairs
from ministack.ledgers import snapshot

NOW = datetime.datetime(2024, 1, 1, 12, 0, 0)
OLD = NOW - datetime.timedelta(hours=1)
INST1 = "11111111-1111-4111-8111-111111111111"     # on vm
INST2 = "22222222-2222-4222-8222-222222222222"     # on compute2
VOL1 = "33333333-3333-4333-8333-333333333333"
VOL2 = "44444444-4444-4444-8444-444444444444"
IQN_VM = "iqn.2004-10.org.ministack:vm"
IQN_C2 = "iqn.2004-10.org.ministack:compute2-abc"
TARGET = "iqn.2010-10.org.openstack:volume-"
USAGE2 = "ministack-chap-" + TARGET + VOL2


def _disks(vol, secret=None):
    return {"vda": {"serial": None, "live": True, "config": True},
            "vdb": {"serial": vol, "live": True, "config": True,
                    "secret": secret}}


def _bdm(bid, inst, vol):
    return {"id": bid, "instance_uuid": inst, "volume_id": vol,
            "attachment_id": "att-%s" % bid, "device_name": "/dev/vdb",
            "connection_info": {"serial": vol, "data": {
                "target_iqn": TARGET + vol}},
            "updated_at": OLD}


def _att(bid, inst, vol, initiator):
    return {"id": "att-%s" % bid, "volume_id": vol, "instance_uuid": inst,
            "attach_status": "attached", "initiator": initiator,
            "updated_at": OLD}


def _host(domains, initiator, secrets=None, users=(), first=False):
    return {"uri": "qemu:///system", "first": first, "initiator": initiator,
            "domains": domains, "secrets": secrets or {},
            "secret_users": set(users), "error": None}


def snap(**kw):
    """One volume attached on each host, every ledger agreeing."""
    base = dict(
        instances={
            INST1: {"uuid": INST1, "host": "vm", "domain": "instance-1",
                    "deleted": False},
            INST2: {"uuid": INST2, "host": "compute2",
                    "domain": "instance-2", "deleted": False}},
        bdms=[_bdm(1, INST1, VOL1), _bdm(2, INST2, VOL2)],
        volumes={v: {"id": v, "status": "in-use", "deleted": False,
                     "updated_at": OLD} for v in (VOL1, VOL2)},
        attachments=[_att(1, INST1, VOL1, IQN_VM),
                     _att(2, INST2, VOL2, IQN_C2)],
        hosts={
            "vm": _host({"instance-1": {"instance_uuid": INST1,
                                        "active": True,
                                        "disks": _disks(VOL1)}}, IQN_VM,
                        first=True),
            "compute2": _host(
                {"instance-2": {"instance_uuid": INST2, "active": True,
                                "disks": _disks(VOL2)}}, IQN_C2,
                secrets={USAGE2: {"target_iqn": TARGET + VOL2,
                                  "volume_id": VOL2}},
                users=[USAGE2])},
        targets=[{"tid": i, "iqn": TARGET + v, "volume_id": v,
                  "acls": [iqn], "backing": "/dev/loop%d" % i}
                 for i, (v, iqn) in enumerate(((VOL1, IQN_VM),
                                               (VOL2, IQN_C2)), 1)],
        now=NOW, grace=60)
    base.update(kw)
    return snapshot.Snapshot(**base)


def found(s):
    return [(d.kind, d.host) for d in checks.run(s)]


def _domains(s, host):
    return s.hosts[host]["domains"]


def test_two_consistent_hosts_have_no_divergence():
    assert found(snap()) == []


def test_each_hosts_domains_against_its_own_instances_bdms():
    s = snap(bdms=[_bdm(1, INST1, VOL1)])      # compute2's BDM gone
    [div] = [d for d in checks.run(s) if d.kind == "disk_without_bdm"]
    assert (div.host, div.data["domain"]) == ("compute2", "instance-2")
    s = snap()
    del _domains(s, "compute2")["instance-2"]["disks"]["vdb"]
    [div] = checks.run(s)
    assert (div.kind, div.host, div.data["bdm_id"]) == (
        "bdm_disk_missing", "compute2", 2)


def test_a_domain_on_the_wrong_host():
    """nova says compute2, the domain runs on vm: that is the finding,
    and its disks are not held against vm (nor its BDM against vm)."""
    s = snap()
    _domains(s, "vm")["instance-2"] = _domains(s, "compute2").pop(
        "instance-2")
    [div] = checks.run(s)
    assert (div.kind, div.host, div.safe) == ("domain_on_wrong_host", "vm",
                                              False)
    assert div.data == {"domain": "instance-2", "instance_uuid": INST2,
                        "expected_host": "compute2"}
    assert "nova says instance %s is on compute2" % INST2 in div.detail
    # a copy on both hosts: only the stray one is a divergence
    s = snap()
    _domains(s, "vm")["instance-2"] = dict(
        _domains(s, "compute2")["instance-2"], active=False)
    assert found(s) == [("domain_on_wrong_host", "vm")]
    assert repairs.REPAIRS["domain_on_wrong_host"](None, s, {}) is False


def test_a_host_whose_libvirtd_did_not_answer():
    s = snap()
    s.hosts["compute2"].update(domains=None, secrets=None,
                               error="no answer in 20 s")
    del _domains(s, "vm")["instance-1"]["disks"]["vdb"]
    # vm is audited all the same; compute2's BDM is not held against a
    # domain nobody could read
    assert found(s) == [("libvirt_unreachable", "compute2"),
                        ("bdm_disk_missing", "vm")]
    div = checks.run(s)[0]
    assert (div.kind, div.host, div.safe) == ("libvirt_unreachable",
                                              "compute2", False)
    assert "no answer in 20 s" in div.detail
    assert "ministackctl start libvirtd@compute2" in div.fix
    s.hosts["vm"].update(domains=None, error="refused")
    [vm] = [d for d in checks.run(s) if d.host == "vm"]
    assert "ministackctl start libvirtd)" in vm.fix


def test_chap_secrets_left_in_a_hosts_libvirtd():
    s = snap()
    c2 = s.hosts["compute2"]
    c2["secret_users"] = set()
    assert found(s) == []     # its BDM is wired to the target: kept
    s.bdms.pop()
    s.attachments.pop()
    s.targets.pop()
    del _domains(s, "compute2")["instance-2"]["disks"]["vdb"]
    s.volumes[VOL2]["status"] = "available"
    [div] = checks.run(s)
    assert (div.kind, div.host) == ("secret_without_disk", "compute2")
    assert div.data == {"usage": USAGE2, "volume_id": VOL2}
    # the same volume's secret on vm is vm's own business
    s.hosts["vm"]["secrets"] = dict(c2["secrets"])
    assert found(s) == [("secret_without_disk", "compute2"),
                        ("secret_without_disk", "vm")]
    # a secret of a volume this Cinder never had is another stack's
    c2["secrets"] = {"ministack-chap-x": {"target_iqn": "x",
                                          "volume_id": None}}
    s.hosts["vm"]["secrets"] = {}
    assert found(s) == []


def test_a_secret_of_an_attach_in_flight_is_kept():
    s = snap()
    s.hosts["compute2"]["secret_users"] = set()
    s.bdms.pop()                 # the BDM has no connection_info yet
    del _domains(s, "compute2")["instance-2"]["disks"]["vdb"]
    s.in_flight = {INST2}
    assert "secret_without_disk" not in [k for k, _ in found(s)]
    s.in_flight = set()
    s.attachments[1]["updated_at"] = NOW
    assert "secret_without_disk" not in [k for k, _ in found(s)]


def test_an_attachment_whose_connector_is_another_hosts():
    s = snap()
    s.attachments[1]["initiator"] = IQN_VM
    s.targets[1]["acls"] = [IQN_VM]
    [div] = checks.run(s)
    assert (div.kind, div.host, div.safe) == (
        "attachment_wrong_initiator", "compute2", False)
    assert "(the initiator of vm)" in div.detail
    assert div.data["expected_initiator"] == IQN_C2
    # a host this machine has no config of: its initiator is not known
    s.instances[INST2]["host"] = "subnode"
    s.hosts.pop("compute2")
    assert found(s) == []


def test_an_orphan_attachment_is_not_also_a_wrong_initiator():
    """An attachment nova has no BDM for is an orphan_attachment, whose
    repair deletes it: its connector is not reported a second time (the
    recovery tier's orphan with an intruder's initiator)."""
    s = snap(bdms=[_bdm(1, INST1, VOL1)])
    s.attachments[1]["initiator"] = IQN_VM
    s.targets[1]["acls"] = [IQN_VM]
    kinds = [k for k, _ in found(s)]
    assert "orphan_attachment" in kinds
    assert "attachment_wrong_initiator" not in kinds


def test_acl_admits_exactly_the_live_attachments_initiators():
    s = snap()
    s.targets[1]["acls"] = [IQN_VM, IQN_C2]    # vm detached VOL2 long ago
    [div] = checks.run(s)
    assert (div.kind, div.host, div.data["initiator"]) == (
        "export_without_attachment", "vm", IQN_VM)
    assert "(host vm)" in div.detail
    s = snap()
    s.targets[1]["acls"] = []
    [div] = checks.run(s)
    assert (div.kind, div.host, div.data["initiator"]) == (
        "initiator_not_admitted", "compute2", IQN_C2)
    s.attachments[1]["updated_at"] = NOW          # just connecting
    assert found(s) == []


def test_multiattach_over_two_hosts():
    s = snap()
    s.attachments.append(_att(3, INST2, VOL1, IQN_C2))
    s.bdms.append(dict(_bdm(3, INST2, VOL1), device_name="/dev/vdc"))
    _domains(s, "compute2")["instance-2"]["disks"]["vdc"] = {
        "serial": VOL1, "live": True, "config": True}
    assert found(s) == [("initiator_not_admitted", "compute2")]
    s.targets[0]["acls"].append(IQN_C2)
    assert found(s) == []


def test_one_host_of_the_audit_finds_what_the_one_host_snapshot_does():
    one = snap(bdms=[], attachments=[], targets=[])
    one.hosts.pop("compute2")
    flat = snap(bdms=[], attachments=[], targets=[], hosts=None,
                domains=one.hosts["vm"]["domains"])
    assert [d.to_dict() for d in checks.run(one)] == \
        [d.to_dict() for d in checks.run(flat)]


# --- the repairs go to the divergence's host ---

class Hands(repairs.Hands):
    def __init__(self, name="vm", calls=None):
        self.name = name
        self.calls = [] if calls is None else calls
        self.hosts = {}

    def for_host(self, host):
        if host in (None, self.name):
            return self
        return self.hosts.setdefault(host, Hands(host, self.calls))

    def unplug_disk(self, instance_uuid, domain, dev):
        self.calls.append((self.name, "unplug", domain, dev))

    def destroy_bdm(self, bdm_id):
        self.calls.append((self.name, "destroy_bdm", bdm_id))

    def delete_secret(self, usage):
        self.calls.append((self.name, "delete_secret", usage))

    def ensure_export(self, volume_id, initiators):
        self.calls.append((self.name, "ensure_export", volume_id,
                           initiators))

    def delete_attachment(self, attachment_id):
        self.calls.append((self.name, "delete_attachment", attachment_id))

    def may_reset_volume(self, volume_id):
        return True

    def reset_volume(self, volume_id, status, attach_status=None):
        self.calls.append((self.name, "reset_volume", volume_id))


def _fix(s, hands):
    for div in checks.run(s):
        if div.safe:
            assert repairs.apply(div, s, hands), div
    return hands.calls


def test_repairs_on_compute2_go_through_compute2():
    """A disk nova forgot and a secret of a deleted volume on compute2,
    a disk nova forgot on vm: each repaired through its own host."""
    s = snap(bdms=[], attachments=[], targets=[])
    for vol in s.volumes.values():
        vol["status"] = "available"
    gone = "55555555-5555-4555-8555-555555555555"
    s.volumes[gone] = {"id": gone, "status": "deleted", "deleted": True,
                       "updated_at": OLD}
    usage = "ministack-chap-" + TARGET + gone
    s.hosts["compute2"]["secrets"][usage] = {"target_iqn": TARGET + gone,
                                             "volume_id": gone}
    assert _fix(s, Hands()) == [
        ("compute2", "unplug", "instance-2", "vdb"),
        ("vm", "unplug", "instance-1", "vdb"),
        ("compute2", "delete_secret", usage)]


def test_bdm_without_attachment_unplugs_from_the_instances_host():
    s = snap(attachments=[_att(1, INST1, VOL1, IQN_VM)])
    s.targets.pop()
    assert _fix(s, Hands()) == [("compute2", "unplug", "instance-2", "vdb"),
                                ("compute2", "destroy_bdm", 2),
                                ("vm", "reset_volume", VOL2)]


def test_initiator_not_admitted_admits_every_live_initiator():
    s = snap()
    s.attachments.append(_att(3, INST2, VOL1, IQN_C2))
    s.bdms.append(dict(_bdm(3, INST2, VOL1), device_name="/dev/vdc"))
    _domains(s, "compute2")["instance-2"]["disks"]["vdc"] = {
        "serial": VOL1, "live": True, "config": True}
    assert _fix(s, Hands()) == [
        ("compute2", "ensure_export", VOL1, [IQN_C2, IQN_VM])]
