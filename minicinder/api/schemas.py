"""JSON schemas of the request bodies (upstream's, ``cinder/api/schemas``).

Every object is ``additionalProperties: false`` so an unknown key is a 400
rather than silently ignored, and every optional key accepts ``null``
because OSC sends explicit nulls.
"""

import copy

from minicinder.api import connector as connector_schema

uuid = {"type": "string", "format": "uuid"}
nullable_uuid = {"type": ["string", "null"], "format": "uuid"}
name = {"type": ["string", "null"], "maxLength": 255}
connector = connector_schema.connector
nullable_connector = connector_schema.nullable_connector
metadata = {"type": ["object", "null"],
            "additionalProperties": {"type": "string", "maxLength": 255},
            "propertyNames": {"minLength": 1, "maxLength": 255}}


def one(key, body, required=None):
    """``{key: {...body...}}`` with both levels closed."""
    return {"type": "object",
            "properties": {key: {"type": "object", "properties": body,
                                 "required": required or [],
                                 "additionalProperties": False}},
            "required": [key], "additionalProperties": False}


# --- attachments ---

attachment_create = one("attachment", {
    "volume_uuid": uuid,
    # cinderclient sends null when no instance is given.
    "instance_uuid": nullable_uuid,
    "connector": nullable_connector,
}, required=["volume_uuid"])

attachment_create_v354 = copy.deepcopy(attachment_create)
# The openstack CLI sends "mode": null when --mode is not given; null
# means the default, as an absent mode does (rw once connected).
attachment_create_v354["properties"]["attachment"]["properties"]["mode"] = {
    "type": ["string", "null"], "enum": ["rw", "ro", None]}

attachment_update = one("attachment", {
    "connector": dict(connector, minProperties=1),
}, required=["connector"])

attachment_complete = {
    "type": "object", "properties": {"os-complete": {}},
    "required": ["os-complete"], "additionalProperties": False}

# --- volumes ---

volume_size = {"type": ["integer", "string"], "pattern": "^[0-9]+$",
               "minimum": 1, "maximum": 2147483647}

# A create may leave the size out, or send null (cinderclient does when
# no size is given): the clone's source gives it, or the create is 400.
volume_size_or_null = dict(volume_size,
                           type=["integer", "string", "null"])

volume_create = one("volume", {
    "size": volume_size_or_null,
    "name": name, "description": name,
    "display_name": name, "display_description": name,
    "volume_type": {"type": ["string", "null"], "maxLength": 255},
    "availability_zone": name,
    "metadata": metadata,
    "multiattach": {"type": ["boolean", "null"]},
    "snapshot_id": nullable_uuid, "source_volid": nullable_uuid,
    "consistencygroup_id": nullable_uuid, "group_id": nullable_uuid,
    "backup_id": nullable_uuid,
    "imageRef": {"type": ["string", "null"]},
})
volume_create["properties"]["OS-SCH-HNT:scheduler_hints"] = {
    "type": ["object", "null"]}

volume_update = one("volume", {
    "name": name, "description": name,
    "display_name": name, "display_description": name,
    "metadata": metadata,
})
volume_update["properties"]["volume"]["minProperties"] = 1

# --- volume types ---

extra_specs = {"type": "object",
               "additionalProperties": {"type": "string", "maxLength": 255},
               "propertyNames": {"minLength": 1, "maxLength": 255}}

volume_type_create = one("volume_type", {
    "name": {"type": "string", "minLength": 1, "maxLength": 255},
    "description": name,
    "os-volume-type-access:is_public": {"type": "boolean"},
    "extra_specs": extra_specs,
}, required=["name"])

volume_type_update = one("volume_type", {
    "name": {"type": ["string", "null"], "maxLength": 255},
    "description": name,
    "is_public": {"type": ["boolean", "string", "null"]},
}, required=[])

extra_specs_create = {"type": "object",
                      "properties": {"extra_specs": extra_specs},
                      "required": ["extra_specs"],
                      "additionalProperties": False}

# --- legacy volume actions (the value under the action's key) ---

_anything = {}
# A boolean, or a string spelling one (upstream's boolean parameter).
_flag = {"type": ["boolean", "string"],
         "enum": [True, False, "True", "False", "true", "false", "1", "0",
                  "yes", "no", "on", "off", "t", "f", "y", "n"]}
_closed = {"type": ["object", "null"], "properties": {},
           "additionalProperties": False}

volume_actions = {
    "os-reserve": _anything,
    "os-unreserve": _anything,
    "os-begin_detaching": _anything,
    "os-roll_detaching": _anything,
    "os-initialize_connection": {
        "type": "object", "properties": {"connector": connector},
        "required": ["connector"], "additionalProperties": False},
    "os-terminate_connection": {
        "type": "object", "properties": {"connector": connector},
        "required": ["connector"], "additionalProperties": False},
    "os-attach": {
        "type": "object",
        "properties": {"instance_uuid": uuid,
                       "host_name": {"type": "string", "maxLength": 255},
                       "mountpoint": {"type": "string", "maxLength": 255},
                       "mode": {"type": "string", "enum": ["rw", "ro"]}},
        "required": ["mountpoint"], "additionalProperties": False},
    "os-detach": {
        "type": ["object", "null"],
        "properties": {"attachment_id": nullable_uuid},
        "additionalProperties": False},
    "os-force_detach": {
        "type": ["object", "null"],
        "properties": {"attachment_id": nullable_uuid,
                       "connector": nullable_connector},
        "additionalProperties": False},
    "os-force_delete": _anything,
    "os-extend": {
        "type": "object", "properties": {"new_size": volume_size},
        "required": ["new_size"], "additionalProperties": False},
    # 3.71 (nova's answer to a volume-extended event the backend
    # waits for: upstream's admin_actions.extend_volume_completion)
    "os-extend_volume_completion": {
        "type": "object",
        "properties": {"error": {"type": ["string", "null", "boolean"]}},
        "additionalProperties": False},
    # 3.68 (nova's rebuild of a volume-backed server)
    "os-reimage": {
        "type": "object",
        "properties": {"image_id": uuid, "reimage_reserved": _flag},
        "required": ["image_id"], "additionalProperties": False},
    "os-retype": {
        "type": "object",
        "properties": {"new_type": {"type": "string", "minLength": 1,
                                    "maxLength": 255},
                       "migration_policy": {
                           "type": ["string", "null"],
                           "enum": ["on-demand", "never", None]}},
        "required": ["new_type"], "additionalProperties": False},
    "os-set_bootable": {
        "type": "object", "properties": {"bootable": _flag},
        "required": ["bootable"], "additionalProperties": False},
    "os-update_readonly_flag": {
        "type": "object", "properties": {"readonly": _flag},
        "required": ["readonly"], "additionalProperties": False},
    "os-set_image_metadata": {
        "type": "object",
        "properties": {"metadata": dict(metadata, type="object")},
        "required": ["metadata"], "additionalProperties": False},
    "os-show_image_metadata": _anything,
    "os-unset_image_metadata": {
        "type": "object",
        "properties": {"key": {"type": "string", "minLength": 1,
                               "maxLength": 255}},
        "required": ["key"], "additionalProperties": False},
    "os-reset_status": {
        "type": "object",
        "properties": {"status": {"type": "string"},
                       "attach_status": {"type": "string"},
                       "migration_status": {"type": "string"}},
        "minProperties": 1, "additionalProperties": False},
}
