"""Request schemas of ``os-migrateLive`` (nova's
``schemas/migrate_server.py``), per microversion:

* 2.1-2.24: ``block_migration``, ``disk_over_commit`` and ``host`` (a
  name or null), all three required;
* 2.25: ``disk_over_commit`` gone (an extra key is a 400),
  ``block_migration`` may be ``"auto"``; ``block_migration`` and
  ``host`` required;
* 2.30-2.67: an optional ``force`` (boolean);
* 2.68: ``force`` gone again.
"""

import copy

from miniapi.api.schemas import types

_host = {"type": ["string", "null"], "minLength": 1, "maxLength": 255,
         "pattern": "^[a-zA-Z0-9-._]*$"}


def _body(properties, required):
    return {"type": "object",
            "properties": {"os-migrateLive": {
                "type": "object", "properties": properties,
                "required": required, "additionalProperties": False}},
            "required": ["os-migrateLive"], "additionalProperties": False}


migrate_live = _body({"block_migration": types.boolean,
                      "disk_over_commit": types.boolean,
                      "host": _host},
                     ["block_migration", "disk_over_commit", "host"])

_auto = copy.deepcopy(types.boolean)
_auto["enum"] = _auto["enum"] + ["auto"]

migrate_live_v225 = _body({"block_migration": _auto, "host": _host},
                          ["block_migration", "host"])

migrate_live_v230 = _body({"block_migration": _auto, "host": _host,
                           "force": types.boolean},
                          ["block_migration", "host"])

migrate_live_v268 = migrate_live_v225
