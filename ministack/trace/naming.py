"""How a span's request becomes a hop's name, and what of it is masked.

Two attaches must give hops of the same name (ids and the project become
placeholders) and no name, error or detail may carry a secret. Used by
:mod:`ministack.trace.hops` when reading a trace, and by the spans that
name themselves while tracing (nova's Cinder client, cinder-api's entry).
"""

import re

from oslo_utils import strutils

_UUID = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?" \
        r"[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
UUID_RE = re.compile("^%s$" % _UUID)
REQ_RE = re.compile(r"req-%s" % _UUID)
# /v3/<project>/... and /v2.1/<project>/... (a project id is a hex string)
_PROJECT_RE = re.compile(r"^(/v[0-9.]+)/([0-9a-fA-F]{32}|%s)(?=/|$)" % _UUID)
# The first segment after /v2.1/ or /v3/, followed by more path.
_FIRST_SEGMENT_RE = re.compile(r"^/(v2\.1|v3)/([^/]+)(?=/.)")
# First segments after /v2.1/ (nova) and /v3/ (cinder, keystone) that are
# the APIs' own collections, not a project: any other segment there is
# the project of the URL, whatever it is (a name on a noauth stack).
# Every os-*/OS-* extension is a collection too.
_COLLECTIONS = frozenset((
    # nova v2.1
    "servers", "flavors", "images", "limits", "extensions",
    # cinder v3 (project-less URLs, microversion 3.67+)
    "volumes", "attachments", "types", "snapshots", "backups", "messages",
    "groups", "group_types", "group_snapshots", "qos-specs",
    "scheduler-stats", "manageable_volumes", "manageable_snapshots",
    "workers", "clusters", "capabilities", "default-types",
    "resource_filters", "consistencygroups", "cgsnapshots",
    "volume-transfers",
    # keystone v3
    "auth", "projects", "users", "domains", "roles", "regions",
    "endpoints", "services", "credentials", "policies",
    "role_assignments", "role_inferences", "system", "registered_limits",
    "application_credentials",
))

def mask(value):
    """``value`` (dict, list, str...) with every secret masked."""
    if isinstance(value, dict):
        value = strutils.mask_dict_password(value)
        return {key: mask(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if all(isinstance(item, str) for item in value):
            # An argv: "--password VALUE" hides VALUE, the next item.
            from ministack import executor
            value = executor.masked(list(value))
        return [mask(item) for item in value]
    if isinstance(value, str):
        return strutils.mask_password(value)
    return value


_ACTION_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]{0,63}$")


def action_name(body):
    """The action an action request's body names (``{"os-attach": {...}}``
    -> ``os-attach``): its only key, if it looks like an action name;
    otherwise None. Only the key is ever kept, never the rest of the body
    (a connector, a token)."""
    if isinstance(body, dict) and len(body) == 1:
        key = next(iter(body))
        if isinstance(key, str) and _ACTION_RE.match(key):
            return key
    return None


def rest_name(method, path):
    """``METHOD /path`` with ids as placeholders: the same hop of two
    attaches has the same name. The project segment becomes
    ``{project}``: a hex project id anywhere, and after ``/v2.1/`` or
    ``/v3/`` any segment that is not one of the APIs' collections (a
    project name on a noauth stack)."""
    path = path or "/"
    path = _PROJECT_RE.sub(r"\1/{project}", path)
    match = _FIRST_SEGMENT_RE.match(path)
    if match and match.group(2) != "{project}" and \
            match.group(2) not in _COLLECTIONS and \
            not match.group(2).lower().startswith("os-"):
        path = "/%s/{project}%s" % (match.group(1), path[match.end():])
    parts = ["{id}" if UUID_RE.match(part) else part
             for part in path.split("/")]
    return "%s %s" % (method, "/".join(parts))
