"""Flavor views (nova's views/flavors.py).

Summary: id, name, links (+ description from 2.55). Detail adds the sizes,
``OS-FLV-EXT-DATA:ephemeral``, ``OS-FLV-DISABLED:disabled``,
``os-flavor-access:is_public``, ``rxtx_factor``; ``swap`` is "" for none
before 2.75 and 0 from 2.75; ``extra_specs`` from 2.61 (the caller passes
them: they live in their own table).
"""

from miniapi.api import common


def summary(flavor, version):
    body = {"id": flavor.flavorid, "name": flavor.name,
            "links": common.resource_links("flavors", flavor.flavorid)}
    if version >= "2.55":
        body["description"] = flavor.description
    return body


def detail(flavor, version, extra_specs=None):
    body = summary(flavor, version)
    swap = flavor.swap or 0
    if not swap and version < "2.75":
        swap = ""
    body.update({
        "ram": flavor.memory_mb,
        "vcpus": flavor.vcpus,
        "disk": flavor.root_gb or 0,
        "swap": swap,
        "OS-FLV-EXT-DATA:ephemeral": flavor.ephemeral_gb or 0,
        "OS-FLV-DISABLED:disabled": bool(flavor.disabled),
        "os-flavor-access:is_public": flavor.is_public is not False,
        "rxtx_factor": flavor.rxtx_factor if flavor.rxtx_factor
        is not None else 1.0,
    })
    if version >= "2.61":
        body["extra_specs"] = dict(extra_specs or {})
    return body


def access(flavor, project_ids):
    """os-flavor-access: ``{"flavor_access": [{flavor_id, tenant_id}]}``."""
    return {"flavor_access": [{"flavor_id": flavor.flavorid,
                               "tenant_id": project_id}
                              for project_id in project_ids]}
