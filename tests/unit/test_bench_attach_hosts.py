"""bench_attach --host: which compute host the bench runs on and what it
reads of it (its libvirtd, initiator name, virt_type; the lab's portal),
the floors' disks and secrets on that host, the stack side's servers
pinned there or each reached through its own host's libvirtd, and the
scale run's per-host counts."""

import os
import sys
import xml.etree.ElementTree as ET

import pytest
import sqlalchemy as sa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import bench_attach  # noqa: E402
import bench_attach_floor as floor  # noqa: E402
import bench_attach_floor_concurrent as cfloor  # noqa: E402
import bench_attach_hosts as hosts  # noqa: E402
import bench_attach_ledger as ledger  # noqa: E402
import bench_attach_report as report  # noqa: E402
import bench_scale  # noqa: E402
import bench_scale_report  # noqa: E402

IQN2 = "iqn.2004-10.org.ministack:compute2-0123456789ab"


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    return path


@pytest.fixture
def lab(tmp_path):
    """A two-host lab's configs: the first host ``vm`` on this machine's
    libvirtd, ``compute2`` on its socket under its own root (where its
    initiator name is), minicinder on the link address."""
    conf = tmp_path / "etc"
    root = tmp_path / "hosts" / "compute2"
    uri2 = "qemu:///system?socket=%s/run/libvirt/libvirt-sock" % root
    _write(str(conf / "minicompute.conf"),
           "[DEFAULT]\nhost = vm\nmy_ip = 10.42.0.1\n"
           "state_path = %s\n[libvirt]\nconnection_uri = qemu:///system\n"
           "virt_type = qemu\n" % (tmp_path / "state"))
    _write(str(conf / "minicompute@compute2.conf"),
           "[DEFAULT]\nhost = compute2\nmy_ip = 10.42.0.2\n"
           "state_path = %s\n[compute]\ninstances_path = %s/instances\n"
           "[libvirt]\nconnection_uri = %s\nvirt_type = kvm\n" % (
               tmp_path / "state", root, uri2))
    _write(str(root / "etc" / "iscsi" / "initiatorname.iscsi"),
           "## written by the lab\nInitiatorName=%s\n" % IQN2)
    _write(str(conf / "minicinder.conf"),
           "[DEFAULT]\nmy_ip = 10.42.0.1\ntarget_port = 3260\n")
    return {"conf": str(conf), "uri2": uri2, "tmp": tmp_path}


# --- the portal and the initiator ---------------------------------------


@pytest.mark.parametrize("text, portal", [
    ("[DEFAULT]\nmy_ip = 10.42.0.1\n", ("10.42.0.1", 3260)),
    ("[DEFAULT]\nmy_ip = 10.42.0.1\ntarget_ip_address = 192.0.2.7\n"
     "target_port = 3261\n", ("192.0.2.7", 3261)),
    ("[DEFAULT]\nmy_ip = 10.42.0.1\ntarget_ip_address = $my_ip\n",
     ("10.42.0.1", 3260)),
    ("[DEFAULT]\nstate_path = /x\n", ("127.0.0.1", 3260)),
])
def test_lab_portal_as_minicinder_hands_it_out(tmp_path, text, portal):
    path = _write(str(tmp_path / "minicinder.conf"), text)
    assert hosts.lab_portal(path) == portal


def test_lab_portal_without_a_config_is_the_one_host_labs():
    assert hosts.lab_portal("/nonexistent/minicinder.conf") == (
        "127.0.0.1", 3260)


def test_host_initiator_under_the_hosts_own_root(lab):
    assert hosts.host_initiator(lab["uri2"], "/nonexistent") == IQN2


def test_host_initiator_falls_back_to_state_path(tmp_path):
    uri = "qemu:///system?socket=%s/h/run/libvirt/libvirt-sock" % tmp_path
    _write(str(tmp_path / "state" / "initiatorname.iscsi"),
           "InitiatorName=iqn.2004-10.org.ministack:qemu-own\n")
    assert hosts.host_initiator(uri, str(tmp_path / "state")) == \
        "iqn.2004-10.org.ministack:qemu-own"
    assert hosts.host_initiator(uri, str(tmp_path / "none")) is None
    # Another machine's libvirtd: its files are not here.
    assert hosts.host_initiator("qemu+ssh://other/system",
                                str(tmp_path / "state")) is None


# --- the site ------------------------------------------------------------


def test_site_of_the_second_host(lab):
    site = hosts.site("compute2", conf_dir=lab["conf"])
    assert (site.name, site.libvirt_uri, site.my_ip) == (
        "compute2", lab["uri2"], "10.42.0.2")
    assert site.config_file.endswith("minicompute@compute2.conf")
    assert site.virt_type == "kvm"
    assert site.portal == ("10.42.0.1", 3260)
    assert site.pinned and site.explicit
    assert site.initiator == IQN2
    assert site.floor_initiator("0123abcd") == IQN2
    assert "compute host compute2 (servers pinned here" in site.describe()
    assert "portal 10.42.0.1:3260" in site.describe()


def test_site_without_host_is_the_first_pinned_once_there_are_two(lab):
    site = hosts.site(None, conf_dir=lab["conf"])
    assert (site.name, site.libvirt_uri) == ("vm", "qemu:///system")
    assert site.pinned and not site.explicit
    # The floors keep the bench's own initiator name, as before --host.
    assert site.floor_initiator("0123abcd") == \
        "iqn.2004-10.org.ministack:bench-0123abcd"


def test_site_spread_leaves_the_placement_to_the_scheduler(lab):
    site = hosts.site(None, spread=True, conf_dir=lab["conf"])
    assert site.name == "vm" and not site.pinned
    assert hosts.site("compute2", spread=True,
                      conf_dir=lab["conf"]).pinned


def test_one_host_lab_is_not_pinned(tmp_path):
    conf = tmp_path / "etc"
    _write(str(conf / "minicompute.conf"),
           "[DEFAULT]\nhost = vm\nmy_ip = 127.0.0.1\n")
    site = hosts.site(None, conf_dir=str(conf))
    assert (site.name, site.libvirt_uri, site.portal) == (
        "vm", "qemu:///system", ("127.0.0.1", 3260))
    assert not site.pinned and not site.explicit


def test_site_of_an_unknown_host_refuses_naming_the_hosts(lab):
    with pytest.raises(SystemExit, match="compute9: not a compute host.*"
                       "vm, compute2"):
        hosts.site("compute9", conf_dir=lab["conf"])


def test_site_without_any_config_is_this_machines_libvirtd(tmp_path):
    site = hosts.site(None, conf_dir=str(tmp_path))
    assert (site.name, site.libvirt_uri, site.pinned) == (
        None, "qemu:///system", False)


def test_uri_of_each_host_and_a_subnodes_refused(lab):
    site = hosts.site(None, spread=True, conf_dir=lab["conf"])
    assert site.uri_of("vm") == "qemu:///system"
    assert site.uri_of("compute2") == lab["uri2"]
    with pytest.raises(SystemExit, match="subnode1.*not reachable"):
        site.uri_of("subnode1")


def test_cloud_project(tmp_path):
    path = _write(str(tmp_path / "clouds.yaml"),
                  "clouds:\n  ministack:\n    auth:\n"
                  "      project_name: demo\n      username: demo\n")
    assert hosts.cloud_project("ministack", path) == "demo"


def test_placement_from_novas_row(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "nova.sqlite")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE instances (id INTEGER, "
                             "uuid TEXT, host TEXT)"))
        conn.execute(sa.text("INSERT INTO instances VALUES "
                             "(26, 'u-1', 'compute2')"))
    engine.dispose()
    assert hosts.placement(url, "u-1", "instance-%08x") == (
        "compute2", "instance-0000001a")
    with pytest.raises(SystemExit, match="no instance row"):
        hosts.placement(url, "u-2", "instance-%08x")


def test_per_host_counts_servers_and_attaches():
    server_hosts = {"s1": "vm", "s2": "compute2", "s3": "vm"}
    pairs = [("s1", "v1"), ("s1", "v2"), ("s2", "v3"), ("s3", "v4")]
    counts = hosts.per_host(server_hosts, pairs)
    assert counts == {"compute2": {"servers": 1, "attaches": 1},
                      "vm": {"servers": 2, "attaches": 3}}
    assert hosts.per_host_line(counts) == (
        "compute2 1 servers, 1 attaches; vm 2 servers, 3 attaches")
    assert hosts.per_host({"s1": "vm"}) == {
        "vm": {"servers": 1, "attaches": 0}}


# --- the floors on the host ----------------------------------------------


def _source(xml_text):
    source = ET.fromstring(xml_text).find("source")
    return source.find("host").attrib, source.find("initiator/iqn").get(
        "name")


def test_floor_disk_names_the_labs_portal_and_the_initiator():
    fl = floor.Floor(None, "vg", "0123abcd", portal=("10.42.0.1", 3260),
                     initiator=IQN2)
    host, iqn = _source(fl.disk_xml("vdb", "iqn.x:t", "ser", "u", "usage"))
    assert host == {"name": "10.42.0.1", "port": "3260"}
    assert iqn == IQN2


def test_floor_defaults_are_the_one_host_labs():
    fl = floor.Floor(None, "vg", "0123abcd")
    host, iqn = _source(fl.disk_xml("vdb", "iqn.x:t", "ser", "u", "usage"))
    assert host == {"name": "127.0.0.1", "port": "3260"}
    assert iqn == "iqn.2004-10.org.ministack:bench-0123abcd"


class FakeSecret:
    def __init__(self):
        self.value = None

    def setValue(self, value):
        self.value = value


class FakeConn:
    """A host's libvirtd: the secrets defined in it."""

    def __init__(self, name):
        self.name, self.secrets = name, []

    def secretDefineXML(self, xml_text):
        self.secrets.append(xml_text)
        return FakeSecret()


class FakeDomain:
    def __init__(self):
        self.attached = []

    def attachDeviceFlags(self, xml_text, flags):
        self.attached.append(xml_text)


class FakeTgt:
    def __init__(self):
        self.created = []

    def create_target(self, iqn, path, lun, chap, initiators):
        self.created.append((iqn, path, list(initiators)))


def test_concurrent_floor_attaches_on_the_hosts_libvirtd_as_its_initiator():
    conn = FakeConn("compute2")
    cf = cfloor.ConcurrentFloor(conn, "vg", "0123abcd", uri="uri-2",
                                portal=("10.42.0.1", 3260), initiator=IQN2)
    assert cf.uri == "uri-2"
    guest = floor.Floor(conn, "vg", "0123abcd-c0", portal=cf.portal,
                        initiator=cf.initiator)
    guest.tgt, guest.domain = FakeTgt(), FakeDomain()
    cf.floors = [guest]
    [disk] = cfloor.plan("0123abcd", 1, 1)
    cf._attach(disk, {disk.name: "/dev/vg/x"})
    assert guest.tgt.created == [(disk.iqn, "/dev/vg/x", [IQN2])]
    assert len(conn.secrets) == 1 and disk.usage in conn.secrets[0]
    [attached] = guest.domain.attached
    host, iqn = _source(attached)
    assert (host["name"], iqn) == ("10.42.0.1", IQN2)


# --- the stack side ------------------------------------------------------


class FakeResponse:
    def __init__(self, status, body=None):
        self.status_code, self._body = status, body or {}
        self.content = b"x"

    def json(self):
        return self._body


class FakeCloud:
    def __init__(self):
        self.posts = []

    def compute(self, method, path, body=None, **kwargs):
        if method == "POST":
            self.posts.append(body)
            return FakeResponse(202, {"server": {"id": "s%d" % len(
                self.posts)}})
        return FakeResponse(200, {"server": {"status": "ACTIVE"}})


class FakeLibvirt:
    """libvirt.open: a connection per URI, each knowing its domains."""

    def __init__(self):
        self.opened = []

    def open(self, uri):
        self.opened.append(uri)
        return FakeLookup(uri)


class FakeLookup:
    def __init__(self, uri):
        self.uri = uri

    def lookupByName(self, name):
        return (self.uri, name)


def _bench(site, monkeypatch, placements):
    fake = FakeLibvirt()
    monkeypatch.setattr(bench_attach.libvirt, "open", fake.open)
    monkeypatch.setattr(bench_attach.hosts, "placement",
                        lambda db, sid, template: placements[sid])
    monkeypatch.setattr(bench_attach.guest_agent, "wait_for_agent",
                        lambda dom, timeout: 0)
    bench = object.__new__(bench_attach.Bench)
    bench.args = type("Args", (), {"image": "img", "flavor": "42"})()
    bench.site = site
    bench.cloud = bench.creator = FakeCloud()
    bench.conn = FakeLookup(site.libvirt_uri)
    bench.conns = {site.name: bench.conn}
    bench.nova_db, bench.template = "sqlite://", "instance-%08x"
    bench.servers, bench.server_hosts = {}, {}
    bench.all_servers = set()
    return bench, fake


def test_boot_pins_the_servers_to_the_host(lab, monkeypatch):
    site = hosts.site("compute2", conf_dir=lab["conf"])
    bench, fake = _bench(site, monkeypatch, {
        "s1": ("compute2", "instance-00000001"),
        "s2": ("compute2", "instance-00000002")})
    assert bench.boot(2) == ["s1", "s2"]
    assert [b["server"]["host"] for b in bench.creator.posts] == [
        "compute2", "compute2"]
    assert bench.server_hosts == {"s1": "compute2", "s2": "compute2"}
    assert bench.domain("s2") == (lab["uri2"], "instance-00000002")
    assert fake.opened == []        # the site's own connection


def test_boot_refuses_a_server_that_landed_elsewhere(lab, monkeypatch):
    site = hosts.site("compute2", conf_dir=lab["conf"])
    bench, _ = _bench(site, monkeypatch, {"s1": ("vm", "instance-1")})
    with pytest.raises(SystemExit, match="s1 is on vm, not on compute2"):
        bench.boot(1)


def test_spread_servers_are_reached_through_their_own_hosts_libvirtd(
        lab, monkeypatch):
    site = hosts.site(None, spread=True, conf_dir=lab["conf"])
    bench, fake = _bench(site, monkeypatch, {
        "s1": ("vm", "instance-00000001"),
        "s2": ("compute2", "instance-00000002")})
    bench.boot(2)
    assert all("host" not in b["server"] for b in bench.creator.posts)
    assert bench.domain("s1") == ("qemu:///system", "instance-00000001")
    assert bench.domain("s2") == (lab["uri2"], "instance-00000002")
    bench.domain("s2")
    assert fake.opened == [lab["uri2"]]      # opened once, kept
    assert set(bench.conns) == {"vm", "compute2"}


def test_one_host_lab_boots_as_before(tmp_path, monkeypatch):
    conf = tmp_path / "etc"
    _write(str(conf / "minicompute.conf"), "[DEFAULT]\nhost = vm\n")
    site = hosts.site(None, conf_dir=str(conf))
    bench, _ = _bench(site, monkeypatch, {"s1": ("vm", "instance-1")})
    bench.boot(1)
    assert "host" not in bench.creator.posts[0]["server"]


class SecretOf:
    def __init__(self, usage):
        self._usage = usage

    def usageID(self):
        return self._usage


class SecretConn:
    def __init__(self, usages, domains=()):
        self.usages, self.domains = usages, domains

    def listSecrets(self):
        return list(self.usages)

    def secretLookupByUUIDString(self, uuid):
        return SecretOf(self.usages[uuid])

    def listAllDomains(self):
        return [type("Dom", (), {"name": lambda self, n=n: n})()
                for n in self.domains]


def test_residue_looks_for_secrets_in_every_hosts_libvirtd(monkeypatch):
    monkeypatch.setattr(ledger.lvm, "LVM", lambda vg: type(
        "L", (), {"list_volumes": lambda self: []})())
    monkeypatch.setattr(ledger.tgt, "TgtAdm", lambda: type(
        "T", (), {"show_targets": lambda self: []})())
    bench = type("B", (), {})()
    bench.all_volumes, bench.all_servers = {"vol-1"}, set()
    bench.conn = SecretConn({"a": "bench-floor-chap-run1"},
                            domains=["bench-floor-run1", "instance-1"])
    bench.conns = {"vm": bench.conn,
                   "compute2": SecretConn({"b": "ministack-chap-x:vol-1",
                                           "c": "someone-else"})}
    bench.cloud = type("C", (), {"volume": lambda self, m, p: FakeResponse(
        404)})()
    left = ledger.our_residue(bench, "vg", "run1")
    assert sorted(left["secrets"]) == ["bench-floor-chap-run1",
                                       "ministack-chap-x:vol-1"]
    assert left["domains"] == ["bench-floor-run1"]


def test_report_names_the_host(capsys):
    report.report({"host": "compute2"}, 0, None)
    assert "raw floor (ms), on compute host compute2" in capsys.readouterr(
    ).out


# --- the scale run -------------------------------------------------------


def test_scale_rows_per_host():
    results = {
        "burst": {"hosts": {"compute2": {"servers": 5, "attaches": 40},
                            "vm": {"servers": 5, "attaches": 40}}},
        "under_load": {"hosts": {"compute2": {"servers": 5, "attaches": 8},
                                 "vm": {"servers": 5, "attaches": 8}}}}
    assert bench_scale_report.host_rows(results) == [
        ("compute2", "5", "40", "8"), ("vm", "5", "40", "8")]
    assert bench_scale_report.host_rows({}) == []
    # Interrupted before the API phase: the burst's hosts only.
    del results["under_load"]
    assert bench_scale_report.host_rows(results)[1] == ("vm", "5", "40", "0")


def test_scale_report_prints_the_hosts(capsys):
    bench_scale_report.report({"burst": None, "under_load": {"hosts": {
        "vm": {"servers": 2, "attaches": 4}}}}, 0, None)
    out = capsys.readouterr().out
    assert "== per compute host (placed by the scheduler)" in out
    assert "attaches under load" in out


def test_scale_hosts_of_its_servers():
    scale = object.__new__(bench_scale.Scale)
    scale.server_hosts = {"s1": "vm", "s2": "compute2", "old": "vm"}
    assert scale.hosts_of(["s1", "s2"]) == {"s1": "vm", "s2": "compute2"}


def test_without_any_config_every_host_is_the_local_libvirtd(tmp_path):
    site = hosts.site(None, conf_dir=str(tmp_path))
    assert site.uri_of("vm") == "qemu:///system"


def test_wait_status_stops_at_a_volume_in_error():
    bench = object.__new__(bench_attach.Bench)
    seen = iter(["creating", "error"])
    bench.volume_status = lambda vid: next(seen)
    with pytest.raises(SystemExit, match="v1 went error waiting for "
                       "available"):
        bench.wait_status("v1", "available", timeout=5)
    seen = iter(["creating", "available"])
    bench.wait_status("v1", "available", timeout=5)


class FakeVolumes:
    """Volume creates, the first of ``bad`` names failing once."""

    def __init__(self, bad=(), always_bad=()):
        self.bad, self.always_bad = set(bad), set(always_bad)
        self.status, self.created, self.deleted = {}, [], []

    def create_volume(self, name):
        vid = "%s#%d" % (name, len(self.created))
        self.created.append(vid)
        failing = name in self.always_bad or name in self.bad
        self.bad.discard(name)
        self.status[vid] = "error" if failing else "available"
        return vid

    def delete_volume(self, vid, wait=True):
        self.deleted.append(vid)
        self.status.pop(vid)


def _with_volumes(bench, volumes):
    bench.results = {}
    bench.create_volume = volumes.create_volume
    bench.delete_volume = volumes.delete_volume
    bench.volume_status = lambda vid: volumes.status.get(vid, "gone")
    bench.volume_statuses = lambda: dict(volumes.status)
    return bench


def test_create_volumes_makes_a_failed_create_again(capsys):
    volumes = FakeVolumes(bad={"c0-1"})
    bench = _with_volumes(object.__new__(bench_attach.Bench), volumes)
    vids = bench.create_volumes(["c0-0", "c0-1", "c1-0"])
    assert vids == ["c0-0#0", "c0-1#3", "c1-0#2"]
    assert volumes.deleted == ["c0-1#1"]
    assert bench.results["create_retries"] == 1
    assert "1 volume create(s) went error (c0-1#1)" in capsys.readouterr(
    ).out


def test_make_again_one_at_a_time_then_gives_up():
    volumes = FakeVolumes(always_bad={"x"})
    bench = _with_volumes(object.__new__(bench_attach.Bench), volumes)
    order = []
    create = bench.create_volume
    bench.create_volume = lambda name: order.append("create") or create(
        name)
    bench.wait_status = lambda vid, want: order.append("wait") or \
        bench_attach.Bench.wait_status(bench, vid, want)
    with pytest.raises(bench_attach.VolumeError, match="went error"):
        bench.create_volumes(["x"])
    # The first create, then each retry waited for before the next.
    assert order == ["create", "wait", "create", "wait", "create", "wait"]
    assert len(volumes.deleted) == 2
    assert bench.results["create_retries"] == 3


def test_scale_create_many_makes_failed_creates_again():
    volumes = FakeVolumes(bad={"s0-1", "s1-0"})
    scale = _with_volumes(object.__new__(bench_scale.Scale), volumes)
    vids = scale.create_many(["s0-0", "s0-1", "s1-0"])
    assert [v.split("#")[0] for v in vids] == ["s0-0", "s0-1", "s1-0"]
    assert all(volumes.status[v] == "available" for v in vids)
    assert sorted(volumes.deleted) == sorted(
        v for v in volumes.created if v not in vids)
    assert scale.results["create_retries"] == 2


def test_scale_wait_many_stops_at_an_error_unless_asked():
    volumes = FakeVolumes(always_bad={"x"})
    scale = _with_volumes(object.__new__(bench_scale.Scale), volumes)
    vid = volumes.create_volume("x")
    with pytest.raises(SystemExit, match="went error"):
        scale.wait_many([vid], "available")
    assert scale.wait_many([vid], "available", failed=True) == {vid}


def test_reports_note_the_retried_creates(capsys):
    report.report({"create_retries": 2}, 0, None)
    bench_scale_report.report({"create_retries": 3}, 0, None)
    out = capsys.readouterr().out
    assert "note: 2 volume create(s) went error and were made again" in out
    assert "note: 3 volume create(s) went error and were made again" in out


def test_settle_volume_leaves_a_volume_in_error_at_once(monkeypatch):
    import bench_attach_probes as probes
    monkeypatch.setattr(probes.time, "sleep", lambda s: pytest.fail(
        "waited for a volume in error"))
    bench = type("B", (), {})()
    answer = FakeResponse(200, {"volume": {"status": "error",
                                           "attachments": []}})
    answer.ok = True
    bench.cloud = type("C", (), {"volume": lambda self, m, p: answer})()
    probes.settle_volume(bench, None, "v1")
