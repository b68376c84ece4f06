"""Reusable parameter types (nova's ``validation/parameter_types.py``)."""

import copy

uuid = {"type": "string", "format": "uuid"}

# Names may contain inner spaces but no leading or trailing whitespace.
name = {"type": "string", "minLength": 1, "maxLength": 255,
        "pattern": r"^(?!\s)[\s\S]*(?<!\s)$"}

description = {"type": ["string", "null"], "minLength": 0,
               "maxLength": 255}

boolean = {"type": ["boolean", "string"],
           "enum": [True, "True", "TRUE", "true", "1", "ON", "On", "on",
                    "YES", "Yes", "yes",
                    False, "False", "FALSE", "false", "0", "OFF", "Off",
                    "off", "NO", "No", "no"]}

# Device tags (2.49+): no comma or slash, they end up in a metadata path.
tag = {"type": "string", "minLength": 1, "maxLength": 60,
       "pattern": "^[^,/]*$"}

# nova/block_device.py _dev re: /dev/[x][prefix-letter][d]<letters>[digits]
device_name = {"type": ["string", "null"],
               "pattern": "(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$"}

# A host or node name (nova's parameter_types.fqdn).
fqdn = {"type": "string", "minLength": 1, "maxLength": 255,
        "pattern": "^[a-zA-Z0-9-._]*$"}

positive_integer = {"type": ["integer", "string"],
                    "pattern": "^[0-9]*$", "minimum": 1, "minLength": 1}

non_negative_integer = {"type": ["integer", "string"],
                        "pattern": "^[0-9]*$", "minimum": 0,
                        "minLength": 1}

metadata = {"type": "object",
            "patternProperties": {
                "^[a-zA-Z0-9-_:. ]{1,255}$": {"type": "string",
                                              "maxLength": 255}},
            "additionalProperties": False}


def single_param(schema):
    """A query parameter given exactly once (values arrive as lists)."""
    return {"type": "array", "minItems": 1, "maxItems": 1,
            "items": copy.deepcopy(schema)}


def multi_params(schema):
    return {"type": "array", "items": copy.deepcopy(schema)}
