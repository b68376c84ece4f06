"""What the API can learn about its own machine, for ``os-hypervisors``.

Upstream, a compute node's totals (``vcpus``, ``memory_mb``,
``local_gb``, ``cpu_info``, ``hypervisor_version``...) are written to the
``compute_nodes`` table by the compute host's resource tracker from its
libvirt driver, and ``uptime`` is an RPC call to that host, which runs
``uptime``. ministack has no ``compute_nodes`` table and minicompute
reports only a heartbeat, so these facts are read here, without libvirt
and without RPC, from the machine miniapi runs on, and only for the
compute host that *is* this machine (its service ``host`` equals our
``[DEFAULT] host``; the lab runs every daemon on one machine). For any
other host they are unknown: totals 0, ``cpu_info`` empty, ``host_ip``
null, ``uptime`` not available. Each fact is the one libvirt would give:

* ``vcpus``: online CPUs; ``memory_mb``: ``MemTotal`` of /proc/meminfo;
* ``local_gb`` / ``disk_available_least``: size / free space (GiB) of the
  file system under ``[DEFAULT] state_path`` (minicompute keeps guest
  disks in ``$state_path/instances``); no qcow2 over-commit correction;
* ``cpu_info``: arch, vendor, model, topology and flags of /proc/cpuinfo
  (libvirt names a CPU model such as ``EPYC-Rome``; we show the kernel's
  model name);
* ``hypervisor_version``: QEMU's version as libvirt encodes it
  (major * 1000000 + minor * 1000 + micro), probed once;
* ``uptime``: the output of ``env LANG=C uptime``, as nova's libvirt
  driver returns it.
"""

import functools
import os
import platform
import re

from ministack import exception
from ministack import executor

_VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}
_QEMU_VERSION = re.compile(r"version (\d+)\.(\d+)(?:\.(\d+))?")


class LocalHost:
    """The facts of this machine, served for the hypervisor named ``host``.

    :param host: our ``[DEFAULT] host``: the compute host that is us.
    :param my_ip: our ``[DEFAULT] my_ip``, nova's compute ``host_ip``.
    :param state_path: where guest disks live (its file system is
        ``local_gb``).
    :param execute: the command runner (``ministack.executor.execute``).
    :param proc: where /proc is (tests point it at a fixture tree).
    """

    def __init__(self, host, my_ip, state_path, execute=executor.execute,
                 proc="/proc"):
        self.host = host
        self.my_ip = my_ip
        self.state_path = state_path
        self.execute = execute
        self.proc = proc

    def is_local(self, host):
        return bool(host) and host == self.host

    def _read(self, name):
        try:
            with open(os.path.join(self.proc, name)) as handle:
                return handle.read()
        except OSError:
            return ""

    def memory_mb(self):
        match = re.search(r"^MemTotal:\s+(\d+)\s*kB", self._read("meminfo"),
                          re.MULTILINE)
        return int(match.group(1)) // 1024 if match else 0

    @staticmethod
    def vcpus():
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return os.cpu_count() or 0

    def disk_gb(self):
        """(total, free) GiB of the file system holding guest disks."""
        path = self.state_path
        while path and not os.path.exists(path):
            path = os.path.dirname(path)
        try:
            stat = os.statvfs(path or "/")
        except OSError:
            return 0, 0
        gib = 1024 ** 3
        return (stat.f_blocks * stat.f_frsize // gib,
                stat.f_bavail * stat.f_frsize // gib)

    @functools.cached_property
    def cpu_info(self):
        """libvirt's cpu_info shape from /proc/cpuinfo (static: cached)."""
        fields = {}
        sockets = set()
        for line in self._read("cpuinfo").splitlines():
            key, sep, value = line.partition(":")
            if not sep:
                continue
            key, value = key.strip(), value.strip()
            if key == "physical id":
                sockets.add(value)
            fields.setdefault(key, value)
        if not fields:
            return {}
        cores = int(fields.get("cpu cores") or 1)
        siblings = int(fields.get("siblings") or cores)
        return {
            "arch": platform.machine(),
            "model": fields.get("model name", ""),
            "vendor": _VENDORS.get(fields.get("vendor_id"),
                                   fields.get("vendor_id", "")),
            "topology": {"cells": self._numa_cells(),
                         "sockets": len(sockets) or 1, "cores": cores,
                         "threads": max(siblings // cores, 1)},
            "features": sorted(set(fields.get("flags", "").split())),
        }

    @staticmethod
    def _numa_cells():
        try:
            names = os.listdir("/sys/devices/system/node")
        except OSError:
            return 1
        return len([n for n in names if re.fullmatch(r"node\d+", n)]) or 1

    @functools.cached_property
    def hypervisor_version(self):
        """QEMU's version as an integer (0 when QEMU is not installed)."""
        binary = "qemu-system-%s" % platform.machine()
        try:
            out, _ = self.execute(binary, "--version", timeout=10)
        except exception.ProcessExecutionError:
            return 0
        match = _QEMU_VERSION.search(out)
        if not match:
            return 0
        major, minor, micro = (int(part or 0) for part in match.groups())
        return major * 1000000 + minor * 1000 + micro

    def uptime(self):
        """``uptime``'s line, or None when it cannot be run."""
        try:
            out, _ = self.execute("env", "LANG=C", "uptime", timeout=10)
        except exception.ProcessExecutionError:
            return None
        return out.rstrip("\n")
