"""A subnode deployed by stack.sh, as on a real second machine.

docs/multinode.md's subnode: a machine with the repository checked out
and a ``devstack/local.conf`` enabling only ``n-cpu`` (the page's, with
this lab's addresses and passwords put in, as its reader does), then
``bash devstack/stack.sh`` there. The machine is made of namespaces
(tests/support/subnode.py: its own hostname, address and state), and the
stack.sh is the repository's, run unchanged. It must join the
controller (RabbitMQ, database, keystone, Cinder): the controller lists
its service and hypervisor, schedules a server to it, exports a volume
to its initiator, which its QEMU logs in with from its own address; and
``bash devstack/clean.sh`` on it, then ``openstack compute service
delete`` on the controller, take it away again.
"""

import json

import pytest

from tests.multinode import conftest as mn
from tests.support import login_shell
from tests.support import subnode

NAME, ADDRESS = "subnode1", "10.42.0.101"
PASSWORDS = ("RABBIT_PASSWORD", "DATABASE_PASSWORD", "SERVICE_PASSWORD",
             "OSPROFILER_HMAC_KEY")


def _docs_local_conf():
    """The subnode's local.conf as docs/multinode.md prints it."""
    with open(mn.REPO + "/docs/multinode.md") as handle:
        text = handle.read()
    return "[[local|localrc]]\n" + text.split(
        "```ini\n[[local|localrc]]\n", 1)[1].split("```", 1)[0]


def _filled_in(local_conf):
    """What its reader writes: the controller's address, the machine's,
    and the controller's passwords for the ``...``."""
    with open("/etc/ministack/passwords") as handle:
        recorded = dict(line.strip().split("=", 1) for line in handle
                        if "=" in line and not line.startswith("#"))
    lines = []
    for line in local_conf.splitlines():
        key = line.split("=", 1)[0]
        if key == "SERVICE_HOST":
            line = "SERVICE_HOST=10.42.0.1"
        elif key == "HOST_IP":
            line = "HOST_IP=%s" % ADDRESS
        elif key in PASSWORDS:
            line = "%s=%s" % (key, recorded[key])
        lines.append(line)
    return "\n".join(lines) + "\n"


def _openstack_admin(args):
    done = login_shell.login_shell(
        "openstack --os-cloud ministack-admin %s -f json" % args)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.fixture
def machine(two_host_lab):
    made = subnode.Machine(NAME, ADDRESS, mn.REPO)
    try:
        made.create()
        yield made
    finally:
        made.destroy()
        services = _openstack_admin(
            "compute service list --service nova-compute")
        for row in services:
            if row["Host"] == NAME:
                login_shell.login_shell(
                    "openstack --os-cloud ministack-admin compute service "
                    "delete %s" % row["ID"])


def test_a_subnode_joins_and_leaves_the_controller(machine, admin, cleanup,
                                                   first_host):
    machine.write_local_conf(_filled_in(_docs_local_conf()))
    done = machine.run("bash devstack/stack.sh")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "ministack lab is up" in done.stdout
    # Only the compute host was deployed there.
    assert "Starting minicompute on host %s" % NAME in done.stdout
    for controller_only in ("Starting MariaDB", "Starting RabbitMQ",
                            "Starting keystone", "Starting minicinder"):
        assert controller_only not in done.stdout, controller_only

    services = {r["Host"]: r for r in _openstack_admin(
        "compute service list --service nova-compute")}
    assert services[NAME]["State"] == "up", services
    nodes = {r["Hypervisor Hostname"]: r for r in _openstack_admin(
        "hypervisor list")}
    assert nodes[NAME]["Host IP"] == ADDRESS, nodes

    # The controller schedules to it, Cinder exports to its initiator and
    # its QEMU logs in from its own address.
    server_id = mn.boot_on(admin, cleanup, NAME, "mn-subnode")
    mn.wait_active(admin, server_id)
    assert mn.server_host(admin, server_id) == NAME
    volume_id = admin.create_volume(cleanup)["id"]
    admin.attach_volume(cleanup, server_id, volume_id)
    iqn = machine.run("sed -n 's/^InitiatorName=//p' "
                      "/etc/iscsi/initiatorname.iscsi").stdout.strip()
    assert iqn and iqn != mn.initiator_of(first_host, first_host)
    assert mn.acl_of(volume_id) == [iqn]
    assert mn.sessions_of(volume_id) == {iqn: [ADDRESS]}
    lsblk = machine.run("ministack-guest %s -- lsblk" % server_id)
    assert lsblk.returncode == 0, lsblk.stderr
    assert "vdb" in lsblk.stdout
    admin.detach_volume(server_id, volume_id)
    admin.delete_server(server_id)

    # Taken away: clean.sh on the subnode removes only its own state.
    done = machine.run("bash devstack/clean.sh")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "ministack subnode cleaned" in done.stdout
    service_id = services[NAME]["ID"]
    deleted = login_shell.login_shell(
        "openstack --os-cloud ministack-admin compute service delete %s"
        % service_id)
    assert deleted.returncode == 0, deleted.stderr
    listed = _openstack_admin("compute service list --service nova-compute")
    assert NAME not in [r["Host"] for r in listed]
    # The controller is whole: its databases, broker and exports stayed.
    assert sorted(r["Host"] for r in listed) == sorted([first_host,
                                                        "compute2"])
    assert login_shell.login_shell(
        "openstack --os-cloud ministack volume list").returncode == 0
