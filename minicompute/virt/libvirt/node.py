"""This host's node facts, as nova's libvirt driver reports them.

The resource tracker stores them in ``compute_nodes``
(``LibvirtDriver.get_available_resource``); each fact is the one nova's
libvirt driver gives:

* ``vcpus`` and ``memory_mb``: the host's CPUs and memory (MiB) from
  ``virNodeGetInfo`` (no ``cpu_dedicated_set``/``cpu_shared_set`` here);
* ``local_gb`` / ``disk_available_least``: size / free space (GiB) of the
  file system under ``[compute] instances_path`` (nova's
  ``_get_local_gb_info``; no qcow2 over-commit correction);
* ``hypervisor_type`` and ``hypervisor_version``: ``virConnectGetType``
  (``QEMU``) and ``virConnectGetVersion`` (major * 1000000 + minor * 1000
  + micro);
* ``cpu_info``: the host CPU of the capabilities XML (arch, model,
  vendor, topology with the NUMA cell count, features, maxphysaddr) as
  JSON text (nova's ``_get_cpu_info``);
* ``hypervisor_hostname``: the node name the tracker asks for, which is
  this host's ``[DEFAULT] host`` (nova's libvirt driver uses libvirt's
  hostname; here the node is named after its host, as
  ``instances.node`` is).
"""

import json
import os
from xml.etree import ElementTree

from ministack import executor

_GIB = 1024 ** 3


def available_resource(node_info, nodename, instances_path):
    """The node's facts (listed above) from ``Host.get_node_info()``."""
    info, hypervisor_type, version, capabilities = node_info
    total_gb, free_gb = disk_gb(instances_path)
    return {
        "vcpus": int(info[2]),
        "memory_mb": int(info[1]),
        "local_gb": total_gb,
        "disk_available_least": free_gb,
        "hypervisor_type": hypervisor_type,
        "hypervisor_version": int(version),
        "cpu_info": json.dumps(cpu_info(capabilities), sort_keys=True),
        "hypervisor_hostname": nodename,
    }


def disk_gb(path):
    """(total, free) GiB of the file system holding ``path`` (its nearest
    existing parent: the directory may not exist yet)."""
    while path and not os.path.exists(path):
        path = os.path.dirname(path)
    try:
        stat = os.statvfs(path or "/")
    except OSError:
        return 0, 0
    return (stat.f_blocks * stat.f_frsize // _GIB,
            stat.f_bavail * stat.f_frsize // _GIB)


def cpu_info(capabilities):
    """nova's ``cpu_info`` dict from libvirt's capabilities XML."""
    host = ElementTree.fromstring(capabilities).find("host")
    cpu = host.find("cpu") if host is not None else None
    if cpu is None:
        return {}
    topology = cpu.find("topology")
    topology = topology.attrib if topology is not None else {}
    cells = host.findall("topology/cells/cell")
    out = {
        "arch": cpu.findtext("arch"),
        "model": cpu.findtext("model"),
        "vendor": cpu.findtext("vendor"),
        "topology": {"cells": len(cells) or 1,
                     "sockets": int(topology.get("sockets", 1)),
                     "cores": int(topology.get("cores", 1)),
                     "threads": int(topology.get("threads", 1))},
        "features": sorted({f.get("name") for f in cpu.findall("feature")}),
    }
    maxphysaddr = cpu.find("maxphysaddr")
    if maxphysaddr is not None:
        out["maxphysaddr"] = {"mode": maxphysaddr.get("mode"),
                              "bits": int(maxphysaddr.get("bits", 0))}
    return out


def host_uptime(execute=executor.execute):
    """``env LANG=C uptime``'s line, as nova's libvirt driver returns it
    (``get_host_uptime``), without the newline."""
    out, _err = execute("env", "LANG=C", "uptime", timeout=10)
    return out.rstrip("\n")
