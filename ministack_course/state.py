"""What each hop of a trace left behind, and which hops are its recovery.

The step-through of the journey page shows, after each hop, the state of
the four things the seed's handshake moves: the volume's status, the
attachment's, where connection_info is, and the BDM. Each comes from the
trace alone, the hop's step (:func:`ministack_course.course.step_of`) and
its result (a REST call's status, a hop's error), by the rules Cinder
and Nova follow (minicinder's ``states``, minicompute's block device
flow):

* attachment_create answered 2xx: the volume ``reserved``, an attachment
  ``reserved`` (no connector);
* attachment_update (PUT with the connector) 2xx: volume and attachment
  ``attaching``, connection_info returned to nova-compute;
* bdm.save (the SQL ``UPDATE block_device_mapping SET connection_info``,
  a hop only when SQL statements are traced): connection_info saved on
  the BDM;
* attachment_complete (os-complete) 2xx: ``in-use``, ``attached``;
* begin_detaching: ``detaching``; roll_detaching: back to ``in-use``;
  attachment_delete: the attachment deleted, the volume ``available``
  (Cinder recomputes it: ``in-use`` while another attachment of a
  multiattach volume remains); the legacy actions likewise.

What the trace does not show is ``unknown`` (``known`` false), never
guessed: a volume's status before Cinder answered a call that sets it,
whether connection_info reached the BDM when no SQL was traced.

A failed hop (an error, or a REST status of 400 or more) changes
nothing. The trace's *failure* is the first failed hop with no failed
hop inside it; the hops after it that undo something (attachment_delete,
bdm.destroy, the driver's detach and disconnect in an attach;
os-roll_detaching in a detach) are its *recovery*, labelled with the
seed's recovery path (:data:`ministack_course.course.RECOVERY_PATHS`).
"""

from ministack.trace import phases
from ministack_course import course

UNKNOWN = "unknown"
#: The state's fields, in the order the page shows them.
FIELDS = ("volume", "attachment", "connection_info", "bdm")
NO_SQL = ("not traced: SQL statements are hops only with "
          "OSPROFILER_TRACE_SQLALCHEMY=True")

#: Steps that undo something, by journey, and their recovery label.
UNDO = {
    "attach": {"attachment_delete": "attachment_delete",
               "bdm.destroy": "bdm.destroy",
               "virDomainDetachDeviceFlags": "driver detach",
               "disconnect_volume": "disconnect",
               "secret undefined": "secret removed",
               "terminate_connection": "terminate_connection",
               "unreserve_volume": "unreserve",
               "detach (legacy)": "os-detach"},
    "detach": {"roll_detaching": "os-roll_detaching"},
}
#: The undo steps each recovery path has (listed even when not traced).
EXPECTED = {"driver-attach": ("attachment_delete", "bdm.destroy"),
            "complete-fails": ("driver detach", "attachment_delete",
                               "bdm.destroy"),
            "rpc-timeout": ("bdm.destroy",),
            "guest-refuses": ("os-roll_detaching",),
            "host-attach": ("attachment_delete", "bdm.destroy"),
            "api-attach": ("bdm.destroy",)}
_DRIVER_STEPS = ("virDomainAttachDeviceFlags", "connect_volume", "secret",
                 "guest sees the disk")


def result(hop):
    """``"ok"``, ``"failed"`` or None (unfinished: no status, no stop).

    A read answered 4xx is not a failure of the journey: the client's
    own lookups are in the trace too (``openstack server add volume
    demo`` first GETs ``/servers/demo``, a 404, then lists by name).
    """
    status = hop.get("status")
    if status is None and hop.get("server"):
        status = hop["server"].get("status")
    if hop.get("error"):
        return "failed"
    if isinstance(status, int) and status >= 400:
        read = hop.get("kind") == "REST" and \
            hop.get("name", "").split(" ", 1)[0] in ("GET", "HEAD")
        return "ok" if read and status < 500 else "failed"
    if hop.get("kind") == "REST":
        return "ok" if isinstance(status, int) else None
    return "ok" if hop.get("duration_ms") is not None else None


def _field(value, why, hop=None, known=True):
    return {"value": value, "known": known, "why": why,
            "hop_id": hop["id"] if hop else None}


def _initial(journey):
    if journey == "detach":
        why = "not shown by the trace yet"
        return {name: _field(UNKNOWN, why, known=False) for name in FIELDS}
    if journey == "boot":
        return {"volume": _field(UNKNOWN, "Cinder has not answered a call "
                                 "that sets it yet", known=False),
                "attachment": _field("not created yet", "nova-api creates "
                                     "it with attachment_create before the "
                                     "build is cast"),
                "connection_info": _field("none yet", "the host's "
                                          "attachment_update returns it"),
                "bdm": _field("not created yet", "nova-api writes it (the "
                              "root at /dev/vda) before the cast")}
    return {"volume": _field(UNKNOWN, "Cinder has not answered a call "
                             "that sets it yet", known=False),
            "attachment": _field("not created yet", "this attach creates "
                                 "it with attachment_create"),
            "connection_info": _field("none yet", "attachment_update "
                                      "returns it"),
            "bdm": _field("not created yet", "reserve_block_device_name "
                          "creates it")}


def _did(hop):
    return "%s %s (+%.1f ms)%s" % (
        hop["kind"], hop["name"], hop.get("start_ms") or 0.0,
        " answered %s" % hop["status"] if hop.get("status") is not None
        else "")


def _changes(step, hop, journey, state, has_sql):
    """The fields ``hop`` (a successful ``step``) sets: {field: field}."""
    did = _did(hop)
    if step == "attachment_create":
        return {"volume": _field("reserved", did),
                "attachment": _field("reserved (no connector)", did)}
    if step == "attachment_update":
        out = {"volume": _field("attaching", did),
               "attachment": _field("attaching (connector set)", did),
               "connection_info": _field(
                   "returned by attachment_update", did)}
        if state["bdm"]["value"].startswith("created"):
            out["bdm"] = (_field("created (connection_info not saved "
                                 "yet)", did) if has_sql else
                          _field("created (connection_info saved: "
                                 "unknown)", NO_SQL, hop, known=False))
        return out
    if step == "attachment_complete":
        return {"volume": _field("in-use", did),
                "attachment": _field("attached", did)}
    if step == "attachment_delete":
        out = {"volume": _field("available", did + "; Cinder recomputes "
                                "the status from the attachments left "
                                "(in-use while another server holds a "
                                "multiattach volume)"),
               "attachment": _field("deleted", did)}
        if journey == "detach" and not has_sql:
            out["bdm"] = _field(UNKNOWN, "nova destroys the BDM last, after "
                                "attachment_delete; " + NO_SQL, hop,
                                known=False)
        return out
    if step == "begin_detaching":
        out = {"volume": _field("detaching", did)}
        if not state["attachment"]["known"]:
            out["attachment"] = _field("attached", did + ": Cinder begins "
                                       "detaching only an attached volume")
        return out
    if step == "roll_detaching":
        out = {"volume": _field("in-use", did)}
        if state["bdm"]["value"] != "destroyed":
            out["bdm"] = _field("kept", did + ": driver_detach re-raised "
                                "before the BDM's destroy, a retry is safe")
        return out
    if step in ("reserve_block_device_name (host)", "bdm.create"):
        return {"bdm": _field("created (no connection_info)", did)}
    if step == "bdm.save":
        return {"bdm": _field("created (connection_info saved)", did),
                "connection_info": _field("saved on the BDM", did)}
    if step == "bdm.destroy":
        return {"bdm": _field("destroyed", did),
                "connection_info": _field("gone with the BDM", did)}
    if step == "detach request" and not state["bdm"]["known"]:
        return {"bdm": _field("exists (nova-api found it)", did)}
    if step == "virDomainDetachDeviceFlags" and journey == "detach" and \
            not state["connection_info"]["known"]:
        return {"connection_info": _field(
            "read from the BDM (driver_detach unplugs with it)", did)}
    legacy = {"reserve_volume": {"volume": "attaching"},
              "initialize_connection": {
                  "connection_info": "returned by initialize_connection"},
              "attach (legacy)": {"volume": "in-use"},
              "detach (legacy)": {"volume": "available"},
              "unreserve_volume": {"volume": "available"}}
    return {name: _field(value, did)
            for name, value in legacy.get(step, {}).items()}


def _ancestors(hop, by_id):
    seen, parent = [], by_id.get(hop.get("parent_id"))
    while parent is not None and parent["id"] not in seen:
        seen.append(parent["id"])
        parent = by_id.get(parent.get("parent_id"))
    return seen


def _path(origin, journey, hops, by_id):
    """The seed's recovery path of a failure at ``origin``."""
    step = course.step_of(origin)
    if journey == "detach":
        refused = any(course.step_of(h) == "roll_detaching" or
                      "DeviceDetachFailed" in (h.get("error") or "")
                      for h in hops)
        return "guest-refuses" if refused else None
    if step in ("reserve_block_device_name",
                "reserve_block_device_name (host)"):
        return "rpc-timeout"
    if step == "attachment_complete":
        return "complete-fails"
    on_host = [a for a in [origin["id"]] + _ancestors(origin, by_id)
               if course.step_of(by_id[a]) == "attach_volume (host)"]
    if not on_host:
        return "api-attach"
    if step in _DRIVER_STEPS or origin.get("kind") == "LIBRARY" and \
            origin.get("actor") in ("libvirt", "os-brick", "guest"):
        return "driver-attach"
    if step != "attach_volume (host)":
        return "host-attach"
    # The handler itself failed (what raised had no span of its own):
    # how far it got says which step did.
    ran = {course.step_of(hop) for hop in hops
           if origin["id"] in _ancestors(hop, by_id)}
    if ran & {"attachment_complete", "bdm.save"} or \
            "complete" in (origin.get("error") or ""):
        return "complete-fails"
    if ran & set(_DRIVER_STEPS):
        return "driver-attach"
    return "host-attach"


def failure(hops, journey):
    """The trace's failure and recovery (None: nothing failed).

    :param hops: the drawn hops (one per REST call), in start order.
    :returns: ``{"hop_id", "step", "path", "title", "says",
        "steps": [{"step", "hop_id", "note"}]}``: ``path`` the seed's
        recovery path (a key of course.RECOVERY_PATHS, or None), the
        steps the recovery hops in order, then each undo step the path
        has that the trace does not show (``hop_id`` None); and
        ``labels``, ``{hop id: the undo step it is part of}`` (a tgt
        command under attachment_delete is part of it).
    """
    by_id = {hop["id"]: hop for hop in hops}
    failed = [hop for hop in hops if result(hop) == "failed"]
    if not failed:
        return None
    inside = {a for hop in failed for a in _ancestors(hop, by_id)}
    origin = [hop for hop in failed if hop["id"] not in inside][0]
    kind = "detach" if journey == "detach" else "attach"
    path = _path(origin, journey, hops, by_id)
    before = set(_ancestors(origin, by_id)) | {origin["id"]}
    steps, labels, undoing = [], {}, set()
    for hop in hops:
        if hop["id"] in before or hop["start_ms"] < origin["start_ms"]:
            continue
        label = UNDO[kind].get(course.step_of(hop))
        parents = [labels[a] for a in _ancestors(hop, by_id) if a in labels]
        if label:
            labels[hop["id"]] = label
            undoing.add(hop.get("parent_id"))
            steps.append({"step": label, "hop_id": hop["id"], "note": None})
        elif parents:
            labels[hop["id"]] = parents[0]     # a command under the undo
        elif hop.get("parent_id") in undoing:
            # What the undoing handler does between its undo steps (the
            # guest releasing the disk of the driver's detach).
            labels[hop["id"]] = steps[-1]["step"]
    has_sql = any(hop["kind"] == "DB" for hop in hops)
    for label in EXPECTED.get(path, ()):
        if label not in {step["step"] for step in steps}:
            steps.append({"step": label, "hop_id": None,
                          "note": NO_SQL if label == "bdm.destroy" and
                          not has_sql else "not in this trace"})
    title, text = course.RECOVERY_PATHS.get(path, (None, None))
    return {"hop_id": origin["id"], "step": course.step_of(origin),
            "path": path, "title": title, "says": text, "steps": steps,
            "labels": labels}


def walk(hops, journey):
    """Each hop's state after it: ``[(state, changed)]`` in the order of
    ``hops`` (the drawn hops, in start order): ``state`` maps each of
    FIELDS to ``{"value", "known", "why", "hop_id"}``, ``changed`` the
    fields the hop set."""
    has_sql = any(hop["kind"] == "DB" for hop in hops)
    lost = failure(hops, journey)
    destroyed = lost and any(step["step"] == "bdm.destroy" and
                             step["hop_id"] for step in lost["steps"])
    state = _initial(journey)
    out = []
    for hop in hops:
        changes = {}
        step = course.step_of(hop)
        if step == "attach request" and hop is not hops[0]:
            state = _initial(journey)   # another attach of one session
        if result(hop) == "ok":
            changes = _changes(step, hop, journey, state, has_sql)
        if lost and hop["id"] == lost["hop_id"] and journey != "detach" \
                and not destroyed and \
                state["bdm"]["value"].startswith("created"):
            changes["bdm"] = _field(UNKNOWN, "the manager destroys the BDM "
                                    "of a failed attach; " + NO_SQL, hop,
                                    known=False)
        for name, field in changes.items():
            if field["hop_id"] is None:
                field["hop_id"] = hop["id"]
            state = dict(state, **{name: field})
        out.append(({name: dict(state[name]) for name in FIELDS},
                    [name for name in FIELDS if name in changes]))
    return out


def _drawn(hops):
    """The drawn hops (one per REST call); a hop under a REST call's
    server side (cinder's commands) counts as under its client's hop."""
    client = {hop["id"]: hop["client_id"] for hop in hops
              if hop.get("client_id")}
    return [dict(hop, parent_id=client.get(hop.get("parent_id"),
                                           hop.get("parent_id")))
            for hop in hops if not hop.get("client_id")]


def _relabel_recovery(trace, labels):
    """The hops of ``labels`` (a REST call's server side with its
    client) in the phase ``recovery``, added to the trace's phases."""
    if trace.get("journey") == "detach" or not labels:
        return      # a refused detach's roll_detaching is its unplug's
    for hop in trace["hops"]:
        if hop["id"] in labels or hop.get("client_id") in labels:
            hop["phase"] = phases.RECOVERY
    if phases.RECOVERY not in trace["phases"]:
        trace["phases"] = list(trace["phases"]) + [phases.RECOVERY]


def recovery_phase(trace):
    """A failed attach's undo steps as its phase ``recovery`` (hops.load's
    trace, for ``ministack-trace show``; the page's :func:`annotate` does
    the same)."""
    lost = failure(_drawn(trace["hops"]), trace.get("journey"))
    _relabel_recovery(trace, lost["labels"] if lost else {})
    return trace


def annotate(trace):
    """Add the step-through's fields to ``trace`` (web.view's, hops
    checked): each hop's ``course``, ``state`` and ``changed``, and the
    trace's ``failure`` (hops.py documents them). A REST call's server
    side has its client's."""
    journey = trace.get("journey")
    hops = trace["hops"]
    drawn = _drawn(hops)
    lost = failure(drawn, journey)
    labels = lost.pop("labels") if lost else {}
    done = {}
    for hop, (after, changed) in zip(drawn, walk(drawn, journey),
                                     strict=True):
        step = course.step_of(hop)
        done[hop["id"]] = {
            "course": {"step": step,
                       "says": course.says(step, hop["kind"], journey),
                       "failure": bool(lost and hop["id"] == lost["hop_id"]),
                       "recovery": labels.get(hop["id"])},
            "state": after, "changed": changed}
    for hop in hops:
        hop.update(done.get(hop["id"]) or done.get(hop.get("client_id"))
                   or {"course": None, "state": None, "changed": []})
    trace["failure"] = lost
    _relabel_recovery(trace, labels)
    return trace
