"""Request schemas of ``/servers/{id}/metadata`` (nova's
``schemas/server_metadata.py``): every key 1-255 characters of
``[a-zA-Z0-9-_:. ]``, every value a string of at most 255."""

import copy

from miniapi.api.schemas import types

# POST (merge) and PUT (replace) of the whole set.
create = {
    "type": "object",
    "properties": {"metadata": copy.deepcopy(types.metadata)},
    "required": ["metadata"],
    "additionalProperties": False,
}

update_all = copy.deepcopy(create)

# PUT of one key: {"meta": {KEY: VALUE}}, one item at most.
update = {
    "type": "object",
    "properties": {"meta": dict(copy.deepcopy(types.metadata),
                                maxProperties=1)},
    "required": ["meta"],
    "additionalProperties": False,
}
