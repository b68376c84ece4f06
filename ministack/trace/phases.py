"""The seed's phases of an attach and of a detach, and the hop in each.

The seed tells the attach in four phases and the detach in four of its
own ("Detach · unwinding the attachment"); a trace is one or the other,
and its hops are labelled with that journey's phases
(:func:`ministack.trace.hops.build` calls :func:`journey_of`, then
:func:`own_phase` for each hop in start order; a hop no rule names takes
its parent's phase, a root none names has none: the CLI's GETs before
the attach).

Which journey (:func:`journey_of`), first hop in start order that says:

* the compute API's entry: ``POST .../os-volume_attachments`` is an
  attach, ``DELETE .../os-volume_attachments/{id}`` a detach;
* else the cast: ``attach_volume`` or ``detach_volume``;
* Cinder's entry of an ``os-extend`` action, or the cast
  ``external_instance_event``: an extend of an attached volume (3.42);
* the compute API's ``POST /v2.1/servers``, or the cast
  ``build_and_run_instance``: a boot (from volume, when its mappings
  name volumes);
* else None (another request, or a trace without the API's entry):
  labelled with the attach's rules, as before there were two.

The attach (``reserve``, ``cast``, ``connect/attach``, ``complete``),
first match wins:

1. ``complete``: attachment_complete (``os-complete``), attachment_delete
   (``DELETE .../attachments/{id}``), ``os-roll_detaching``,
   ``os-detach`` and ``os-unreserve``, client side or server side.
2. ``cast``: a CAST made by a client (the hop that puts the message on
   the broker).
3. ``connect/attach``: the compute's handler of a CAST (``attach_volume``).
4. ``reserve``: the compute API's entry for ``os-volume_attachments``,
   the CALL ``reserve_block_device_name``, attachment_create
   (``POST .../attachments``) and ``os-begin_detaching``.

The detach (``begin_detaching``, ``cast``, ``unplug + disconnect``,
``attachment_delete``), first match wins:

1. ``attachment_delete``: ``DELETE .../attachments/{id}`` (with the tgt
   commands under it); the legacy flow's ``os-terminate_connection`` and
   ``os-detach`` release the volume in its place.
2. ``begin_detaching``: the compute API's ``DELETE
   .../os-volume_attachments/{id}`` (and the volume's GET under it) and
   ``os-begin_detaching``.
3. ``cast``: a CAST made by a client (``detach_volume`` to the broker).
4. ``unplug + disconnect``: the compute's handler of the CAST and all it
   does on the host: libvirt's detach with its retries, the guest
   releasing the disk, the QEMU/os-brick disconnect, the secret undefined.
   A guest that refuses: driver_detach calls ``os-roll_detaching`` in
   this phase (the seed's "driver_detach ... A guest refusal triggers
   roll_detaching"), and no ``attachment_delete`` phase follows.

A failed attach has one phase more, ``recovery``: the undo steps after
its failure (attachment_delete, bdm.destroy, the driver's detach and
disconnect), whatever phase the rules above gave them, as the seed draws
its recovery paths after the failure. Which hops those are is known only
from the failure (:func:`ministack_course.state.recovery_phase`).

The extend (``extend``, ``volume-extended``, ``cast``, ``resize``),
first match wins:

1. ``resize``: the compute's handler of the CAST and all it does on
   the host (Cinder's new size read, ``virDomainBlockResize``).
2. ``cast``: a CAST made by a client (``external_instance_event``).
3. ``volume-extended``: cinder-volume's ``POST
   /v2.1/os-server-external-events`` and nova-api's entry of it.
4. ``extend``: Cinder's ``os-extend`` entry and cinder-volume's work
   under it (``lvextend``, ``LOOP_SET_STATUS64``, tgt's LUN reopened).

The boot from volume (``reserve``, ``cast``, ``connect + spawn``,
``complete``), the attach's handshake at another moment; first match
wins:

1. ``complete``: attachment_complete (``os-complete``), made once the
   guest runs.
2. ``cast``: a CAST made by a client (``build_and_run_instance``).
3. ``connect + spawn``: the compute's handler of the CAST and all it
   does on the host: the volumes it creates and waits for,
   attachment_update with its connector, the connect, the domain
   defined with the root volume as ``vda`` and started.
4. ``reserve``: the compute API's ``POST /v2.1/servers`` and its
   attachment_create (``POST .../attachments``, no connector) for each
   volume the user brought.
"""

import re

ATTACH = "attach"
DETACH = "detach"
EXTEND = "extend"
BOOT = "boot"
ATTACH_PHASES = ("reserve", "cast", "connect/attach", "complete")
DETACH_PHASES = ("begin_detaching", "cast", "unplug + disconnect",
                 "attachment_delete")
EXTEND_PHASES = ("extend", "volume-extended", "cast", "resize")
BOOT_PHASES = ("reserve", "cast", "connect + spawn", "complete")
#: A failed attach's undo steps (ministack_course.state.recovery_phase).
RECOVERY = "recovery"
#: The phases of each journey, in order (None: labelled as the attach).
PHASES = {ATTACH: ATTACH_PHASES, DETACH: DETACH_PHASES,
          EXTEND: EXTEND_PHASES, BOOT: BOOT_PHASES, None: ATTACH_PHASES}
_EXTEND_CAST = "external_instance_event"
_BOOT_CAST = "build_and_run_instance"

_COMPLETE_ACTIONS = ("os-complete", "os-roll_detaching", "os-detach",
                     "os-unreserve")
_RELEASE_ACTIONS = ("os-detach", "os-terminate_connection")
_RESERVE_CALLS = ("reserve_block_device_name",)
_ACTION_SUFFIX = re.compile(r" \([^()]*\)$")


def _rest(hop):
    """(method, path) of a REST hop's name, its action suffix dropped."""
    method, _, path = hop["name"].partition(" ")
    return method, _ACTION_SUFFIX.sub("", path)


def _is_api_entry(hop):
    return hop["kind"] == "REST" and hop["actor"] == "nova-api"


def journey_of(hops):
    """``"attach"``, ``"detach"``, ``"extend"``, ``"boot"`` or None for
    ``hops`` in start order."""
    for hop in hops:
        if _is_api_entry(hop):
            method, path = _rest(hop)
            if method == "POST" and path.endswith("/v2.1/servers"):
                return BOOT
            if method == "POST" and path.endswith("/os-volume_attachments"):
                return ATTACH
            if method == "DELETE" and \
                    re.search(r"/os-volume_attachments/[^/]+$", path):
                return DETACH
        if hop["kind"] == "REST" and hop["actor"] == "cinder" and \
                (hop["details"] or {}).get("action") == "os-extend":
            return EXTEND
        if hop["kind"] == "CAST" and \
                hop["name"] in ("attach_volume", "detach_volume"):
            return ATTACH if hop["name"] == "attach_volume" else DETACH
        if hop["kind"] == "CAST" and hop["name"] == _EXTEND_CAST:
            return EXTEND
        if hop["kind"] == "CAST" and hop["name"] == _BOOT_CAST:
            return BOOT
    return None


def own_phase(journey, hop):
    """The phase the rules give ``hop`` itself (None: its parent's)."""
    if journey == DETACH:
        return _detach_phase(hop)
    if journey == EXTEND:
        return _extend_phase(hop)
    if journey == BOOT:
        return _boot_phase(hop)
    return _attach_phase(hop)


def _attach_phase(hop):
    name = hop["name"]
    kind = hop["kind"]
    action = (hop["details"] or {}).get("action")
    if action in _COMPLETE_ACTIONS or any(
            name.endswith(suffix) for suffix in
            ("attachment_complete", "attachment_delete", "roll_detaching")):
        return "complete"
    if kind == "REST":
        method, path = _rest(hop)
        if method == "DELETE" and re.search(r"/attachments/\{id\}$", path):
            return "complete"
        if method == "POST" and re.search(r"/attachments$", path):
            return "reserve"
        if method in ("POST", "DELETE") and \
                "/os-volume_attachments" in path and _is_api_entry(hop):
            return "reserve"
        if action == "os-begin_detaching" or \
                name.endswith("begin_detaching"):
            return "reserve"
    if kind == "CAST":
        return "cast" if hop["actor"] == "rabbitmq" else "connect/attach"
    if kind == "CALL" and name in _RESERVE_CALLS:
        return "reserve"
    return None


def _detach_phase(hop):
    kind = hop["kind"]
    action = (hop["details"] or {}).get("action")
    if kind == "REST":
        method, path = _rest(hop)
        if (method == "DELETE" and
                re.search(r"/attachments/\{id\}$", path)) or \
                action in _RELEASE_ACTIONS:
            return "attachment_delete"
        if action == "os-begin_detaching" or (
                method == "DELETE" and _is_api_entry(hop) and
                "/os-volume_attachments/" in path):
            return "begin_detaching"
    if kind == "CAST":
        return "cast" if hop["actor"] == "rabbitmq" \
            else "unplug + disconnect"
    return None


def _extend_phase(hop):
    kind = hop["kind"]
    if kind == "CAST":
        return "cast" if hop["actor"] == "rabbitmq" else "resize"
    if kind == "REST":
        method, path = _rest(hop)
        if method == "POST" and path.endswith("/os-server-external-events"):
            return "volume-extended"
        if (hop["details"] or {}).get("action") == "os-extend":
            return "extend"
    return None


def _boot_phase(hop):
    kind = hop["kind"]
    action = (hop["details"] or {}).get("action")
    if action == "os-complete" or hop["name"].endswith(
            "attachment_complete"):
        return "complete"
    if kind == "CAST":
        return "cast" if hop["actor"] == "rabbitmq" else "connect + spawn"
    if kind == "REST":
        method, path = _rest(hop)
        if _is_api_entry(hop) and method == "POST" and \
                path.endswith("/v2.1/servers"):
            return "reserve"
        # nova-api's reservation; the host's own attachment_create (for
        # a volume it made) is its parent's, connect + spawn.
        if method == "POST" and re.search(r"/attachments$", path) and \
                "nova-api" in (hop["actor"], hop.get("from_actor")):
            return "reserve"
    return None
