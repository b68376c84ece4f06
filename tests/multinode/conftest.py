"""The multinode tier: the lab with two compute hosts, as
``COMPUTE_HOSTS=2 ./lab.sh`` deploys it (devstack/lib/compute_hosts).

The session starts by running that command as a person types it (from
the repository, in a new root login shell): it turns the lab deployed
before into a two-host lab, or leaves a two-host lab as it is, and walks
the journey on a server of each host. Every test then works on the
deployed lab through its real clients and looks at each host with the
operator's tools: the host's libvirtd through its socket
(``minicompute.hosts``), tgtd's view of each export (its ACL and its
sessions), the host's own network namespace.

The tests' own servers and volumes belong to the admin (a server is
pinned to a host with compute 2.74's ``host``, an admin's field) and
carry the run's name prefix; they are deleted even when a test fails.
With MINISTACK_REQUIRE_LAB=1 a skipped test fails
(tests/support/require_lab.py).
"""

import os
import subprocess

import pytest

from minicinder.volume.targets import tgt
from minicompute import hosts as lab_hosts
from tests.support import login_shell
from tests.support.cleanups import Cleanups
from tests.support.require_lab import pytest_runtest_makereport  # noqa: F401
from tests.tempest_style import auth
from tests.tempest_style import base
from tests.tempest_style import clients
from tests.tempest_style import config as suite_config
from tests.tempest_style import guest as guest_mod
from tests.tempest_style import waiters

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BRING_UP = "COMPUTE_HOSTS=2 ./lab.sh"
HOSTS_DIR = "/var/lib/ministack/hosts"
PIN_MICROVERSION = "2.74"


@pytest.fixture(scope="session")
def two_host_lab():
    """``COMPUTE_HOSTS=2 ./lab.sh``, as typed: the CompletedProcess."""
    if os.geteuid() != 0:
        pytest.skip("the lab runs as root")
    done = login_shell.login_shell(login_shell.script(BRING_UP, REPO),
                                   timeout=1800)
    assert done.returncode == 0, (done.stdout[-4000:], done.stderr[-2000:])
    return done


@pytest.fixture(scope="session")
def hosts(two_host_lab):
    """{name: ComputeHost}: the first host first, then compute2."""
    found = lab_hosts.compute_hosts()
    assert len(found) == 2, found
    return found


@pytest.fixture(scope="session")
def first_host(hosts):
    return list(hosts)[0]


@pytest.fixture(scope="session")
def conf(two_host_lab):
    return suite_config.load()


@pytest.fixture(scope="session")
def admin(conf):
    """The admin's tempest-style cloud (servers, volumes, types)."""
    session = auth.authenticate(conf, conf.admin, admin=True)
    compute = clients.ComputeClient(session.compute_endpoint, session.token)
    volumes = clients.VolumeClient(session.volume_endpoint, session.token)
    cloud = base.Cloud(conf, compute, volumes, compute, volumes)
    yield cloud
    leaks = base.leftovers(cloud)
    assert not leaks, "the run left resources behind: %s" % leaks


@pytest.fixture
def cleanup():
    stack = Cleanups()
    yield stack
    stack.run()


@pytest.fixture(scope="session")
def session_cleanup():
    stack = Cleanups()
    yield stack
    stack.run()


def boot_on(cloud, cleanup, host, name):
    """A server of the admin's on compute host ``host``, ACTIVE."""
    server = cloud.compute.request(
        "POST", "/servers", {"server": {
            "name": base.rand_name(name), "imageRef": cloud.conf.image_ref,
            "flavorRef": cloud.conf.flavor_ref, "networks": "none",
            "host": host}},
        expected=202, microversion=PIN_MICROVERSION)[2]["server"]
    cleanup.add(cloud.delete_server, server["id"])
    return server["id"]


def wait_active(cloud, *server_ids):
    for server_id in server_ids:
        waiters.wait_for_server_status(cloud.compute, server_id, "ACTIVE",
                                       timeout=cloud.conf.build_timeout)


@pytest.fixture(scope="session")
def pinned(admin, session_cleanup, hosts):
    """{host: [server ids]}: one server on the first host, two on
    compute2 (two guests of one host share a multiattach volume's
    connection there)."""
    first, second = list(hosts)
    made = {first: [boot_on(admin, session_cleanup, first, "mn-a")],
            second: [boot_on(admin, session_cleanup, second, "mn-b"),
                     boot_on(admin, session_cleanup, second, "mn-c")]}
    wait_active(admin, *[s for ids in made.values() for s in ids])
    return made


def server_host(cloud, server_id):
    return cloud.admin_compute.show_server(server_id)["server"][
        "OS-EXT-SRV-ATTR:host"]


class _HostConf:
    """What tempest-style's Guest reads from tempest.conf, for one host."""

    def __init__(self, conf, uri):
        self.libvirt_uri = uri
        self.agent_timeout = conf.agent_timeout
        self.nova_db_url = conf.nova_db_url


@pytest.fixture
def guest_of(admin, hosts):
    """``guest_of(server_id)``: the Guest of a server, through the
    libvirtd of the host it is on, its agent ready."""
    def get(server_id):
        uri = hosts[server_host(admin, server_id)].libvirt_uri
        found = guest_mod.Guest(_HostConf(admin.conf, uri),
                                admin.admin_compute, server_id)
        found.wait_for_agent()
        return found
    return get


def initiator_of(host, first):
    """The IQN ``host`` logs in with (open-iscsi's file, each host its
    own: the first host's /etc/iscsi, the others' in their directory)."""
    path = ("/etc/iscsi/initiatorname.iscsi" if host == first else
            os.path.join(HOSTS_DIR, host, "etc/iscsi/initiatorname.iscsi"))
    with open(path) as handle:
        for line in handle:
            if line.startswith("InitiatorName="):
                return line.split("=", 1)[1].strip()
    raise AssertionError("no InitiatorName in %s" % path)


def export_of(volume_id):
    """tgtd's target of a volume: {"acls": [...], "sessions": [{initiator,
    addresses}]} (None when it has none)."""
    for target in tgt.TgtAdm().show_targets():
        if target["iqn"].endswith(volume_id):
            return target
    return None


def acl_of(volume_id):
    target = export_of(volume_id)
    return sorted(target["acls"]) if target else []


def sessions_of(volume_id):
    """{initiator: sorted addresses} of the target's logged-in sessions."""
    target = export_of(volume_id)
    found = {}
    for session in (target or {}).get("sessions", []):
        found.setdefault(session["initiator"], set()).update(
            session["addresses"])
    return {k: sorted(v) for k, v in found.items()}


def virsh(uri, *args):
    done = subprocess.run(["virsh", "-c", uri, *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout
