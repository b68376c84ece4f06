"""Hypervisors (nova's compute nodes), derived from the compute services.

ministack has no ``compute_nodes`` table: each live ``nova-compute``
service row is one host with one node, as with nova's libvirt driver, so
a hypervisor is built from

* the service row: integer ``id`` (before 2.53) and the service fields
  (``host``, ``disabled``, ``disabled_reason``), ``state`` up/down from
  its heartbeat exactly as ``os-services`` computes it;
* a UUID (2.53+) derived from the node name with ``uuid5``: stable for
  the life of the host, distinct from the service's UUID, as upstream's
  compute node UUID is;
* ``hypervisor_hostname``: the node name, which is the host (minicompute
  sets ``instances.node`` to its host);
* the host's live instances (nova's resource tracker counts the same):
  ``running_vms``, ``vcpus_used``/``memory_mb_used``/``local_gb_used``
  summed from their flavors (root + ephemeral + swap), ``current_workload``
  (instances building, nova's ``io_workload`` of the states ministack has);
* the totals of :mod:`miniapi.compute.host_facts`.

No reserved host memory or disk is added to the used figures (nova adds
``reserved_host_memory_mb``; ministack reserves nothing).
"""

import dataclasses
import json
import uuid

from minicompute import vm_states
from minicompute.db import api as db_api

COMPUTE_BINARY = "nova-compute"
HYPERVISOR_TYPE = "QEMU"

# uuid5 namespace of ministack compute node UUIDs (a fixed random UUID).
_NODE_NAMESPACE = uuid.UUID("1f0b6a52-5c0e-4b8e-9d0a-2a3c7e51a9d4")


def node_uuid(hypervisor_hostname):
    return str(uuid.uuid5(_NODE_NAMESPACE, hypervisor_hostname))


@dataclasses.dataclass
class Hypervisor:
    """One compute node, with nova's ComputeNode field names."""

    service: object
    is_up: bool
    id: int
    uuid: str
    host: str
    hypervisor_hostname: str
    hypervisor_type: str = HYPERVISOR_TYPE
    hypervisor_version: int = 0
    host_ip: str = None
    vcpus: int = 0
    memory_mb: int = 0
    local_gb: int = 0
    vcpus_used: int = 0
    memory_mb_used: int = 0
    local_gb_used: int = 0
    running_vms: int = 0
    current_workload: int = 0
    disk_available_least: int = None
    cpu_info: dict = dataclasses.field(default_factory=dict)
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


def _build(ctxt, service, down_time, local):
    hostname = service.host
    instances = db_api.instance_get_all(
        ctxt, {"host": service.host, "all_tenants": True})
    hyp = Hypervisor(
        service=service, is_up=db_api.service_is_up(service, down_time),
        id=service.id, uuid=node_uuid(hostname), host=service.host,
        hypervisor_hostname=hostname, instances=instances,
        running_vms=len(instances),
        vcpus_used=sum(i.vcpus or 0 for i in instances),
        memory_mb_used=sum(i.memory_mb or 0 for i in instances),
        local_gb_used=sum((i.root_gb or 0) + (i.ephemeral_gb or 0)
                          for i in instances)
        + sum(_swap_mb(i) for i in instances) // 1024,
        current_workload=sum(1 for i in instances
                             if i.vm_state == vm_states.BUILDING))
    if local is not None and local.is_local(service.host):
        total_gb, free_gb = local.disk_gb()
        hyp.hypervisor_version = local.hypervisor_version
        hyp.host_ip = local.my_ip
        hyp.vcpus = local.vcpus()
        hyp.memory_mb = local.memory_mb()
        hyp.local_gb = total_gb
        hyp.disk_available_least = free_gb
        hyp.cpu_info = local.cpu_info
    return hyp


def _compute_services(ctxt):
    return db_api.service_get_all(ctxt, binary=COMPUTE_BINARY)


def get_all(ctxt, down_time, local=None):
    """Every hypervisor, ordered by id (nova pages in that order)."""
    return [_build(ctxt, s, down_time, local)
            for s in _compute_services(ctxt)]


def get(ctxt, hypervisor_id, by_uuid, down_time, local=None):
    """The hypervisor with this id (UUID when ``by_uuid``) or None."""
    for service in _compute_services(ctxt):
        if by_uuid and node_uuid(service.host) == hypervisor_id.lower():
            return _build(ctxt, service, down_time, local)
        if not by_uuid and str(service.id) == str(hypervisor_id):
            return _build(ctxt, service, down_time, local)
    return None


def search(ctxt, pattern, down_time, local=None):
    """Hypervisors whose hostname contains ``pattern`` (nova's
    ``LIKE '%pattern%'``, case-insensitive as MySQL and SQLite compare)."""
    pattern = pattern.lower()
    return [_build(ctxt, s, down_time, local)
            for s in _compute_services(ctxt)
            if pattern in (s.host or "").lower()]


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
