"""ministack-audit on two compute hosts, ``vm`` and ``compute2``: the
hosts found beside minicompute.conf, each one's libvirtd read through
minicompute's libvirt driver (on fake libvirt hosts), its initiator
name from its own root, ``--fix`` through each host's libvirtd, and
what is printed."""

import json
import threading
import types
import xml.etree.ElementTree as ET

import pytest

from minicompute import exception as nova_exception
from minicompute.virt.libvirt.volume import iscsi
from ministack import exception
from ministack.ledgers import snapshot
from ministack_audit import cmd
from ministack_audit import fixes
from ministack_audit import hosts
from ministack_audit import ledgers

VOL = "11111111-1111-4111-8111-111111111111"
GONE = "22222222-2222-4222-8222-222222222222"
INST = "33333333-3333-4333-8333-333333333333"
TARGET = "iqn.2010-10.org.openstack:volume-"
IQN_C2 = "iqn.2004-10.org.ministack:compute2-abc"


def _uri(root):
    return "qemu:///system?socket=%s/run/libvirt/libvirt-sock" % root


def _disk(dev, serial=None, secret=None):
    auth = "<auth username='u'><secret type='iscsi' usage='%s'/></auth>" \
        % secret if secret else ""
    return ET.fromstring(
        "<disk type='network'><source protocol='iscsi' name='t/1'>%s"
        "</source><target dev='%s'/>%s</disk>" % (
            auth, dev, "<serial>%s</serial>" % serial if serial else ""))


class _Secret:
    def __init__(self, usage):
        self.usage = usage

    def usageID(self):
        return self.usage


class _Guest:
    def __init__(self, name, disks, active=True):
        self.name, self.uuid, self.disks = name, "libvirt-" + name, disks
        self.active = active

    def is_active(self):
        return self.active

    def get_disks(self, inactive=False):
        return dict(self.disks)


class _Host:
    """What minicompute's libvirt driver and the audit ask of its
    libvirt Host, for one fake libvirtd."""

    def __init__(self, uri, guests=(), secrets=(), refuse=None, hang=None):
        self.uri = uri
        self.guests = {g.name: g for g in guests}
        self.secrets = list(secrets)
        self.refuse, self.hang = refuse, hang
        self.log = []

    def get_connection(self):
        if self.hang is not None:
            self.hang.wait()
        if self.refuse:
            raise nova_exception.HypervisorUnavailable(host=self.uri)
        return types.SimpleNamespace(listAllSecrets=lambda: [
            _Secret(u) for u in self.secrets])

    def list_guests(self):
        self.get_connection()
        return list(self.guests.values())

    def get_guest(self, name):
        if name not in self.guests:
            raise nova_exception.InstanceNotFound(instance_id=name)
        return self.guests[name]

    def delete_secret(self, usage_type, usage):
        self.log.append(("delete_secret", usage))

    def close(self):
        self.log.append(("close",))


@pytest.fixture
def two_hosts(tmp_path):
    """HostSettings of vm and compute2, each with a root of its own
    under tmp_path; compute2's initiator name in its own /etc/iscsi."""
    made = {}
    for name in ("vm", "compute2"):
        root = tmp_path / name
        made[name] = hosts.HostSettings(
            name, _uri(root), types.SimpleNamespace(
                state_path=str(tmp_path / "state")), first=name == "vm")
    iscsi_dir = tmp_path / "compute2" / "etc" / "iscsi"
    iscsi_dir.mkdir(parents=True)
    (iscsi_dir / "initiatorname.iscsi").write_text(
        "## a comment\nInitiatorName=%s\n" % IQN_C2)
    return made


def _settings(host_list, timeout=5):
    return types.SimpleNamespace(
        name_template="instance-%08x", target_prefix=TARGET[:-7],
        volume_name_template="volume-%s", hosts=host_list,
        libvirt_timeout=timeout, host="vm")


def _libvirt(monkeypatch, module, fakes):
    monkeypatch.setattr(module, "libvirt_host", types.SimpleNamespace(
        Host=lambda uri: fakes[uri]))


def test_the_hosts_root_and_initiator(two_hosts, tmp_path):
    assert hosts.root_of("qemu:///system") == "/"
    assert hosts.root_of(_uri("/var/lib/ministack/hosts/compute2")) == \
        "/var/lib/ministack/hosts/compute2"
    assert hosts.root_of("qemu+ssh://subnode/system") is None
    assert hosts.read_initiator(two_hosts["compute2"]) == IQN_C2
    # no open-iscsi name: minicompute's own under state_path, never made
    assert hosts.read_initiator(two_hosts["vm"]) is None
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "initiatorname.iscsi").write_text(
        "InitiatorName=iqn.x:vm\n")
    assert hosts.read_initiator(two_hosts["vm"]) == "iqn.x:vm"


def test_load_settings_finds_every_host_beside_minicompute_conf(tmp_path):
    db = "sqlite:///%s" % (tmp_path / "nova.sqlite")
    (tmp_path / "minicompute.conf").write_text(
        "[DEFAULT]\nhost = vm\n[database]\nconnection = %s\n" % db)
    (tmp_path / "minicompute@compute2.conf").write_text(
        "[DEFAULT]\nhost = compute2\nmy_ip = 10.42.0.2\n[database]\n"
        "connection = %s\n[libvirt]\nconnection_uri = %s\n"
        % (db, _uri("/srv/hosts/compute2")))
    (tmp_path / "minicinder.conf").write_text("[DEFAULT]\n")
    settings = ledgers.load_settings(str(tmp_path / "minicompute.conf"),
                                     str(tmp_path / "minicinder.conf"))
    assert [(h.name, h.libvirt_uri, h.root, h.first)
            for h in settings.hosts] == [
        ("vm", "qemu:///system", "/", True),
        ("compute2", _uri("/srv/hosts/compute2"), "/srv/hosts/compute2",
         False)]
    assert settings.hosts[1].compute_conf.my_ip == "10.42.0.2"
    # a private stack's config elsewhere: its one host only
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "compute.conf").write_text(
        "[DEFAULT]\nhost = ps\n[database]\nconnection = %s\n" % db)
    settings = ledgers.load_settings(str(tmp_path / "other/compute.conf"),
                                     None)
    assert [h.name for h in settings.hosts] == ["ps"]


def test_read_every_hosts_domains_secrets_and_initiator(two_hosts,
                                                        monkeypatch):
    ours = "ministack-chap-%s%s" % (TARGET, VOL)
    gone = "ministack-chap-%s%s" % (TARGET, GONE)
    fakes = {
        two_hosts["vm"].libvirt_uri: _Host(two_hosts["vm"].libvirt_uri, [
            _Guest("instance-00000001", {"vda": _disk("vda")})]),
        two_hosts["compute2"].libvirt_uri: _Host(
            two_hosts["compute2"].libvirt_uri, [
                _Guest("instance-00000002", {
                    "vda": _disk("vda"),
                    "vdb": _disk("vdb", VOL, secret=ours)}),
                _Guest("bench-floor-1", {"vdb": _disk("vdb", VOL,
                                                      secret=gone)})],
            secrets=[ours, gone, "bench-floor-chap-x"])}
    _libvirt(monkeypatch, hosts, fakes)
    snap = snapshot.Snapshot(instances={INST: {
        "uuid": INST, "host": "compute2", "domain": "instance-00000002",
        "deleted": False}})
    hosts.read_libvirt(_settings(list(two_hosts.values())), snap)

    vm, c2 = snap.hosts["vm"], snap.hosts["compute2"]
    assert (vm["error"], c2["error"]) == (None, None)
    assert (vm["first"], c2["first"]) == (True, False)
    assert vm["domains"]["instance-00000001"]["disks"]["vda"]["serial"] \
        is None
    dom = c2["domains"]["instance-00000002"]
    assert dom["instance_uuid"] == INST
    assert dom["disks"]["vdb"]["serial"] == VOL
    assert "bench-floor-1" not in c2["domains"]     # not our naming
    # our secrets only; a guest not of our naming is not ours either
    assert c2["secrets"] == {
        ours: {"target_iqn": TARGET + VOL, "volume_id": VOL},
        gone: {"target_iqn": TARGET + GONE, "volume_id": GONE}}
    assert c2["secret_users"] == {ours}
    assert (vm["initiator"], c2["initiator"]) == (None, IQN_C2)
    assert all(("close",) in f.log for f in fakes.values())


def test_a_host_that_refuses_or_never_answers_is_recorded(two_hosts,
                                                          monkeypatch):
    vm, c2 = two_hosts["vm"], two_hosts["compute2"]
    hang = threading.Event()
    fakes = {vm.libvirt_uri: _Host(vm.libvirt_uri, refuse=True),
             c2.libvirt_uri: _Host(c2.libvirt_uri, hang=hang)}
    _libvirt(monkeypatch, hosts, fakes)
    snap = snapshot.Snapshot(instances={})
    try:
        hosts.read_libvirt(_settings([vm, c2], timeout=0.2), snap)
    finally:
        hang.set()
    assert "Connection to the hypervisor is broken" in \
        snap.hosts["vm"]["error"]
    assert snap.hosts["compute2"]["error"] == (
        "libvirtd at %s did not answer in 0.2 s" % c2.libvirt_uri)
    assert snap.hosts["compute2"]["domains"] is None
    assert snap.hosts["compute2"]["initiator"] == IQN_C2
    # one host: the audit cannot run, as before there were several
    with pytest.raises(nova_exception.HypervisorUnavailable):
        hosts.read_libvirt(_settings([vm]), snapshot.Snapshot())


# --- --fix through each host's libvirtd ---

class _Driver:
    """What Fixer asks of minicompute's LibvirtDriver."""

    def __init__(self, conf, host, kernel=False):
        self.conf, self.host, self.kernel = conf, host, kernel
        self._volume_drivers = {}
        self._initiator_iqn = None

    def init_host(self, name):
        self.host.log.append(("init_host", name))
        self._initiator_iqn = "iqn.2004-10.org.ministack:this-machine"
        self._volume_drivers["iscsi"] = object() if self.kernel else \
            iscsi.LibvirtNetISCSIVolumeDriver(self.host, self._initiator_iqn)

    def unplug_disk(self, ctxt, instance, dev):
        self.host.log.append(("unplug", instance["name"], dev))

    def replug_volume(self, ctxt, connection_info, instance, mountpoint):
        self.host.log.append((
            "replug", instance["name"], mountpoint,
            self._volume_drivers["iscsi"].initiator_iqn))

    def cleanup_host(self):
        self.host.close()


def _fixer(two_hosts, monkeypatch, kernel=False):
    vm, c2 = two_hosts["vm"], two_hosts["compute2"]
    fakes = {vm.libvirt_uri: _Host(vm.libvirt_uri),
             c2.libvirt_uri: _Host(c2.libvirt_uri, [_Guest(
                 "instance-00000002", {"vdb": _disk(
                     "vdb", VOL, secret="ministack-chap-kept")})])}
    _libvirt(monkeypatch, fixes, fakes)
    monkeypatch.setattr(fixes, "libvirt_driver", types.SimpleNamespace(
        LibvirtDriver=lambda conf, host: _Driver(conf, host, kernel)))
    settings = _settings([vm, c2])
    settings.compute_conf, settings.libvirt_uri = vm.compute_conf, \
        vm.libvirt_uri
    return fixes.Fixer(settings, snapshot.Snapshot(bdms=[{
        "id": 7, "connection_info": {"driver_volume_type": "iscsi"},
        "device_name": "/dev/vdb"}])), fakes[vm.libvirt_uri].log, \
        fakes[c2.libvirt_uri].log


def _div(kind, host, **data):
    return snapshot.Divergence(kind, "s", "d", "f", data=data, host=host)


def test_fix_goes_through_the_divergences_host(two_hosts, monkeypatch):
    fixer, vm_log, c2_log = _fixer(two_hosts, monkeypatch)
    fixer.apply([
        _div("disk_without_bdm", "compute2", instance_uuid=INST,
             domain="instance-00000002", dev="vdc"),
        _div("domain_without_instance", "vm", domain="instance-00000009"),
        _div("bdm_disk_missing", "compute2", bdm_id=7, instance_uuid=INST,
             domain="instance-00000002"),
        _div("secret_without_disk", "compute2", usage="ministack-chap-old"),
        _div("secret_without_disk", "compute2",
             usage="ministack-chap-kept"),      # a guest names it again
    ])
    assert c2_log == [
        ("unplug", "instance-00000002", "vdc"),
        ("init_host", "compute2"),
        # QEMU logs in as compute2, whose name its ACLs admit
        ("replug", "instance-00000002", "/dev/vdb", IQN_C2),
        ("delete_secret", "ministack-chap-old"),
        ("close",)]
    assert vm_log == [("close",)]    # instance-00000009 gone: done


def test_fix_on_a_host_it_cannot_plug_from_here(two_hosts, monkeypatch):
    fixer, _, c2_log = _fixer(two_hosts, monkeypatch, kernel=True)
    kernel = _div("bdm_disk_missing", "compute2", bdm_id=7,
                  instance_uuid=INST, domain="instance-00000002")
    nowhere = _div("domain_without_instance", "subnode", domain="x")
    fixer.apply([kernel, nowhere])
    assert not kernel.fixed and "kernel's initiator" in kernel.fix_error
    assert "its minicompute's reconciler does" in kernel.fix_error
    assert not nowhere.fixed and \
        "compute host subnode has no minicompute config" in nowhere.fix_error
    assert c2_log[-1] == ("close",)
    assert fixer.for_host("compute2") is fixer.for_host("compute2")
    assert fixer.for_host("vm") is fixer and fixer.for_host(None) is fixer


def test_use_initiator_needs_the_hosts_name(two_hosts):
    drv = _Driver(None, _Host("x"))
    drv.init_host("vm")
    with pytest.raises(exception.ConfigError):
        hosts.use_initiator(drv, two_hosts["vm"])   # no name known


# --- what is printed ---

def _main(monkeypatch, capsys, names, found, *argv):
    settings = types.SimpleNamespace(hosts=[
        hosts.HostSettings(n, "qemu:///system", None) for n in names])
    monkeypatch.setattr(ledgers, "load_settings", lambda *a: settings)
    monkeypatch.setattr(cmd, "audit", lambda *a, **kw: (found, found))
    monkeypatch.setattr(hosts, "read_initiator", lambda h: "iqn.x:" + h.name)
    rc = cmd.main(["--config-dir", "/nonexistent", *argv])
    return rc, capsys.readouterr().out


def test_text_names_the_host_when_there_are_several(monkeypatch, capsys):
    div = _div("disk_without_bdm", "compute2")
    rc, out = _main(monkeypatch, capsys, ["vm", "compute2"], [div])
    assert rc == 1
    assert out.splitlines()[0] == "disk_without_bdm: s [host compute2]"
    rc, out = _main(monkeypatch, capsys, ["vm", "compute2"], [])
    assert (rc, out) == (0, "no divergence on hosts vm, compute2\n")
    # one host: as before
    rc, out = _main(monkeypatch, capsys, ["vm"], [_div("x", "vm")])
    assert out == "x: s\n    d\n    fix: f\n"
    rc, out = _main(monkeypatch, capsys, ["vm"], [])
    assert out == "no divergence\n"


def test_json_carries_the_host(monkeypatch, capsys):
    div = _div("libvirt_unreachable", "compute2")
    rc, out = _main(monkeypatch, capsys, ["vm", "compute2"], [div],
                    "--json", "--libvirt-timeout", "3")
    report = json.loads(out)
    assert [d["host"] for d in report["found"]] == ["compute2"]
    assert report["hosts"] == [
        {"name": "vm", "libvirt_uri": "qemu:///system",
         "initiator": "iqn.x:vm"},
        {"name": "compute2", "libvirt_uri": "qemu:///system",
         "initiator": "iqn.x:compute2"}]
