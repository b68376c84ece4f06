"""Check yourself, from the learner's own run: the seed's questions about
one trace, answered from its data.

``GET /trace/<id>/quiz`` (:mod:`ministack_course.web`) asks what the
seed's "Check yourself" asks, of *this* trace (:func:`questions`, over
the page's view of it: hops with their ``course`` and ``state``,
:mod:`ministack_course.state`):

* which call returned the connection_info used to wire the volume into
  the guest (a detach: where its connection_info came from);
* why bdm.save() ran before attachment_complete, with this run's times;
* what put the volume back to ``available``: the detach's
  attachment_delete, a recovery's, or nothing (os-roll_detaching put it
  back to ``in-use``, or the attach left it in use);
* which of its RPC hops were a CAST and which a CALL;
* the matching exercise: each call of the run to the job it does.

A question is data: ``{"id", "kind": "choice", "prompt", "options":
[{"value", "label"}], "answer", "right", "wrong": {value: text}}`` or
``{"id", "kind": "match", "prompt", "choices": [{"value", "label"}],
"items": [{"id", "label", "answer", "right", "wrong": {value: text}}]}``;
the page checks the answers in the browser (``static/quiz.js``), every
text reaching it through the template's escaping or ``textContent``.
"""

#: The seed's job of each call, for the matching exercise.
JOBS = {
    "reserve_block_device_name": "Has the compute host pick a free device "
                                 "name and create the BDM",
    "attachment_create": "Reserves the volume, with no connector, and "
                         "returns the attachment_id",
    "attach_volume": "Hands the attach to the instance's host without "
                     "waiting for it",
    "get_connector_properties": "Collects this host's initiator details "
                                "for Cinder",
    "attachment_update": "Sends the host connector; Cinder exports the "
                         "volume and returns connection_info",
    "connect_volume": "Connects the volume on the compute host",
    "virDomainAttachDeviceFlags": "Hot-plugs the disk into the running "
                                  "guest",
    "bdm.save": "Writes connection_info to the BDM before the volume is "
                "in-use",
    "attachment_complete": "Marks the volume in-use once the disk is "
                           "attached and connection_info is saved",
    "begin_detaching": "Moves the volume from in-use to detaching",
    "detach_volume": "Hands the detach to the instance's host without "
                     "waiting for it",
    "virDomainDetachDeviceFlags": "Unplugs the disk from the guest",
    "disconnect_volume": "Tears down the host side of the connection",
    "attachment_delete": "Deletes the Cinder attachment, freeing the "
                         "volume",
    "roll_detaching": "Puts the volume back to in-use when the guest will "
                      "not let go of the disk",
    "bdm.destroy": "Removes the BDM",
}
MAX_MATCH = 8
_PRIORITY = ("attachment_create", "attachment_update", "attachment_complete",
             "attachment_delete", "begin_detaching", "roll_detaching",
             "reserve_block_device_name", "attach_volume", "detach_volume",
             "bdm.save", "bdm.destroy", "virDomainAttachDeviceFlags",
             "virDomainDetachDeviceFlags", "get_connector_properties",
             "connect_volume", "disconnect_volume")
_WHY_SAVE = (
    ("reply", "attachment_complete returns connection_info, which must "
              "overwrite the saved one"),
    ("detach", "Once the volume is in-use a detach may start at any time, "
               "and the detach (like the rollback of a failed "
               "attachment_complete) needs connection_info"),
    ("lock", "Saving first lets nova-compute release the per-instance "
             "lock sooner"),
    ("cinder", "Cinder refuses os-complete until Nova's BDM has changed"),
)


def _drawn(trace):
    return [hop for hop in trace["hops"] if not hop.get("client_id")]


def _step(hop):
    return (hop.get("course") or {}).get("step")


def _first(hops, *steps, ok=False):
    for hop in hops:
        if _step(hop) in steps and (
                not ok or not hop.get("error") and
                (hop.get("status") is None or hop["status"] < 400)):
            return hop
    return None


def _at(hop):
    return "+%.1f ms" % (hop.get("start_ms") or 0.0)


def _took(hop):
    if hop.get("duration_ms") is None:
        return "a time the trace did not record"
    return "%.1f ms" % hop["duration_ms"]


def _call(hop):
    """A hop as the learner saw it on the page: its name and time."""
    return "%s %s (%s)" % (hop["kind"], hop["name"], _at(hop))


def _connection_info(hops, journey):
    wired = _first(hops, "virDomainAttachDeviceFlags") or \
        _first(hops, "connect_volume")
    if journey == "detach":
        unplug = _first(hops, "virDomainDetachDeviceFlags")
        options = [("bdm", "The BDM, where the attach saved it (bdm.save)")]
        options += [(hop["id"], _call(hop)) for hop in hops
                    if hop["actor"] == "cinder" and hop["kind"] == "REST"]
        right = ("Right: no call of this detach returns connection_info "
                 "(there is no attachment_update in it): driver_detach read "
                 "the BDM's, saved at attach time before "
                 "attachment_complete")
        if unplug:
            right += ", and unplugged with it at %s" % _at(unplug)
        wrong = {value: "No: %s returns no connection_info; driver_detach "
                 "reads it from the BDM." % label for value, label in
                 options[1:]}
        return _choice("q-connection-info",
                       "This detach unplugged the disk with its "
                       "connection_info. Where did that come from?",
                       options, "bdm", right + ".", wrong)
    steps = ("attachment_create", "attachment_update", "attachment_complete",
             "initialize_connection", "reserve_block_device_name",
             "get_connector_properties", "volume get")
    options, seen = [], set()
    for hop in hops:
        if _step(hop) in steps and _step(hop) not in seen:
            seen.add(_step(hop))
            options.append((hop["id"], "%s: %s" % (_step(hop), _call(hop))))
    put = _first(hops, "attachment_update", "initialize_connection", ok=True)
    if put is None:
        options.append(("none", "None: this attach never got it"))
        right = ("Right: no call returned it; the attach stopped before "
                 "attachment_update answered.")
    else:
        right = ("Right: %s answered %s with connection_info: the only "
                 "call of the handshake that returns it." %
                 (_call(put), put["status"]))
        if wired and wired.get("error"):
            right += (" %s tried to wire the disk with it and failed; the "
                      "recovery deleted the attachment." % _call(wired))
        elif wired:
            right += " %s then used it." % _call(wired)
    answer = put["id"] if put else "none"
    wrong = {}
    for hop in hops:
        if hop["id"] in dict(options) and hop["id"] != answer:
            job = JOBS.get(_step(hop)) or {
                "volume get": "Reads the volume from Cinder to validate it",
                "initialize_connection": "Returns the legacy flow's "
                                         "connection_info"}.get(_step(hop))
            wrong[hop["id"]] = "No: %s %s; it returns no connection_info." % (
                _call(hop), "%s%s" % (job[0].lower(), job[1:]) if job
                else "is another request")
    return _choice("q-connection-info",
                   "Which call returned the connection_info used to wire "
                   "the volume into the guest?", options, answer, right,
                   wrong)


def _why_save(hops, journey, failure):
    save = _first(hops, "bdm.save")
    complete = _first(hops, "attachment_complete")
    if journey == "detach":
        unplug = _first(hops, "virDomainDetachDeviceFlags")
        evidence = ("Your detach relied on it: %s unplugged the disk with "
                    "the saved connection_info, asking Cinder for none."
                    % _call(unplug)) if unplug else ""
    elif save and complete:
        evidence = ("In your run bdm.save ran at %s, attachment_complete "
                    "at %s." % (_at(save), _at(complete)))
    elif complete:
        evidence = ("Your run has attachment_complete at %s but no save "
                    "hop: SQL statements were not traced "
                    "(OSPROFILER_TRACE_SQLALCHEMY=True shows bdm.save)."
                    % _at(complete))
    elif failure:
        evidence = ("Your run failed at %s before either; its recovery "
                    "deleted the attachment." % _call(
                        _by_id(hops)[failure["hop_id"]]))
    else:
        evidence = ""
    reply = ("No: attachment_complete returns no connection_info%s." %
             (" (os-complete answered %s, with no body)" % complete["status"]
              if complete and complete.get("status") else ""))
    wrong = {"reply": reply,
             "lock": "No: the lock is held for the whole attach, save "
                     "and attachment_complete included.",
             "cinder": "No: Cinder never sees Nova's BDM; it lives in "
                       "Nova's database."}
    return _choice("q-why-save",
                   "Why was bdm.save() called with connection_info before "
                   "attachment_complete?", _WHY_SAVE, "detach",
                   ("Right: the seed's reason. " + evidence).strip(), wrong)


def _by_id(hops):
    return {hop["id"]: hop for hop in hops}


def _available(hops):
    freed = [hop for hop in hops if "volume" in (hop.get("changed") or [])
             and hop["state"]["volume"]["value"] == "available"]
    roll = _first(hops, "roll_detaching", ok=True)
    last = hops[-1]["state"]["volume"]["value"] if hops else "unknown"
    if freed:
        hop = freed[-1]
        answer = "recovery" if hop["course"]["recovery"] else "detach"
        right = ("Right: %s answered %s and Cinder freed the volume%s." %
                 (_call(hop), hop["status"],
                  ", the recovery after the failure" if answer ==
                  "recovery" else ", the detach's last call to Cinder"))
    else:
        answer = "nothing"
        right = "Right: nothing did; the volume ends %s." % last
        if roll:
            right += (" The guest refused, and %s put it back to in-use, "
                      "not available." % _call(roll))
    options = (("detach", "The detach's attachment_delete"),
               ("recovery", "A recovery's attachment_delete, after a "
                            "failure"),
               ("roll", "os-roll_detaching"),
               ("nothing", "Nothing: the volume is not available at the "
                           "end of this trace"))
    wrong = {"detach": "No: this trace has no successful detach's "
                       "attachment_delete.",
             "recovery": "No: no recovery of this trace deleted the "
                         "attachment.",
             "roll": "No: os-roll_detaching puts a detaching volume back "
                     "to in-use, never to available.",
             "nothing": "No: the volume is available at the end; look "
                        "for the DELETE of the attachment."}
    return _choice("q-available", "What put the volume back to available "
                   "in this trace?", options, answer, right,
                   {key: text for key, text in wrong.items() if key != answer})


def _rpc_kinds(hops):
    items, seen = [], set()
    for hop in hops:
        if hop["actor"] != "rabbitmq" or hop["kind"] not in ("CALL", "CAST") \
                or hop["name"] in seen:
            continue
        seen.add(hop["name"])
        handler = [h for h in hops if h.get("parent_id") == hop["id"]]
        if hop["kind"] == "CALL":
            why = ("%s was a CALL: nova-api waited %s for the compute "
                   "host's reply" % (hop["name"], _took(hop)))
        else:
            why = ("%s was a CAST: %s to hand it to the broker%s" % (
                hop["name"], _took(hop),
                ", then the host's handler ran %s without nova-api "
                "waiting" % _took(handler[0]) if handler else ""))
        items.append({"id": "rpc-%d" % len(items), "label": hop["name"],
                      "answer": hop["kind"], "right": "Right: %s." % why,
                      "wrong": {kind: "No: %s." % why
                                for kind in ("CALL", "CAST")
                                if kind != hop["kind"]}})
    if not items:
        return None
    return {"id": "q-rpc-kinds", "kind": "match",
            "prompt": "Which RPC hops of this trace were a CAST, which a "
                      "CALL?",
            "choices": [{"value": "CALL", "label": "CALL (waits for the "
                                                   "reply)"},
                        {"value": "CAST", "label": "CAST (fire-and-"
                                                   "forget)"}],
            "items": items}


def _matching(hops):
    """The calls of the run (at most MAX_MATCH: the handshake's first,
    then RPC, the BDM, libvirt, os-brick), in the order they ran."""
    first = {}
    for hop in hops:
        if _step(hop) in JOBS:
            first.setdefault(_step(hop), hop)
    chosen = [step for step in _PRIORITY if step in first][:MAX_MATCH]
    found = {step: first[step] for step in first if step in chosen}
    if len(found) < 2:
        return None
    choices = sorted(({"value": step, "label": step} for step in found),
                     key=lambda choice: choice["label"].lower())
    items = [{"id": "job-%d" % n, "label": JOBS[step], "answer": step,
              "right": "Right: %s, in your run %s." % (step, _call(hop)),
              "wrong": {other: "No: %s %s." % (
                  other, JOBS[other][0].lower() + JOBS[other][1:])
                  for other in found if other != step}}
             for n, (step, hop) in enumerate(found.items())]
    return {"id": "q-match-calls", "kind": "match", "drag": True,
            "prompt": "Match the call to what it does: drag each call of "
                      "your run onto its job (or choose it in the list).",
            "choices": choices, "items": items}


def _choice(ident, prompt, options, answer, right, wrong):
    return {"id": ident, "kind": "choice", "prompt": prompt,
            "options": [{"value": value, "label": label}
                        for value, label in options],
            "answer": answer, "right": right, "wrong": wrong}


def questions(trace):
    """The quiz of ``trace`` (web.view's trace, annotated), in order."""
    hops = _drawn(trace)
    journey = trace.get("journey")
    out = [_connection_info(hops, journey),
           _why_save(hops, journey, trace.get("failure")),
           _available(hops),
           _rpc_kinds(hops),
           _matching(hops)]
    return [question for question in out if question]
