"""Where a new server goes: nova's scheduler at mini scale.

Upstream, nova-api records the request, the conductor asks the scheduler
(placement's allocation candidates, then filters and weighers) and casts
the build to the host it picked. Here the API picks the compute node
itself, from the nodes the hosts reported (``compute_nodes``):

* candidates: every node whose host has a ``nova-compute`` service (a
  service that never reported a node cannot be scheduled to, as
  upstream, where a host is a placement resource provider only once its
  resource tracker reported);
* a destination, requested (2.74's ``host`` / ``hypervisor_hostname``,
  checked first by :func:`validate_host_or_node`: 400 when unknown) or
  forced (``availability_zone`` ``nova:HOST``, ``nova::NODE``,
  ``nova:HOST:NODE``, not checked: an unknown one finds no node), keeps
  only the nodes of that host and/or node name;
* the filter: the host's service is up (heartbeat within
  ``service_down_time``, not forced down) and enabled: nova's
  ComputeFilter (and placement's ``COMPUTE_STATUS_DISABLED`` pre-filter,
  which applies to forced hosts too);
* the scheduler hints ``same_host`` and ``different_host`` (a server id
  or a list of them): nova's SameHostFilter keeps the hosts that have
  one of the servers, DifferentHostFilter the hosts that have none; a
  server is on a host when it is live with that host (any project,
  any state, as the scheduler's host state counts instances); an
  unknown id is on no host. An empty value asks for nothing. A forced
  host skips them, as upstream skips every filter for one;
* the weigher: fewest live instances on the host, then the host name.

No node left is nova's NoValidHost: the server is created in ERROR with
"No valid host was found." A forced host skips the filters upstream, so
a server forced onto a down host is placed there and its build waits for
the host to come back; ministack filters a forced host as a requested one
(down or disabled: no valid host), because it writes the host at once
and has no conductor to re-schedule a build that never starts.
"""

from minicompute import exception
from minicompute.db import api as db_api
from ministack import context as ms_context
from ministack import exception as ms_exception

COMPUTE_BINARY = "nova-compute"


def parse_availability_zone(zone):
    """nova's ``API.parse_availability_zone``: ``(zone, forced_host,
    forced_node)`` of ``zone``, ``ZONE:HOST``, ``ZONE::NODE`` or
    ``ZONE:HOST:NODE`` (the zone part may be empty).

    :raises Invalid: more colons than that (400).
    """
    host = node = None
    if zone and ":" in zone:
        count = zone.count(":")
        if count == 1:
            zone, host = zone.split(":")
        elif count == 2 and "::" in zone:
            zone, node = zone.split("::")
        elif count == 2:
            zone, host, node = zone.split(":")
        else:
            raise ms_exception.Invalid(
                message="Invalid input received: Unable to parse "
                        "availability_zone")
    return zone or None, host or None, node or None


def validate_host_or_node(ctxt, host, node):
    """nova's ``_validate_host_or_node``: a requested host must have a
    compute node, a requested node must exist, and both together must
    be one node.

    :raises ComputeHostNotFound: naming the host (the node when only
        the node was given), as upstream.
    """
    admin = ctxt.elevated()
    if not db_api.compute_node_get_all(admin, host=host,
                                       hypervisor_hostname=node):
        raise exception.ComputeHostNotFound(host=host or node)


def get_hint(hints, name):
    """nova's ``RequestSpec.get_scheduler_hint``: the hint's value, a
    one-item list as its item (None when absent)."""
    value = (hints or {}).get(name)
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return value


def check_group_hint(hints):
    """The ``group`` hint names a server group, and ministack has none
    (no ``/os-server-groups``): nova's ``InstanceGroup.get_by_uuid``
    finds nothing, and the create is its InstanceGroupNotFound, a 400.

    :raises Invalid: a ``group`` hint.
    """
    group = (hints or {}).get("group")
    if group:
        raise ms_exception.Invalid(
            message="Instance group %s could not be found." % group)


def _overlap(host_instances, uuids):
    """nova's ``instance_uuids_overlap``."""
    if isinstance(uuids, str):
        uuids = [uuids]
    return bool(host_instances.intersection(uuids))


def _hints_pass(host_instances, hints):
    """SameHostFilter and DifferentHostFilter for one host."""
    same = get_hint(hints, "same_host")
    if same and not _overlap(host_instances, same):
        return False
    different = get_hint(hints, "different_host")
    return not (different and _overlap(host_instances, different))


def select_destination(ctxt, down_time, host=None, node=None, hints=None,
                       forced=False, ignore_hosts=()):
    """The compute node a new server goes to, or None (no valid host).

    :param host: only nodes of this host (requested or forced).
    :param node: only the node of this name (requested or forced).
    :param hints: the request's scheduler hints (``same_host``,
        ``different_host`` are honoured; others ignored, as upstream
        ignores the hints of filters it does not run).
    :param forced: host/node are forced (``nova:HOST``): the hints'
        filters are skipped.
    :param ignore_hosts: hosts never picked (nova's
        ``RequestSpec.ignore_hosts``: a move's source).
    """
    admin = ms_context.get_admin_context()
    services = {s.host: s for s in
                db_api.service_get_all(admin, binary=COMPUTE_BINARY)}
    nodes = [n for n in db_api.compute_node_get_all(
        admin, host=host, hypervisor_hostname=node)
        if _passes(services.get(n.host), down_time) and
        n.host not in ignore_hosts]
    # Each host's live instances (uuids): the hints' filters and the
    # weigher read them, as upstream's HostState.instances.
    instances = {h: {i.uuid for i in db_api.instance_get_all(
        admin, {"host": h, "all_tenants": True})}
        for h in {n.host for n in nodes}}
    if not forced:
        nodes = [n for n in nodes if _hints_pass(instances[n.host], hints)]
    if not nodes:
        return None

    def weight(compute_node):
        return (len(instances[compute_node.host]), compute_node.host,
                compute_node.hypervisor_hostname)
    return min(nodes, key=weight)


def _passes(service, down_time):
    """ComputeFilter: the node's host has a service, up and enabled."""
    return service is not None and not service.disabled and \
        db_api.service_is_up(service, down_time)
