"""Server request schemas (create, update, actions, list query).

A subset of upstream's ``schemas/servers.py``: the properties the real
clients send (OSC, SDK, novaclient, tempest) with upstream's types and
``additionalProperties: false``. Properties that describe things
ministack does not have (networks with ports, key pairs, snapshot and
ephemeral block device mappings) pass the schema and are refused by the
API layer with a 400 naming them, rather than being silently ignored.
Block device mappings are checked further by
``miniapi.compute.block_devices`` (nova's ``from_api`` and
``_validate_bdm``).
"""

import copy

from miniapi.api.schemas import types

_BDM_V2 = {
    "type": "object",
    "properties": {
        "uuid": {"type": "string", "minLength": 1, "maxLength": 255,
                 "pattern": "^[a-zA-Z0-9._-]*$"},
        "source_type": {"type": "string",
                        "enum": ["volume", "image", "snapshot", "blank"]},
        "destination_type": {"type": "string",
                             "enum": ["local", "volume"]},
        "boot_index": {"type": ["integer", "string", "null"]},
        "delete_on_termination": types.boolean,
        "volume_size": {"type": ["integer", "string", "null"]},
        "device_name": types.device_name,
        "disk_bus": {"type": "string"},
        "device_type": {"type": "string"},
        "guest_format": {"type": "string"},
        "tag": types.tag,
        "volume_type": {"type": ["string", "null"]},
        "no_device": {},
    },
    "additionalProperties": False,
}

_NETWORKS = {
    "oneOf": [
        {"type": "string", "enum": ["none", "auto"]},
        {"type": "array",
         "items": {"type": "object",
                   "properties": {"uuid": {"type": "string"},
                                  "port": {"type": ["string", "null"]},
                                  "fixed_ip": {"type": "string"},
                                  "tag": types.tag},
                   "additionalProperties": False}},
    ],
}

# nova's ``_hints``, the same at every microversion. ``same_host`` takes
# any string (``items`` applies to a list only), ``different_host`` a
# UUID string; the items of either list must be UUIDs. Any other hint
# passes, as upstream: one that no scheduler filter reads is ignored.
_HINTS = {
    "type": "object",
    "properties": {
        "group": types.uuid,
        "different_host": {"oneOf": [types.uuid,
                                     {"type": "array",
                                      "items": types.uuid}]},
        "same_host": {"type": ["string", "array"], "items": types.uuid},
        "query": {"type": ["string", "object"]},
        "target_cell": types.name,
        "different_cell": {"type": ["string", "array"],
                           "items": {"type": "string"}},
        "build_near_host_ip": {"type": "string",
                               "oneOf": [{"format": "ipv4"},
                                         {"format": "ipv6"}]},
        "cidr": {"type": "string", "pattern": "^/[0-9a-f.:]+$"},
    },
    "additionalProperties": True,
}

_CREATE = {
    "name": types.name,
    "imageRef": {"type": "string", "maxLength": 255},
    "flavorRef": {"type": ["string", "integer"], "minLength": 1},
    "adminPass": {"type": "string"},
    "metadata": types.metadata,
    "networks": _NETWORKS,
    "min_count": types.positive_integer,
    "max_count": types.positive_integer,
    "return_reservation_id": types.boolean,
    "availability_zone": {"type": "string", "maxLength": 255},
    "key_name": {"type": ["string", "null"], "minLength": 1,
                 "maxLength": 255},
    "user_data": {"type": ["string", "null"], "maxLength": 65535},
    "config_drive": types.boolean,
    "security_groups": {"type": "array",
                        "items": {"type": "object",
                                  "properties": {"name": {"type": "string"}},
                                  "additionalProperties": False}},
    "block_device_mapping_v2": {"type": "array", "items": _BDM_V2},
    "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
    "accessIPv4": {"type": "string", "format": "ipv4"},
    "accessIPv6": {"type": "string", "format": "ipv6"},
}


def create(version):
    props = copy.deepcopy(_CREATE)
    if version >= "2.19":
        props["description"] = types.description
    if version >= "2.52":
        props["tags"] = {"type": "array", "maxItems": 50,
                         "items": {"type": "string", "minLength": 1,
                                   "maxLength": 60,
                                   "pattern": "^[^,/]*$"}}
    if version >= "2.74":
        props["host"] = types.fqdn
        props["hypervisor_hostname"] = types.fqdn
    if version >= "2.90":
        props["hostname"] = {"type": "string", "minLength": 1,
                             "maxLength": 255}
    return {
        "type": "object",
        "properties": {
            "server": {"type": "object", "properties": props,
                       "required": ["name", "flavorRef"],
                       "additionalProperties": False},
            "os:scheduler_hints": copy.deepcopy(_HINTS),
            "OS-SCH-HNT:scheduler_hints": copy.deepcopy(_HINTS),
        },
        "required": ["server"],
        "additionalProperties": False,
    }


def update(version):
    props = {"name": types.name,
             "OS-DCF:diskConfig": {"type": "string",
                                   "enum": ["AUTO", "MANUAL"]},
             "accessIPv4": _CREATE["accessIPv4"],
             "accessIPv6": _CREATE["accessIPv6"]}
    if version >= "2.19":
        props["description"] = types.description
    return {
        "type": "object",
        "properties": {"server": {"type": "object", "properties": props,
                                  "additionalProperties": False}},
        "required": ["server"],
        "additionalProperties": False,
    }


reboot = {
    "type": "object",
    "properties": {"reboot": {
        "type": "object",
        "properties": {"type": {"type": "string",
                                "enum": ["HARD", "Hard", "hard",
                                         "SOFT", "Soft", "soft"]}},
        "required": ["type"],
        "additionalProperties": False}},
    "required": ["reboot"],
    "additionalProperties": False,
}

get_console_output = {
    "type": "object",
    "properties": {"os-getConsoleOutput": {
        "type": "object",
        "properties": {"length": {"type": ["integer", "string", "null"],
                                  "pattern": "^-?[0-9]+$",
                                  "minimum": -1}},
        "additionalProperties": False}},
    "required": ["os-getConsoleOutput"],
    "additionalProperties": False,
}

# Every action body: exactly one key, the action's name.
action = {
    "type": "object",
    "minProperties": 1,
    "maxProperties": 1,
}

# List query: nova accepts many filters for admins; these are the ones the
# clients send. Before 2.75 unknown ones are ignored as upstream does.
_LIST_PARAMS = {
    "name": types.multi_params({"type": "string"}),
    "host": types.multi_params({"type": "string"}),
    "status": types.multi_params({"type": "string"}),
    "project_id": types.multi_params({"type": "string"}),
    "tenant_id": types.multi_params({"type": "string"}),
    "all_tenants": types.multi_params({"type": "string"}),
    "deleted": types.multi_params({"type": "string"}),
    "limit": types.multi_params(types.non_negative_integer),
    "marker": types.multi_params({"type": "string"}),
    "image": types.multi_params({"type": "string"}),
    "flavor": types.multi_params({"type": "string"}),
    "sort_key": types.multi_params({"type": "string"}),
    "sort_dir": types.multi_params({"type": "string",
                                    "enum": ["asc", "desc"]}),
}


def list_query(version):
    return {"type": "object", "properties": copy.deepcopy(_LIST_PARAMS),
            "additionalProperties": version < "2.75"}
