"""Where a server goes, with the openstack CLI as an operator types it.

* ``server create --host HOST`` (compute 2.74, the admin's): that host;
* ``--availability-zone nova:HOST`` (the admin's forced host): that host;
* the demo user asking for a host: refused (403), nothing created.
"""

import json
import uuid

import pytest

from tests.support import login_shell

BOOT = ("openstack --os-cloud %s %s server create --image ministack-guest "
        "--flavor 42 --nic none --wait %s %s -f json")


def _create(cloud, options, name, microversion=""):
    return login_shell.login_shell(BOOT % (cloud, microversion, options,
                                           name), timeout=600)


@pytest.fixture
def names():
    made = []

    def name():
        made.append("mn-sched-%s" % uuid.uuid4().hex[:8])
        return made[-1]
    yield name
    for server in made:
        login_shell.login_shell(
            "openstack --os-cloud ministack-admin server delete --wait %s"
            % server, timeout=300)


def _host_of(done):
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)["OS-EXT-SRV-ATTR:host"]


@pytest.mark.parametrize("target", ["first", "compute2"])
def test_server_create_host(names, first_host, hosts, target):
    host = first_host if target == "first" else target
    done = _create("ministack-admin", "--host %s" % host, names(),
                   "--os-compute-api-version 2.74")
    assert _host_of(done) == host


@pytest.mark.parametrize("target", ["first", "compute2"])
def test_availability_zone_forces_the_host(names, first_host, hosts,
                                           target):
    host = first_host if target == "first" else target
    done = _create("ministack-admin", "--availability-zone nova:%s" % host,
                   names())
    assert _host_of(done) == host


def test_the_demo_user_cannot_pick_a_host(names, hosts):
    name = names()
    done = _create("ministack", "--host compute2", name,
                   "--os-compute-api-version 2.74")
    assert done.returncode != 0
    assert "403" in done.stderr and "requested_destination" in \
        done.stderr, done.stderr
    listed = login_shell.login_shell(
        "openstack --os-cloud ministack server list --name %s -f json"
        % name)
    assert json.loads(listed.stdout) == []
