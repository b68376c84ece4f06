"""Server views (nova's api/openstack/compute/views/servers.py).

``detail`` builds the server dict the clients read (``openstack server
show/list``, the SDK, tempest's schemas), adding keys as the microversion
allows. Admin-only keys follow nova's default policies: the
``OS-EXT-SRV-ATTR:*`` attributes, ``host_status`` and fault ``details``.
"""

import json

import flask

from miniapi.api import common
from miniapi.api.views import field

# vm_state -> {task_state: status}; "default" when no task-specific one.
_REBUILD = {"rebuilding": "REBUILD", "rebuild_block_device_mapping": "REBUILD",
            "rebuild_spawning": "REBUILD"}
_RESIZE = {task: "RESIZE" for task in (
    "resize_prep", "resize_migrating", "resize_migrated", "resize_finish")}
_STATE_MAP = {
    "active": {"default": "ACTIVE", "rebooting": "REBOOT",
               "rebooting_hard": "HARD_REBOOT", "migrating": "MIGRATING",
               **_REBUILD, **_RESIZE},
    "building": {"default": "BUILD"},
    "stopped": {"default": "SHUTOFF", **_REBUILD, **_RESIZE},
    "resized": {"default": "VERIFY_RESIZE",
                "resize_reverting": "REVERT_RESIZE"},
    "paused": {"default": "PAUSED"},
    "suspended": {"default": "SUSPENDED"},
    "rescued": {"default": "RESCUE"},
    "error": {"default": "ERROR", **_REBUILD},
    "deleted": {"default": "DELETED"},
    "soft-delete": {"default": "SOFT_DELETED"},
    "shelved": {"default": "SHELVED"},
    "shelved_offloaded": {"default": "SHELVED_OFFLOADED"},
}

# Statuses for which nova reports ``progress``.
_PROGRESS_STATUSES = ("ACTIVE", "BUILD", "REBUILD", "RESIZE",
                      "VERIFY_RESIZE", "MIGRATING")


def status_from_state(vm_state, task_state=None):
    """The API status for a vm_state/task_state pair (UNKNOWN if none)."""
    states = _STATE_MAP.get(vm_state)
    if states is None:
        return "UNKNOWN"
    return states.get(task_state, states["default"])


def states_for_status(status):
    """The vm_states an API status filter (``?status=ACTIVE``) selects."""
    status = status.upper()
    return [vm for vm, tasks in _STATE_MAP.items()
            if tasks["default"] == status]


def flavor_of(instance):
    """The flavor the instance was built with (a dict), or {}."""
    raw = field(instance, "flavor")
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return {}


def _flavor(instance, version):
    flavor = flavor_of(instance)
    if version >= "2.47":
        return {"vcpus": flavor.get("vcpus", instance.vcpus),
                "ram": flavor.get("memory_mb", instance.memory_mb),
                "disk": flavor.get("root_gb", instance.root_gb or 0),
                "ephemeral": flavor.get("ephemeral_gb", 0),
                "swap": flavor.get("swap", 0),
                "original_name": flavor.get("name"),
                "extra_specs": flavor.get("extra_specs", {})}
    flavorid = flavor.get("flavorid", "")
    return {"id": flavorid,
            "links": [{"rel": "bookmark",
                       "href": common.resource_links(
                           "flavors", flavorid)[1]["href"]}]}


def _image(instance):
    if not instance.image_ref:
        return ""  # boot from volume: clients test for the empty string
    return {"id": instance.image_ref,
            "links": [{"rel": "bookmark",
                       "href": common.resource_links(
                           "images", instance.image_ref)[1]["href"]}]}


def _fault(instance, is_admin):
    raw = field(instance, "fault")
    if not raw:
        return None
    try:
        fault = json.loads(raw)
    except ValueError:
        fault = None
    if not isinstance(fault, dict):
        fault = {"message": str(raw)}
    body = {"code": fault.get("code", 500),
            "created": fault.get("created") or
            common.isotime(instance.updated_at or instance.created_at),
            "message": fault.get("message", "")}
    if is_admin and fault.get("details"):
        body["details"] = fault["details"]
    return body


def summary(instance):
    return {"id": instance.uuid, "name": instance.display_name,
            "links": common.resource_links("servers", instance.uuid)}


def detail(instance, version, is_admin, bdms=(), host_status=None,
           show=False, metadata=None):
    """The full server dict.

    :param metadata: the server's user metadata (``{key: value}``).
    :param bdms: the instance's volume BDMs (for volumes_attached).
    :param host_status: UP/DOWN/"" of the instance's compute service
        (shown to admins from 2.16).
    :param show: GET /servers/{id} (adds ``server_groups`` from 2.71).
    """
    status = status_from_state(instance.vm_state, instance.task_state)
    body = summary(instance)
    body.update({
        "status": status,
        "tenant_id": instance.project_id,
        "user_id": instance.user_id,
        "metadata": dict(metadata or {}),
        "hostId": common.host_id(instance.project_id, instance.host),
        "image": _image(instance),
        "flavor": _flavor(instance, version),
        "created": common.isotime(instance.created_at),
        "updated": common.isotime(instance.updated_at or
                                  instance.created_at),
        "addresses": {},
        "accessIPv4": field(instance, "access_ip_v4") or "",
        "accessIPv6": field(instance, "access_ip_v6") or "",
        "OS-DCF:diskConfig": "MANUAL",
        "OS-EXT-AZ:availability_zone": instance.availability_zone or "",
        "config_drive": instance.config_drive or "",
        "key_name": instance.key_name,
        "OS-SRV-USG:launched_at": common.isotime_micro(instance.launched_at),
        "OS-SRV-USG:terminated_at": common.isotime_micro(
            instance.terminated_at),
        "OS-EXT-STS:task_state": instance.task_state,
        "OS-EXT-STS:vm_state": instance.vm_state,
        "OS-EXT-STS:power_state": instance.power_state or 0,
        "os-extended-volumes:volumes_attached": [
            _volume_attached(bdm, version) for bdm in bdms],
    })
    if status in _PROGRESS_STATUSES:
        body["progress"] = instance.progress or 0
    if is_admin:
        body.update({
            "OS-EXT-SRV-ATTR:host": instance.host,
            "OS-EXT-SRV-ATTR:instance_name":
                flask.current_app.config["INSTANCE_NAME_TEMPLATE"]
                % instance.id,
            "OS-EXT-SRV-ATTR:hypervisor_hostname": instance.node,
        })
        if version >= "2.3":
            body.update({
                "OS-EXT-SRV-ATTR:reservation_id": "r-%s" % instance.uuid[:8],
                "OS-EXT-SRV-ATTR:launch_index": 0,
                "OS-EXT-SRV-ATTR:kernel_id": instance.kernel_id or "",
                "OS-EXT-SRV-ATTR:ramdisk_id": instance.ramdisk_id or "",
                "OS-EXT-SRV-ATTR:root_device_name":
                    instance.root_device_name,
                "OS-EXT-SRV-ATTR:user_data": None,
            })
    if (is_admin and version >= "2.3") or version >= "2.90":
        body["OS-EXT-SRV-ATTR:hostname"] = instance.hostname
    if version >= "2.9":
        body["locked"] = bool(instance.locked)
    if version >= "2.16" and is_admin:
        body["host_status"] = host_status or ""
    if version >= "2.19":
        body["description"] = instance.display_description
    if version >= "2.26":
        body["tags"] = []
    if version >= "2.63":
        body["trusted_image_certificates"] = None
    if version >= "2.71" and show:
        body["server_groups"] = []
    if version >= "2.73":
        body["locked_reason"] = None
    if version >= "2.96":
        body["pinned_availability_zone"] = None
    fault = _fault(instance, is_admin) if instance.vm_state == "error" \
        else None
    if fault:
        body["fault"] = fault
    return body


def _volume_attached(bdm, version):
    entry = {"id": field(bdm, "volume_id")}
    if version >= "2.3":
        entry["delete_on_termination"] = bool(
            field(bdm, "delete_on_termination"))
    return entry


def create_response(instance, admin_pass):
    """POST /servers answers 202 with only these keys (upstream)."""
    return {"server": {"id": instance.uuid,
                       "links": common.resource_links("servers",
                                                      instance.uuid),
                       "OS-DCF:diskConfig": "MANUAL",
                       "security_groups": [{"name": "default"}],
                       "adminPass": admin_pass}}
