"""Request schemas of the flavor routes (nova's schemas/flavor_manage.py,
flavor_access.py and flavors_extraspecs.py)."""

import copy

from miniapi.api.schemas import types

# nova's db.MAX_INT: the largest value the integer columns hold.
MAX_INT = 0x7FFFFFFF

_positive = {"type": ["integer", "string"], "pattern": "^[0-9]*$",
             "minimum": 1, "maximum": MAX_INT, "minLength": 1}
_non_negative = {"type": ["integer", "string"], "pattern": "^[0-9]*$",
                 "minimum": 0, "maximum": MAX_INT, "minLength": 1}

description = {"type": ["string", "null"], "minLength": 0,
               "maxLength": 65535,
               # printable characters only, as nova's description type
               "pattern": r"^[^\x00-\x1f\x7f]*$"}

_CREATE_PROPS = {
    "name": types.name,
    # A flavor id is free text from a restricted alphabet, or a number.
    "id": {"type": ["string", "number", "null"], "minLength": 1,
           "maxLength": 255, "pattern": r"^(?! )[a-zA-Z0-9. _-]+(?<! )$"},
    "ram": _positive,
    "vcpus": _positive,
    "disk": _non_negative,
    "OS-FLV-EXT-DATA:ephemeral": _non_negative,
    "swap": _non_negative,
    "rxtx_factor": {"type": ["number", "string"],
                    "pattern": r"^[0-9]+(\.[0-9]+)?$",
                    "minimum": 0, "exclusiveMinimum": True,
                    "maximum": 3.40282e+38},
    "os-flavor-access:is_public": types.boolean,
}


def create(version):
    props = copy.deepcopy(_CREATE_PROPS)
    if version >= "2.55":
        props["description"] = description
    return {
        "type": "object",
        "properties": {"flavor": {
            "type": "object", "properties": props,
            "required": ["name", "ram", "vcpus", "disk"],
            "additionalProperties": False}},
        "required": ["flavor"],
        "additionalProperties": False,
    }


update = {
    "type": "object",
    "properties": {"flavor": {
        "type": "object", "properties": {"description": description},
        "required": ["description"], "additionalProperties": False}},
    "required": ["flavor"],
    "additionalProperties": False,
}

_tenant = {"type": "object",
           "properties": {"tenant": {"type": "string", "minLength": 1,
                                     "maxLength": 255,
                                     "pattern": r"^[a-zA-Z0-9-_]*$"}},
           "required": ["tenant"], "additionalProperties": False}

add_tenant_access = {"type": "object",
                     "properties": {"addTenantAccess": _tenant},
                     "required": ["addTenantAccess"],
                     "additionalProperties": False}

remove_tenant_access = {"type": "object",
                        "properties": {"removeTenantAccess": _tenant},
                        "required": ["removeTenantAccess"],
                        "additionalProperties": False}

_SPEC_KEY = "^[a-zA-Z0-9-_:. ]{1,255}$"
_spec_value = {"type": ["string", "number", "boolean"], "minLength": 0,
               "maxLength": 255}

extra_specs_create = {
    "type": "object",
    "properties": {"extra_specs": {
        "type": "object",
        "patternProperties": {_SPEC_KEY: _spec_value},
        "additionalProperties": False}},
    "required": ["extra_specs"],
    "additionalProperties": False,
}

extra_spec_update = {
    "type": "object",
    "patternProperties": {_SPEC_KEY: _spec_value},
    "minProperties": 1,
    "maxProperties": 1,
    "additionalProperties": False,
}
