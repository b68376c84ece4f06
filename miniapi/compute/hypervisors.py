"""Hypervisors: the compute nodes each host reported, with its service.

As upstream, a hypervisor is a ``compute_nodes`` row (written by the
host's resource tracker: ``minicompute.resource_tracker``) shown with
the ``nova-compute`` service of its host; a node whose host has no
service is skipped (nova: "the service may be deleted"), and a service
that never reported a node has no hypervisor. From the node row: the
integer ``id`` (before 2.53) and ``uuid`` (2.53+), ``hypervisor_hostname``,
the totals (``vcpus``, ``memory_mb``, ``local_gb``,
``disk_available_least``), ``hypervisor_type``/``_version``,
``cpu_info`` and ``host_ip``, all as that host reported them. From the
service: ``state`` up/down (its heartbeat, exactly as ``os-services``
computes it), ``status`` and ``disabled_reason``.

The used figures are the host's live instances, summed when shown (nova's
resource tracker counts the same at each report): ``running_vms``,
``vcpus_used``/``memory_mb_used``/``local_gb_used`` from their flavors
(root + ephemeral + swap), ``current_workload`` (instances building,
nova's ``io_workload`` of the states ministack has). No reserved host
memory or disk is added (nova adds ``reserved_host_memory_mb``).

``uptime`` is an RPC call to the host (:func:`uptime`), as upstream's.
"""

import dataclasses
import json

from minicompute import exception
from minicompute import vm_states
from minicompute.db import api as db_api

COMPUTE_BINARY = "nova-compute"


@dataclasses.dataclass
class Hypervisor:
    """One compute node, with nova's ComputeNode field names."""

    service: object
    is_up: bool
    id: int
    uuid: str
    host: str
    hypervisor_hostname: str
    hypervisor_type: str
    hypervisor_version: int
    host_ip: str
    vcpus: int
    memory_mb: int
    local_gb: int
    disk_available_least: int
    cpu_info: dict
    vcpus_used: int = 0
    memory_mb_used: int = 0
    local_gb_used: int = 0
    running_vms: int = 0
    current_workload: int = 0
    instances: list = dataclasses.field(default_factory=list)

    @property
    def free_ram_mb(self):
        return self.memory_mb - self.memory_mb_used

    @property
    def free_disk_gb(self):
        return self.local_gb - self.local_gb_used


def _swap_mb(instance):
    try:
        return int(json.loads(instance.flavor or "{}").get("swap") or 0)
    except (ValueError, TypeError, AttributeError):
        return 0


def _cpu_info(text):
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _build(ctxt, node, service, down_time):
    instances = db_api.instance_get_all(
        ctxt, {"host": node.host, "all_tenants": True})
    return Hypervisor(
        service=service, is_up=db_api.service_is_up(service, down_time),
        id=node.id, uuid=node.uuid, host=node.host,
        hypervisor_hostname=node.hypervisor_hostname,
        hypervisor_type=node.hypervisor_type,
        hypervisor_version=node.hypervisor_version, host_ip=node.host_ip,
        vcpus=node.vcpus, memory_mb=node.memory_mb, local_gb=node.local_gb,
        disk_available_least=node.disk_available_least,
        cpu_info=_cpu_info(node.cpu_info), instances=instances,
        running_vms=len(instances),
        vcpus_used=sum(i.vcpus or 0 for i in instances),
        memory_mb_used=sum(i.memory_mb or 0 for i in instances),
        local_gb_used=sum((i.root_gb or 0) + (i.ephemeral_gb or 0)
                          for i in instances)
        + sum(_swap_mb(i) for i in instances) // 1024,
        current_workload=sum(1 for i in instances
                             if i.vm_state == vm_states.BUILDING))


def _with_services(ctxt, nodes, down_time):
    services = {s.host: s for s in
                db_api.service_get_all(ctxt, binary=COMPUTE_BINARY)}
    return [_build(ctxt, n, services[n.host], down_time)
            for n in nodes if n.host in services]


def get_all(ctxt, down_time):
    """Every hypervisor, ordered by id (nova pages in that order)."""
    return _with_services(ctxt, db_api.compute_node_get_all(ctxt),
                          down_time)


def get(ctxt, hypervisor_id, by_uuid, down_time):
    """The hypervisor with this id (UUID when ``by_uuid``) or None."""
    try:
        node = db_api.compute_node_get(
            ctxt, uuid=hypervisor_id) if by_uuid else \
            db_api.compute_node_get(ctxt, node_id=int(hypervisor_id))
    except exception.ComputeHostNotFound:
        return None
    found = _with_services(ctxt, [node], down_time)
    return found[0] if found else None


def search(ctxt, pattern, down_time):
    """Hypervisors whose hostname contains ``pattern`` (nova's
    ``LIKE '%pattern%'``, case-insensitive as MySQL and SQLite compare)."""
    pattern = pattern.lower()
    return _with_services(
        ctxt, [n for n in db_api.compute_node_get_all(ctxt)
               if pattern in (n.hypervisor_hostname or "").lower()],
        down_time)


def uptime(ctxt, compute_rpcapi, hyp):
    """The host's ``uptime`` line, asked of the host (nova's
    ``HostAPI.get_host_uptime``).

    :raises ComputeServiceUnavailable: the host's service is down.
    :raises NotImplementedError: its driver cannot tell.
    """
    if not hyp.is_up:
        raise exception.ComputeServiceUnavailable(host=hyp.host)
    return compute_rpcapi.get_host_uptime(ctxt, hyp.host)


def statistics(hypervisors):
    """nova's ``compute_node_statistics``: sums over the hypervisors whose
    service is enabled."""
    enabled = [h for h in hypervisors if not h.service.disabled]
    fields = ("current_workload", "free_disk_gb", "free_ram_mb",
              "local_gb", "local_gb_used", "memory_mb", "memory_mb_used",
              "running_vms", "vcpus", "vcpus_used")
    stats = {"count": len(enabled)}
    stats.update({f: sum(getattr(h, f) for h in enabled) for f in fields})
    stats["disk_available_least"] = sum(h.disk_available_least or 0
                                        for h in enabled)
    return stats
