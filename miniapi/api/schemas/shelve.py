"""Request schemas of the shelve actions (nova's ``schemas/shelve.py``).

``shelve`` and ``shelveOffload`` take null (or an empty object, as the
other argument-less actions here). ``unshelve``'s value is not validated
below 2.77; from 2.77 it is null or ``{"availability_zone": NAME}``;
from 2.91 null or an object with an optional ``availability_zone``
(a name, or null to unpin) and an optional ``host``.
"""

from miniapi.api.schemas import types


def _no_argument(action):
    return {"type": "object",
            "properties": {action: {"type": ["object", "null"],
                                    "additionalProperties": False}},
            "required": [action], "additionalProperties": False}


shelve = _no_argument("shelve")
shelve_offload = _no_argument("shelveOffload")

unshelve_v277 = {
    "type": "object",
    "properties": {"unshelve": {
        "type": ["object", "null"],
        "properties": {"availability_zone": types.name},
        "required": ["availability_zone"],
        "additionalProperties": False}},
    "required": ["unshelve"],
    "additionalProperties": False,
}

unshelve_v291 = {
    "type": "object",
    "properties": {"unshelve": {
        "oneOf": [
            {"type": "object",
             "properties": {
                 "availability_zone": {"oneOf": [{"type": "null"},
                                                 {"type": "string"}]},
                 "host": {"type": "string"}},
             "additionalProperties": False},
            {"type": "null"}]}},
    "required": ["unshelve"],
    "additionalProperties": False,
}
