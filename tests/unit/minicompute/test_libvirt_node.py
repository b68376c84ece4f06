"""The libvirt driver's node facts (``get_available_resource``) and
uptime, from what libvirt answers (a stand-in connection with the lab's
real answers: ``virNodeGetInfo``, type, version, capabilities XML)."""

import json
import os

import pytest

from minicompute.virt.libvirt import node

CAPABILITIES = """<capabilities>
  <host>
    <uuid>c90d9da4-fed6-457a-a3c4-34ff49931ea2</uuid>
    <cpu>
      <arch>x86_64</arch>
      <model>EPYC-Rome</model>
      <vendor>AMD</vendor>
      <microcode version='16777317'/>
      <topology sockets='1' dies='1' cores='2' threads='1'/>
      <maxphysaddr mode='emulate' bits='48'/>
      <feature name='x2apic'/>
      <feature name='avx2'/>
      <feature name='x2apic'/>
    </cpu>
    <topology>
      <cells num='1'>
        <cell id='0'><memory unit='KiB'>24684000</memory></cell>
      </cells>
    </topology>
  </host>
  <guest><os_type>hvm</os_type></guest>
</capabilities>"""
NODE_INFO = (["x86_64", 24105, 2, 2596, 1, 1, 2, 1], "QEMU", 7002022,
             CAPABILITIES)


def test_available_resource_from_libvirt(tmp_path):
    facts = node.available_resource(NODE_INFO, "compute2",
                                    str(tmp_path / "instances"))
    stat = os.statvfs(tmp_path)
    gib = 1024 ** 3
    assert facts == {
        "vcpus": 2, "memory_mb": 24105,
        "local_gb": stat.f_blocks * stat.f_frsize // gib,
        "disk_available_least": stat.f_bavail * stat.f_frsize // gib,
        "hypervisor_type": "QEMU", "hypervisor_version": 7002022,
        "cpu_info": facts["cpu_info"], "hypervisor_hostname": "compute2"}
    assert json.loads(facts["cpu_info"]) == {
        "arch": "x86_64", "model": "EPYC-Rome", "vendor": "AMD",
        "topology": {"cells": 1, "sockets": 1, "cores": 2, "threads": 1},
        "features": ["avx2", "x2apic"],
        "maxphysaddr": {"mode": "emulate", "bits": 48}}


def test_cpu_info_without_a_host_cpu():
    assert node.cpu_info("<capabilities><host/></capabilities>") == {}


def test_host_uptime_runs_uptime_in_the_c_locale():
    calls = []

    def execute(*argv, **kwargs):
        calls.append(argv)
        return " 10:00:00 up 3 days,  1:02,  1 user\n", ""
    assert node.host_uptime(execute) == " 10:00:00 up 3 days,  1:02,  1 user"
    assert calls == [("env", "LANG=C", "uptime")]


class _Host:
    """What the driver asks of ``libvirt/host.py``."""

    def get_node_info(self):
        return NODE_INFO


def test_the_driver_reports_its_instances_path(tmp_path):
    libvirt_driver = pytest.importorskip("minicompute.virt.libvirt.driver")
    from oslo_config import cfg

    from minicompute import conf as compute_conf
    from ministack import config
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    compute_conf.register_opts(conf)
    conf([], project="minicompute")
    conf.set_override("instances_path", str(tmp_path), group="compute")
    drv = libvirt_driver.LibvirtDriver(conf, host=_Host())
    facts = drv.get_available_resource("h1")
    assert facts["hypervisor_hostname"] == "h1"
    assert facts["local_gb"] == node.disk_gb(str(tmp_path))[0]
