"""The journey page's lanes: the seed's actors, the compute's by host.

The page (:mod:`ministack_course.web`) draws one lane per actor, left to
right as the seed tells the attach: user, nova-api, RabbitMQ,
nova-compute, Cinder, os-brick, libvirt/QEMU, guest, then any actor a
hop names that the seed has not (shown rather than dropped).

The compute lane says which host did the work: the ``host`` of its hops
(hops.py: the compute's ``[DEFAULT] host``, the RPC server the API cast
to), drawn under its title, ``nova-compute (compute2)``. A trace whose
nova-compute hops come from two hosts or more has one compute lane per
host, where the seed's one is, in the order the trace first reaches
each (and a plain ``nova-compute`` lane for compute hops that recorded
no host, if any). os-brick, libvirt/QEMU and the guest stay one lane
each: the page fits its lanes at 1400 px, and each hop's details name
its host.

:func:`assign` gives each lane (``actor``, ``title``, ``host``) the key
hops refer to (``lane``: the actor, or ``nova-compute@<host>`` when the
compute lane is split) and each hop its ``lane`` and ``from_lane`` (the
lane its arrow comes from: for a hop called from the compute, the host
of its nearest nova-compute ancestor).
"""

#: The seed's lanes, left to right: (actor, title).
ACTORS = (("user", "user"), ("nova-api", "nova-api"),
          ("rabbitmq", "RabbitMQ"), ("nova-compute", "nova-compute"),
          ("cinder", "Cinder"), ("os-brick", "os-brick"),
          ("libvirt", "libvirt/QEMU"), ("guest", "guest"))
COMPUTE = "nova-compute"


def compute_hosts(hops):
    """The hosts of the trace's nova-compute hops, first seen first
    (``hops`` in start order)."""
    hosts = []
    for hop in hops:
        host = hop.get("host")
        if hop.get("actor") == COMPUTE and host and host not in hosts:
            hosts.append(host)
    return hosts


def _calling_host(hop, by_id):
    """The compute host ``hop`` is called from: its nearest nova-compute
    ancestor's host (its own when it has none and is the compute's)."""
    seen = set()
    parent = by_id.get(hop.get("parent_id"))
    while parent is not None and parent["id"] not in seen:
        if parent.get("actor") == COMPUTE:
            return parent.get("host")
        seen.add(parent["id"])
        parent = by_id.get(parent.get("parent_id"))
    return hop.get("host") if hop.get("service") == COMPUTE else None


def _lane(actor, title, host=None, key=None):
    return {"actor": actor, "lane": key or actor, "title": title,
            "host": host}


def assign(hops):
    """The page's lanes for ``hops``; sets each hop's ``lane`` and
    ``from_lane``.

    :returns: ``[{"actor", "lane", "title", "host"}]``, left to right.
    """
    hosts = compute_hosts(hops)
    split = len(hosts) > 1
    by_id = {hop["id"]: hop for hop in hops}

    def compute_lane(host):
        return "%s@%s" % (COMPUTE, host) if split and host else COMPUTE

    for hop in hops:
        hop["lane"] = (compute_lane(hop.get("host"))
                       if hop["actor"] == COMPUTE else hop["actor"])
        hop["from_lane"] = (compute_lane(_calling_host(hop, by_id))
                            if hop["from_actor"] == COMPUTE
                            else hop["from_actor"])
    used = {hop["lane"] for hop in hops} | {hop["from_lane"] for hop in hops}
    lanes = []
    for actor, title in ACTORS:
        if actor != COMPUTE:
            lanes.append(_lane(actor, title))
        elif not split:
            lanes.append(_lane(actor, title, hosts[0] if hosts else None))
        else:
            lanes.extend(_lane(actor, title, host, compute_lane(host))
                         for host in hosts)
            if COMPUTE in used:     # compute hops that recorded no host
                lanes.append(_lane(actor, title))
    known = {actor for actor, _ in ACTORS}
    for hop in hops:
        if hop["actor"] and hop["actor"] not in known:
            known.add(hop["actor"])
            lanes.append(_lane(hop["actor"], hop["actor"]))
    return lanes
