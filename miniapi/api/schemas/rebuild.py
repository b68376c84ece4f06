"""The ``rebuild`` server action's body, as upstream's
``schemas/servers.py`` (``base_rebuild`` and its microversions).

``imageRef`` is required and must be an image id (a UUID); what
ministack does not keep (``metadata``, ``accessIPv4/6``,
``preserve_ephemeral``, ``personality``, ``user_data``, the disk
config) is validated as upstream and then left as the server has it.
"""

import copy

from miniapi.api.schemas import types

_REBUILD = {
    "name": types.name,
    "imageRef": types.uuid,
    "adminPass": {"type": "string"},
    "metadata": types.metadata,
    "preserve_ephemeral": types.boolean,
    "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
    "accessIPv4": {"type": "string", "format": "ipv4"},
    "accessIPv6": {"type": "string", "format": "ipv6"},
    "personality": {"type": "array",
                    "items": {"type": "object",
                              "properties": {
                                  "path": {"type": "string"},
                                  "contents": {"type": "string"}},
                              "additionalProperties": False}},
}


def rebuild(version):
    """The body schema at ``version`` (an APIVersion)."""
    props = copy.deepcopy(_REBUILD)
    if version >= "2.19":
        props["description"] = types.description
    if version >= "2.54":
        props["key_name"] = {"type": ["string", "null"], "minLength": 1,
                             "maxLength": 255}
    if version >= "2.57":
        del props["personality"]
        props["user_data"] = {"type": ["string", "null"],
                              "maxLength": 65535}
    if version >= "2.63":
        props["trusted_image_certificates"] = {
            "type": ["array", "null"], "minItems": 1, "maxItems": 50,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1}}
    if version >= "2.90":
        props["hostname"] = {"type": "string", "minLength": 1,
                             "maxLength": 255}
    return {
        "type": "object",
        "properties": {"rebuild": {
            "type": "object", "properties": props,
            "required": ["imageRef"], "additionalProperties": False}},
        "required": ["rebuild"],
        "additionalProperties": False,
    }
