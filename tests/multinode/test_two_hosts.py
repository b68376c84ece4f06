"""Two compute hosts on one machine, each a host of its own.

``COMPUTE_HOSTS=2 ./lab.sh`` (the session's first step, conftest) walks
the journey on a server of each host; the operator's views then show
both: ``openstack compute service list`` and ``hypervisor list``,
``server show``'s ``OS-EXT-SRV-ATTR:host``, ``ministackctl status``. And
each host is its own machine: its own libvirtd that knows only its own
guests, its own initiator name, address and network namespace.
"""

import json
import os
import re
import subprocess

from tests.multinode import conftest as mn
from tests.support import login_shell


def _openstack_admin(args):
    done = login_shell.login_shell(
        "openstack --os-cloud ministack-admin %s -f json" % args)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_lab_sh_walks_the_journey_on_each_host(two_host_lab, hosts):
    out = two_host_lab.stdout
    walked = re.findall(r"on compute host (\S+)", out)
    assert sorted(walked) == sorted(hosts), walked
    assert out.count("journey complete in ") == 2, out[-3000:]
    # The summary names both hosts and their addresses.
    summary = [line for line in out.splitlines()
               if line.strip().startswith("compute hosts:")][-1]
    for name, host in hosts.items():
        assert "%s (%s)" % (name, host.my_ip) in summary, summary


def test_compute_service_list_shows_both_hosts_up(hosts):
    rows = _openstack_admin("compute service list --service nova-compute")
    assert sorted(r["Host"] for r in rows) == sorted(hosts), rows
    assert {(r["Status"], r["State"]) for r in rows} == {("enabled", "up")}


def test_hypervisor_list_shows_each_host_with_its_own_address(hosts):
    rows = _openstack_admin("hypervisor list")
    listed = {r["Hypervisor Hostname"]: r for r in rows}
    assert sorted(listed) == sorted(hosts), rows
    for name, host in hosts.items():
        assert listed[name]["State"] == "up", listed[name]
        assert listed[name]["Host IP"] == host.my_ip, listed[name]


def test_each_demo_server_is_on_its_host(hosts, first_host):
    """demo on the first host, demo-compute2 on compute2 (servers of the
    demo project: the admin shows them by id)."""
    for name in hosts:
        server = "demo" if name == first_host else "demo-%s" % name
        done = login_shell.login_shell(
            "openstack --os-cloud ministack server show %s -f value -c id"
            % server)
        assert done.returncode == 0, done.stderr
        shown = _openstack_admin("server show %s" % done.stdout.strip())
        assert shown["OS-EXT-SRV-ATTR:host"] == name, shown


def test_ministackctl_lists_every_hosts_services(hosts, first_host):
    done = login_shell.login_shell("ministackctl status")
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.split("\n\n", 1)[0]      # the services' table
    services = {row.split()[0]: row for row in table.splitlines()[1:]}
    for name in hosts:
        if name == first_host:
            continue
        for service in ("libvirtd@%s" % name, "minicompute@%s" % name):
            assert " ok (" in services.get(service, ""), done.stdout


def test_each_host_has_its_own_libvirtd_initiator_and_address(
        hosts, first_host):
    """compute2's libvirtd lists only compute2's guests (and the first
    host's only its own), neither /etc/libvirt holds the other's domain
    definitions, the initiator names differ, and compute2's address is
    on its own network namespace's interface."""
    domains = {name: set(mn.virsh(host.libvirt_uri, "list", "--all",
                                  "--name").split())
               for name, host in hosts.items()}
    first, second = domains[first_host], domains["compute2"]
    assert first and second and not first & second, domains
    own_defs = set(os.listdir(os.path.join(
        mn.HOSTS_DIR, "compute2", "etc/libvirt/qemu")))
    assert not {d + ".xml" for d in first} & own_defs, own_defs
    assert mn.initiator_of("compute2", first_host) != \
        mn.initiator_of(first_host, first_host)
    addresses = subprocess.run(
        ["ip", "-n", "ministack-compute2", "-4", "-o", "addr", "show"],
        capture_output=True, text=True, check=True).stdout
    assert " %s/24 " % hosts["compute2"].my_ip in addresses, addresses


def test_lab_sh_again_keeps_two_hosts(hosts):
    """The number is remembered: a plain ./lab.sh keeps both hosts (and
    walks the journey on each)."""
    done = login_shell.login_shell(login_shell.script("./lab.sh", mn.REPO),
                                   timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert sorted(re.findall(r"on compute host (\S+)", done.stdout)) == \
        sorted(hosts)
