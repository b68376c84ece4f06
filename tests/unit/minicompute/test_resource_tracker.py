"""Each compute host reports its own node into ``compute_nodes`` (nova's
resource tracker), and answers ``get_host_uptime`` itself.

The service of the ``stack`` fixture is host h1 (fake driver, fake:/);
the two-host tests start a second ComputeService, h2, with a driver of
its own on the same transport and database, as ``COMPUTE_HOSTS=2``
runs a second minicompute.
"""

import json
import logging

from oslo_config import cfg
import pytest

from minicompute import conf as compute_conf
from minicompute import exception
from minicompute import service
from minicompute.db import api as db_api
from minicompute.virt import fake
from ministack import config
from ministack import context
from tests.support import fake_cinder
from tests.support import waiting


def _node(host):
    (node,) = db_api.compute_node_get_all(context.get_admin_context(),
                                          host=host)
    return node


@pytest.fixture
def second_host(stack):
    """h2: its own conf (host, my_ip), driver and ComputeService."""
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    compute_conf.register_opts(conf)
    conf([], project="minicompute")
    conf.set_override("host", "h2")
    conf.set_override("my_ip", "10.42.0.2")
    driver = fake.FakeDriver()
    driver.resources.update(vcpus=16, memory_mb=32768, local_gb=500,
                            disk_available_least=400)
    driver.uptime = " 11:00:00 up 1 day,  0:01,  0 users"
    svc = service.ComputeService(conf, stack[0].transport, driver,
                                 fake_cinder.FakeCinder())
    svc.start()
    yield svc, driver
    svc.stop()


def test_start_up_reports_the_node(stack, admin_ctxt):
    svc, _client, driver, _ = stack
    node = _node("h1")
    assert node.hypervisor_hostname == "h1"
    assert node.host_ip == "127.0.0.1"     # [DEFAULT] my_ip
    assert (node.vcpus, node.memory_mb, node.local_gb,
            node.disk_available_least) == (4, 8192, 100, 90)
    assert (node.hypervisor_type, node.hypervisor_version) == \
        ("QEMU", 7002022)
    assert json.loads(node.cpu_info)["model"] == "fake"
    assert node.service_id == db_api.service_get_by_host_and_binary(
        admin_ctxt, "h1", "nova-compute").id
    assert node.uuid and node.deleted == 0


def test_a_report_updates_the_same_row_only_when_something_changed(stack):
    svc, _client, driver, _ = stack
    first = _node("h1")
    svc.update_available_resource()
    assert _node("h1").updated_at == first.updated_at   # nothing written
    driver.resources["memory_mb"] = 4096
    svc.update_available_resource()
    node = _node("h1")
    assert (node.id, node.uuid, node.memory_mb) == \
        (first.id, first.uuid, 4096)
    assert node.updated_at is not None


@pytest.fixture
def short_report_interval(conf):
    """Reports every second (the option's minimum), set before the
    ``stack`` fixture starts the service."""
    conf.set_override("report_interval", 1, group="compute")


def test_the_periodic_report_follows_the_heartbeat(short_report_interval,
                                                   stack):
    """Every heartbeat is followed by a report: a change of the node is
    in ``compute_nodes`` within a ``report_interval``."""
    _svc, _client, driver, _ = stack
    assert _node("h1").vcpus == 4
    driver.resources["vcpus"] = 2
    waiting.wait_for("h1's report of 2 vCPUs", lambda: _node("h1").vcpus,
                     lambda vcpus: vcpus == 2, timeout=5, interval=0.1)


def test_a_failed_report_is_logged_and_the_host_stays_up(stack, caplog,
                                                         admin_ctxt):
    svc, _client, driver, _ = stack

    def broken(nodename):
        raise exception.HypervisorUnavailable(host="h1")
    driver.get_available_resource = broken
    before = db_api.service_get_by_host_and_binary(
        admin_ctxt, "h1", "nova-compute").report_count
    with caplog.at_level(logging.ERROR):
        svc.heartbeat()
        svc.update_available_resource()
    assert "Reporting the node into compute_nodes failed" in caplog.text
    assert db_api.service_get_by_host_and_binary(
        admin_ctxt, "h1", "nova-compute").report_count == before + 1
    assert _node("h1").vcpus == 4      # the last report stays


def test_two_hosts_each_report_their_own_node(stack, second_host,
                                              admin_ctxt):
    nodes = {n.host: n for n in db_api.compute_node_get_all(admin_ctxt)}
    assert sorted(nodes) == ["h1", "h2"]
    assert (nodes["h1"].vcpus, nodes["h1"].host_ip) == (4, "127.0.0.1")
    assert (nodes["h2"].vcpus, nodes["h2"].memory_mb, nodes["h2"].host_ip,
            nodes["h2"].hypervisor_hostname) == \
        (16, 32768, "10.42.0.2", "h2")
    assert nodes["h1"].uuid != nodes["h2"].uuid


def test_get_host_uptime_is_answered_by_that_host(stack, second_host,
                                                  admin_ctxt):
    _svc, client, driver, _ = stack
    _svc2, driver2 = second_host
    assert client.get_host_uptime(admin_ctxt, "h1") == fake.FAKE_UPTIME
    assert client.get_host_uptime(admin_ctxt, "h2") == driver2.uptime


def test_get_host_uptime_not_implemented_crosses_rpc(stack, admin_ctxt):
    _svc, client, driver, _ = stack

    def unsupported():
        raise NotImplementedError()
    driver.get_host_uptime = unsupported
    with pytest.raises(NotImplementedError):
        client.get_host_uptime(admin_ctxt, "h1")
