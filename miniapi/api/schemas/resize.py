"""Request schemas of resize and cold migration (nova's
``schemas/servers.py`` ``resize`` and ``schemas/migrate_server.py``).

``resize`` needs ``flavorRef`` (a string or an integer) and accepts
``OS-DCF:diskConfig`` (``AUTO`` or ``MANUAL``). ``migrate`` is not
validated below 2.56; from 2.56 it is null or ``{"host": NAME}`` (a
host name, or null for any host). ``confirmResize`` and
``revertResize`` take null, as upstream does not read their value.
"""

resize = {
    "type": "object",
    "properties": {"resize": {
        "type": "object",
        "properties": {
            "flavorRef": {"type": ["string", "integer"], "minLength": 1},
            "OS-DCF:diskConfig": {"type": "string",
                                  "enum": ["AUTO", "MANUAL"]}},
        "required": ["flavorRef"],
        "additionalProperties": False}},
    "required": ["resize"],
    "additionalProperties": False,
}

migrate_v256 = {
    "type": "object",
    "properties": {"migrate": {
        "type": ["object", "null"],
        "properties": {"host": {
            "type": ["string", "null"], "minLength": 1, "maxLength": 255,
            "pattern": "^[a-zA-Z0-9-._]*$"}},
        "additionalProperties": False}},
    "required": ["migrate"],
    "additionalProperties": False,
}
