"""os-volume_attachments request schemas (upstream's, per microversion).

POST bodies: ``volumeId`` (required) and ``device`` from 2.0, ``tag`` from
2.49, ``delete_on_termination`` from 2.79. PUT below 2.85 is swap-volume
(``volumeId`` only); from 2.85 it may also carry the attachment's other
fields, of which only ``delete_on_termination`` may differ.
"""

import copy

from miniapi.api.schemas import types


def _attachment(properties, required=("volumeId",)):
    return {
        "type": "object",
        "properties": {
            "volumeAttachment": {
                "type": "object",
                "properties": properties,
                "required": list(required),
                "additionalProperties": False,
            },
        },
        "required": ["volumeAttachment"],
        "additionalProperties": False,
    }


_CREATE = {"volumeId": types.uuid, "device": types.device_name}


def create(version):
    props = copy.deepcopy(_CREATE)
    if version >= "2.49":
        props["tag"] = types.tag
    if version >= "2.79":
        props["delete_on_termination"] = {"type": "boolean"}
    return _attachment(props)


def update(version):
    if version < "2.85":
        return _attachment({"volumeId": types.uuid})
    return _attachment({
        "volumeId": types.uuid,
        "device": types.device_name,
        "tag": types.tag,
        "delete_on_termination": {"type": "boolean"},
        "serverId": types.uuid,
        "id": types.uuid,
    })


def index_query(version):
    """limit/offset; unknown parameters are 400 only from 2.75."""
    schema = {
        "type": "object",
        "properties": {
            "limit": types.single_param(types.non_negative_integer),
            "offset": types.single_param(types.non_negative_integer),
        },
        "additionalProperties": version < "2.75",
    }
    return schema
