"""os-hypervisors views (nova's hypervisors controller and view builder).

By microversion:

* 2.28  ``cpu_info`` is a JSON object (before: the JSON text);
* 2.33  lists carry ``hypervisors_links`` (a ``next`` link when a page
        is full);
* 2.53  ``id`` and ``service.id`` are UUIDs; ``servers`` when asked for
        with ``with_servers``; 2.75 ``servers: []`` when asked for and
        there are none;
* 2.88  the detail view drops the resource figures (``vcpus``,
        ``memory_mb``, ``local_gb``, their ``_used`` and ``free_``
        forms, ``current_workload``, ``running_vms``,
        ``disk_available_least``, ``cpu_info``) and gains ``uptime``.
"""

import json
from urllib import parse

import flask

from miniapi.api import common

_FIGURES = ("vcpus", "memory_mb", "local_gb", "vcpus_used",
            "memory_mb_used", "local_gb_used", "free_ram_mb",
            "free_disk_gb", "current_workload", "running_vms",
            "disk_available_least")


def hypervisor_id(hyp, version):
    return hyp.uuid if version >= "2.53" else hyp.id


def server(instance):
    """A hosted server: its uuid and its name on the hypervisor (nova's
    ``Instance.name``, the ``instance_name_template`` name)."""
    template = flask.current_app.config["INSTANCE_NAME_TEMPLATE"]
    return {"name": template % instance.id, "uuid": instance.uuid}


def hypervisor(hyp, version, detail=False, with_servers=False,
               uptime=None):
    """One hypervisor; ``uptime`` is only used for the 2.88 detail view."""
    body = {
        "id": hypervisor_id(hyp, version),
        "hypervisor_hostname": hyp.hypervisor_hostname,
        "state": "up" if hyp.is_up else "down",
        "status": "disabled" if hyp.service.disabled else "enabled",
    }
    if detail:
        body["hypervisor_type"] = hyp.hypervisor_type
        body["hypervisor_version"] = hyp.hypervisor_version
        body["host_ip"] = hyp.host_ip
        service = hyp.service
        body["service"] = {
            "id": service.uuid if version >= "2.53" else service.id,
            "host": hyp.host,
            "disabled_reason": service.disabled_reason,
        }
        if version < "2.88":
            body.update((f, getattr(hyp, f)) for f in _FIGURES)
            body["cpu_info"] = hyp.cpu_info if version >= "2.28" else (
                json.dumps(hyp.cpu_info) if hyp.cpu_info else "")
        else:
            body["uptime"] = uptime
    if with_servers and hyp.instances:
        body["servers"] = [server(i) for i in hyp.instances]
    elif with_servers and version >= "2.75":
        body["servers"] = []
    return body


def uptime(hyp, version, value):
    """GET /os-hypervisors/{id}/uptime (before 2.88)."""
    body = hypervisor(hyp, version)
    body["uptime"] = value
    return body


def statistics(stats):
    return {key: stats[key] for key in sorted(stats)}


def next_links(items, detail, limit, max_limit):
    """nova's ``_get_collection_links``: a ``next`` link when the page
    is full, carrying the request's query with the last id as marker."""
    page = min(limit if limit is not None else max_limit, max_limit)
    if not page or page != len(items):
        return []
    params = dict(sorted(flask.request.args.items()))
    params["marker"] = items[-1]["id"]
    collection = "os-hypervisors/detail" if detail else "os-hypervisors"
    href = "%s?%s" % (common.resource_url(collection, "").rstrip("/"),
                      parse.urlencode(params))
    return [{"rel": "next", "href": href}]
