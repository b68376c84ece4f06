"""Compute nodes: each host's hypervisor, as the host reports it.

minicompute's resource tracker writes its node's row
(:func:`compute_node_report`) at start-up and on every report; the API
reads every host's rows for os-hypervisors and for scheduling. A host
that never reported has no row, so it is neither listed nor scheduled
to, as upstream (a compute service without a compute node). Part of
``minicompute.db.api``, which re-exports every public function.
"""

import uuid as uuidlib

from minicompute import exception
from minicompute.db import models
from minicompute.db.session import scope as _scope

#: What a host reports of its node (``compute_node_report``'s ``facts``).
FACTS = ("vcpus", "memory_mb", "local_gb", "disk_available_least",
         "hypervisor_type", "hypervisor_version", "cpu_info", "host_ip")


def compute_node_report(ctxt, host, hypervisor_hostname, facts,
                        binary="nova-compute"):
    """Create the node row of ``host`` or bring its facts up to date.

    Only what changed is written (nova's resource tracker compares too),
    so a report with nothing new is one SELECT. ``service_id`` is the
    host's ``binary`` service row, when there is one.

    :param facts: a value for each of :data:`FACTS`.
    :returns: the row (detached).
    """
    values = {key: facts[key] for key in FACTS}
    with _scope() as session:
        values["service_id"] = session.query(models.Service.id).filter_by(
            host=host, binary=binary, deleted=0).scalar()
        node = session.query(models.ComputeNode).filter_by(
            host=host, hypervisor_hostname=hypervisor_hostname,
            deleted=0).one_or_none()
        if node is None:
            node = models.ComputeNode(
                uuid=str(uuidlib.uuid4()), host=host,
                hypervisor_hostname=hypervisor_hostname, **values)
            session.add(node)
        else:
            for key, value in values.items():
                if getattr(node, key) != value:
                    setattr(node, key, value)
    return node


def compute_node_get_all(ctxt, host=None, hypervisor_hostname=None):
    """Every live compute node (optionally of one host and/or node name),
    in id order (the order nova pages hypervisors in)."""
    with _scope() as session:
        query = session.query(models.ComputeNode).filter_by(deleted=0)
        if host is not None:
            query = query.filter_by(host=host)
        if hypervisor_hostname is not None:
            query = query.filter_by(hypervisor_hostname=hypervisor_hostname)
        return query.order_by(models.ComputeNode.id).all()


def compute_node_get(ctxt, node_id=None, uuid=None):
    """The live compute node with this integer id, or this UUID.

    :raises ComputeHostNotFound: none (nova's ``compute_node_get``
        raises the same, naming the id).
    """
    with _scope() as session:
        query = session.query(models.ComputeNode).filter_by(deleted=0)
        if uuid is not None:
            query = query.filter_by(uuid=uuid.lower())
        else:
            query = query.filter_by(id=node_id)
        node = query.one_or_none()
    if node is None:
        raise exception.ComputeHostNotFound(
            host=uuid if uuid is not None else node_id)
    return node
