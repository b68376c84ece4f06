"""The lab's guests run as Debian's ``libvirt-qemu`` user, not as root.

The attack: a guest that breaks out of QEMU gets QEMU's uid. As root that
is the whole host; as ``libvirt-qemu`` it is the disks libvirt handed to
that guest (dynamic ownership) and the guest image, and none of the lab's
databases, configs, passwords or other volumes.
"""

import glob
import os
import pwd

import libvirt
import pytest
import sqlalchemy as sa

from tests.security import local_users as lu


def _proc_ids(pid):
    """``(uids, gids)``: real, effective, saved and filesystem ids."""
    with open("/proc/%d/status" % pid) as handle:
        fields = dict(line.split(":", 1) for line in handle)
    return ({int(x) for x in fields["Uid"].split()},
            {int(x) for x in fields["Gid"].split()})


def _qemu_pid(name):
    with open("/run/libvirt/qemu/%s.pid" % name) as handle:
        return int(handle.read().strip())


@pytest.fixture(scope="module")
def lab_domains(conf):
    """``{uuid: domain name}`` of the running guests of the lab's nova."""
    url = conf.nova_db_url
    if not url:
        pytest.skip("tempest.conf names no nova_db_url")
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        uuids = {row[0] for row in conn.execute(sa.text(
            "SELECT uuid FROM instances WHERE deleted = 0"))}
    engine.dispose()
    conn = libvirt.open(conf.libvirt_uri)
    try:
        running = {dom.UUIDString(): dom.name()
                   for dom in conn.listAllDomains(
                       libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE)}
    finally:
        conn.close()
    domains = {u: n for u, n in running.items() if u in uuids}
    assert domains, "the lab has no running guest (the demo server?)"
    return domains


@pytest.fixture(scope="module")
def demo_server(demo_compute):
    status, _, body = demo_compute.request(
        "GET", "/servers/detail?name=%5Edemo%24", expected=200)
    servers = [s for s in body["servers"] if s["status"] == "ACTIVE"]
    assert servers, "no ACTIVE demo server (devstack/lib/demo)"
    return servers[0]


def test_lab_guests_run_as_libvirt_qemu(lab_domains):
    qemu = pwd.getpwnam(lu.QEMU_USER)
    wrong = {}
    for name in lab_domains.values():
        uids, gids = _proc_ids(_qemu_pid(name))
        if uids != {qemu.pw_uid} or gids != {qemu.pw_gid}:
            wrong[name] = (sorted(uids), sorted(gids))
    assert wrong == {}


def test_every_qemu_process_of_the_lab_is_unprivileged(lab_domains):
    """Also from the process table: no qemu-system process of a lab
    domain runs with uid 0."""
    names = set(lab_domains.values())
    root_guests = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().split(b"\0")
            uids, _ = _proc_ids(int(pid))
        except OSError:
            continue
        if not argv[0].decode(errors="replace").rsplit("/", 1)[-1] \
                .startswith("qemu-system"):
            continue
        guest = [a.decode() for a in argv if a.startswith(b"guest=")]
        name = guest[0].split("=", 1)[1].split(",")[0] if guest else ""
        if name in names and 0 in uids:
            root_guests.append((pid, name))
    assert root_guests == []


def test_demo_overlay_belongs_to_qemu_and_no_one_else(demo_server):
    disk = os.path.join(lu.DATA_DIR, "instances", demo_server["id"], "disk")
    assert os.path.isfile(disk)
    # libvirt's dynamic ownership gave the running guest's disk to QEMU.
    assert lu.owner(disk)[0] == lu.QEMU_USER
    assert lu.mode(disk) == 0o600
    assert lu.try_read([disk]) == {disk: "denied"}
    assert lu.try_read([disk], lu.QEMU_USER, own_groups=True) == \
        {disk: "read"}


def test_qemu_user_cannot_read_the_lab_secrets():
    """What a guest escaping into QEMU's uid can read: the image (it
    must), not the databases, the volumes' backing file, the configs and
    the passwords."""
    secrets = [p for p in (
        glob.glob(os.path.join(lu.DATA_DIR, "*.sqlite*")) +
        glob.glob(os.path.join(lu.DATA_DIR, "*-backing-file")) +
        glob.glob(os.path.join(lu.CONF_DIR, "*")) +
        [lu.CLOUDS_YAML, os.path.join(lu.DEST, "openrc.admin"), lu.LOG_DIR])
        if os.path.exists(p)]
    assert any(p.endswith("-backing-file") for p in secrets)
    assert lu.PASSWORDS_FILE in secrets
    outcomes = lu.try_read(secrets, lu.QEMU_USER, own_groups=True)
    assert lu.not_denied(outcomes) == {}
    kernels = glob.glob(os.path.join(lu.DATA_DIR, "images", "*", "vmlinuz"))
    assert kernels
    assert set(lu.try_read(kernels, lu.QEMU_USER,
                           own_groups=True).values()) == {"read"}


def test_kvm_device_open_to_the_qemu_user_only():
    """/dev/kvm as Debian's udev rule sets it (root:kvm 0660), with
    libvirt-qemu in group kvm: KVM stays usable without root."""
    if not os.path.exists("/dev/kvm"):
        pytest.skip("no /dev/kvm on this host")
    assert lu.owner("/dev/kvm") == ("root", "kvm")
    assert lu.mode("/dev/kvm") == 0o660
    import grp
    assert lu.QEMU_USER in grp.getgrnam("kvm").gr_mem
    assert lu.try_read(["/dev/kvm"]) == {"/dev/kvm": "denied"}
