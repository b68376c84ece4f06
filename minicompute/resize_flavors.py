"""The flavors of a server while it is resized or cold-migrated.

nova keeps them in ``instance_extra.flavor`` as ``{"cur", "old", "new"}``
and the vm_state to go back to in ``system_metadata['old_vm_state']``.
ministack's ``instances.flavor`` holds the current flavor (what the
server views read), and during a move also, next to its keys:

* ``new``: the flavor asked for (written by the API when the move
  starts, applied by the destination's ``finish_resize``);
* ``old``: the flavor the server had (kept from ``finish_resize`` until a
  confirm drops it or a revert restores it);
* ``old_vm_state``: ``active`` or ``stopped``, what a revert or a
  failure that upstream rolls back returns the server to.

The columns nova also copies from the flavor (``instance_type_id``,
``memory_mb``, ``vcpus``, ``root_gb``, ``ephemeral_gb``) follow the
current flavor. Each function returns the values to write, so the
caller writes them in one ``instance_update``.
"""

import json

from minicompute import vm_states

#: The keys a move adds to ``instances.flavor``.
MOVE_KEYS = ("old", "new", "old_vm_state")


def _load(instance):
    raw = instance.get("flavor") if isinstance(instance, dict) \
        else instance.flavor
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        value = {}
    return value if isinstance(value, dict) else {}


def current(instance):
    """The flavor the server has now (a dict, without the move's keys)."""
    return {k: v for k, v in _load(instance).items() if k not in MOVE_KEYS}


def new(instance):
    """The flavor the move goes to (None when no move was started)."""
    return _load(instance).get("new")


def old(instance):
    """The flavor the server had before ``finish_resize`` (or None)."""
    return _load(instance).get("old")


def old_vm_state(instance):
    """The vm_state the server had when the move started."""
    return _load(instance).get("old_vm_state") or vm_states.ACTIVE


def columns(flavor):
    """The instance columns nova copies from ``flavor``."""
    return {"instance_type_id": flavor.get("id"),
            "memory_mb": flavor.get("memory_mb"),
            "vcpus": flavor.get("vcpus"),
            "root_gb": flavor.get("root_gb") or 0,
            "ephemeral_gb": flavor.get("ephemeral_gb") or 0}


def start(instance, new_flavor, vm_state):
    """The move begins (API): remember ``new_flavor`` and ``vm_state``."""
    value = dict(current(instance), new=new_flavor, old_vm_state=vm_state)
    return {"flavor": json.dumps(value)}


def apply_new(instance):
    """``finish_resize``: the new flavor becomes the server's, the
    current one is kept as ``old`` for a revert."""
    loaded = _load(instance)
    flavor = loaded.get("new") or current(instance)
    value = dict(flavor, old=current(instance),
                 old_vm_state=loaded.get("old_vm_state"))
    return dict(columns(flavor), flavor=json.dumps(value))


def restore_old(instance):
    """A revert: the old flavor is the server's again, the move forgotten."""
    flavor = old(instance) or current(instance)
    return dict(columns(flavor), flavor=json.dumps(flavor))


def forget(instance):
    """A confirm, or a move that failed before the flavor changed: the
    current flavor stays, the move's keys go."""
    flavor = current(instance)
    return dict(columns(flavor), flavor=json.dumps(flavor))
