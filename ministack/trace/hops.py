"""A stored osprofiler trace, read back as the hops of an attach or a detach.

This module is the data contract between the trace store and whatever
draws a trace (``ministack-trace show``, the web page of
:mod:`ministack_course.web`, ``tools/journey.py``).

Contract
========

``load(connection_string, ident) -> dict``
    ``connection_string`` is the daemons' ``[profiler] connection_string``
    (an SQLAlchemy URL: ``sqlite:////var/lib/ministack/osprofiler.sqlite``,
    ``mysql+pymysql://user:pass@host/osprofiler``). ``ident`` is an
    osprofiler trace id (a UUID, what ``openstack --os-profile`` prints)
    or a request id (``req-...``: the trace whose spans carry that local or
    global request id; the newest one when several do). Raises
    :class:`TraceNotFound` when nothing matches. Returns::

        {"trace_id": str,              # osprofiler base id
         "journey": str | None,        # "attach", "detach" (None: neither,
                                       # labelled as an attach)
         "phases": [str],              # that journey's phases, in order
                                       # (ministack.trace.phases)
         "request_ids": [str],         # every request id, first seen first
         "started_at": str,            # ISO 8601, UTC, of the first span
         "duration_ms": float,         # first start to last stop
         "hops": [hop, ...]}           # sorted by start_ms

    and each hop is::

        {"id": str,                    # osprofiler trace point id
         "parent_id": str | None,      # the hop it happened in (None: a root)
         "service": str,               # nova-api, nova-compute, cinder-api,
                                       # cinder-volume
         "host": str | None,           # the host of the daemon that did
                                       # it: its [DEFAULT] host (nova-
                                       # compute: the compute host, the
                                       # RPC server the API casts to, e.g.
                                       # compute2); cinder-volume's
                                       # <host>@<backend> (vm@lvmdriver-1);
                                       # None: not recorded
         "actor": str,                 # the lane it happens in: user,
                                       # nova-api, rabbitmq, nova-compute,
                                       # cinder, os-brick, libvirt, guest
         "from_actor": str,            # the lane the arrow comes from (the
                                       # parent's actor; "user" for a root)
         "kind": str,                  # REST, CALL, CAST, LIBRARY, COMMAND, DB
         "name": str,                  # reserve_block_device_name,
                                       # "POST /v3/{project}/attachments",
                                       # "POST /v3/{project}/volumes/{id}/
                                       #  action (os-begin_detaching)",
                                       # "connect_volume (os-brick iSCSI)",
                                       # virDomainAttachDeviceFlags, tgtadm...
         "start_ms": float,            # offset from the trace's first span
         "duration_ms": float | None,  # None: the span never stopped
         "phase": str | None,          # one of the trace's "phases"
                                       # (rules in ministack.trace.phases)
         "status": int | None,         # HTTP status of a REST hop
         "request_id": str | None,     # the request id the hop ran under
         "error": str | None,          # "ExceptionClass: message" if it failed
         "details": dict,              # arguments, secrets masked; an
                                       # action request's REST hops (both
                                       # sides) have "action"
         "server": dict | None,        # a REST call's client hop: the
                                       # server's side of the same request
                                       # (below); None on every other hop
         "client_id": str | None}      # the server's side of a REST call:
                                       # the id of its client hop (one
                                       # arrow: draw that one, skip this)

    A REST call nova's Cinder client makes is two spans, the client's
    (``service`` nova-api or nova-compute, ``details["side"] ==
    "client"``) and cinder-api's entry, its child. Both stay hops (the
    server's children, tgt commands and SQL, keep their parent); the
    client hop's ``server`` sums up the other side (its first entry: a
    re-try's second entry is a hop of its own, without ``client_id``)::

        {"id": str, "service": str, "host": str | None,
         "start_ms": float, "duration_ms": float | None,
         "status": int | None, "request_id": str | None,
         "error": str | None}

The journey page's ``/trace/<id>.json`` (:func:`ministack_course.web.view`)
is this dict with every hop's ``lane``/``from_lane`` (lanes.py) and, for
the step-through (:mod:`ministack_course.state`), additive fields: each
hop's ``course`` ({"step": the seed's name of the step or None,
"says": what the seed says of it, "failure": bool, the trace's failure
hop, "recovery": the undo step it is part of, e.g. "attachment_delete",
"bdm.destroy", "os-roll_detaching", or None}), ``state`` (after the
hop: {"volume" | "attachment" | "connection_info" | "bdm": {"value",
"known", "why", "hop_id"}}, value "unknown" and known false when the
trace does not show it) and ``changed`` (the fields it set); and the
trace's ``failure``: None, or {"hop_id", "step", "path" (a key of
course.RECOVERY_PATHS or None), "title", "says", "steps": [{"step",
"hop_id" (None: not in the trace), "note"}]}. A REST call's server side
has its client's.

``format_table(trace) -> str``
    The hops as an aligned text table (start, duration, server's
    duration, phase, service, host, kind, name, status), for
    ``ministack-trace show``: one row per REST call (the client's, with
    its server's time in ``server ms``; a server hop without a client
    hop has a row of its own); :mod:`ministack.trace.table`.

Where the hops come from
========================

Every span is an osprofiler start/stop pair in osprofiler's ``data``
table. The span's osprofiler name (without ``-start``/``-stop``) says
what made it:

* ``wsgi`` - an API's WSGI entry (:mod:`ministack.trace.middleware`,
  osprofiler's WsgiMiddleware): kind REST, name ``METHOD /path`` with
  UUIDs and the project replaced by ``{id}``/``{project}``
  (:func:`naming.rest_name`), status and request id from the stop info, the
  action of a ``POST .../action`` from the start info. Actor: nova-api for
  nova-api, cinder for cinder-api.
* ``rpc`` - an RPC CALL or CAST made by a client (miniapi): actor
  rabbitmq, kind and method name from the span info.
* every other span carries ``info["ministack"]`` written by
  :func:`ministack.trace.profiler.span` with ``kind``, ``name``,
  ``actor`` and ``details`` (already masked when recorded; masked again
  here): the compute's RPC endpoint (nova-compute, CALL/CAST), the
  Cinder client's REST calls (cinder, REST), os-brick (LIBRARY: its
  connector properties, and on the kernel path ``connect_volume
  (os-brick iSCSI)`` and ``disconnect_volume (os-brick iSCSI)`` with the
  host block device in their details), the
  QEMU-initiator iSCSI volume driver's ``connect_volume (QEMU libiscsi)``
  and ``disconnect_volume (QEMU libiscsi)`` (LIBRARY, actor nova-compute:
  no os-brick call happens there, QEMU logs in when libvirt attaches the
  network disk), libvirt (LIBRARY), the executor's commands (COMMAND,
  actor of the service) and SQL statements (DB, without parameters).

A REST hop of an action request (Cinder's ``POST .../volumes/{id}/action``
and ``.../attachments/{id}/action``: os-reserve, os-attach,
os-begin_detaching, os-roll_detaching, os-detach, os-unreserve,
os-initialize_connection, os-terminate_connection, os-complete), client
side (nova's Cinder client) and server side (cinder-api's entry) alike,
has ``details["action"]`` and a name that ends with it:
``POST /v3/{project}/volumes/{id}/action (os-begin_detaching)``.

The host: every span records its daemon's ``[DEFAULT] host`` in
``info["ministack"]["host"]`` (minicinder's also cinder-volume's
``volume_host``: :mod:`ministack.trace.profiler`). A hop's ``host`` is
that, else the ``host`` column the notifier stored (the same
``conf.host``, in traces recorded before the spans carried it), else
osprofiler's own ``info["host"]`` (``socket.gethostname()``: the machine,
which is not the compute host when several minicompute daemons share
one). A cinder-volume hop (minicinder's tgt commands and LVM calls) has
``volume_host``.

Phases: :mod:`ministack.trace.phases` says whether the trace is an
attach or a detach and labels each hop with that journey's phases (the
attach's reserve, cast, connect/attach, complete; the detach's
begin_detaching, cast, unplug + disconnect, attachment_delete).

No secret leaves this module: ``details``, ``error`` and names pass
through oslo.utils' ``mask_dict_password``/``mask_password`` (CHAP
``auth_password``, tokens, ``password`` keys).
"""

import datetime

from ministack.trace import naming
from ministack.trace import phases as journey_phases
from ministack.trace import storage
from ministack.trace import table

ACTORS = ("user", "nova-api", "rabbitmq", "nova-compute", "cinder",
          "os-brick", "libvirt", "guest")
KINDS = ("REST", "CALL", "CAST", "LIBRARY", "COMMAND", "DB")
#: The attach's phases (each journey's: ministack.trace.phases.PHASES).
PHASES = journey_phases.ATTACH_PHASES

_TS_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"
# The actor of a REST server span, by the osprofiler service that made it.
_SERVICE_ACTOR = {"nova-api": "nova-api", "nova-compute": "nova-compute",
                  "cinder-api": "cinder", "cinder-volume": "cinder",
                  "glance-api": "nova-api", "neutron-server": "nova-api"}


# No stored span matches the trace id or request id (raised by load()).
TraceNotFound = storage.TraceNotFound
#: The hops as ``ministack-trace show``'s text table.
format_table = table.format_table


def load(connection_string, ident):
    """The trace named by ``ident`` (trace id or request id) as hops."""
    return build(storage.trace_rows(connection_string, ident))


# --- spans to hops -----------------------------------------------------------

def _parse_ts(text):
    return datetime.datetime.strptime(text, _TS_FORMAT)


def spans_from_rows(rows):
    """Pair start/stop notifications by trace point id.

    :returns: list of span dicts: id, parent_id, category, service,
        start (datetime), stop (datetime|None), start_info, stop_info.
    """
    spans = {}
    order = []
    for row in rows:
        name = row.get("name") or ""
        category, _, edge = name.rpartition("-")
        if edge not in ("start", "stop"):
            continue
        info = storage.notification_data(row.get("data")).get("info") or {}
        span = spans.get(row["trace_id"])
        if span is None:
            span = spans[row["trace_id"]] = {
                "id": row["trace_id"], "parent_id": row.get("parent_id"),
                "base_id": row.get("base_id"), "category": category,
                "service": row.get("service"), "host": row.get("host"),
                "start": None, "stop": None,
                "start_info": {}, "stop_info": {}}
            order.append(row["trace_id"])
        span[edge] = _parse_ts(row["timestamp"])
        span[edge + "_info"] = info
    return [spans[key] for key in order if spans[key]["start"] is not None]


def _actor_of_service(service):
    return _SERVICE_ACTOR.get(service or "", "nova-api")


def _hop(span):
    """The hop of one span, before phases, offsets and parents."""
    start_info = span["start_info"]
    stop_info = span["stop_info"]
    own = dict(start_info.get("ministack") or {})
    own.update(stop_info.get("ministack") or {})
    service = own.get("service") or span["service"] or "unknown"
    category = span["category"]
    details = {}
    status = own.get("status")
    request_id = own.get("request_id")
    if category == "wsgi":
        request = start_info.get("request") or {}
        kind = "REST"
        name = naming.rest_name(request.get("method", "?"),
                                request.get("path"))
        actor = _actor_of_service(service)
        details = {"method": request.get("method"),
                   "path": request.get("path"),
                   "query": request.get("query") or ""}
        if own.get("global_request_id"):
            details["global_request_id"] = own["global_request_id"]
        if own.get("action"):
            details["action"] = own["action"]
    elif category == "db":
        kind = "DB"
        statement = (own.get("statement") or
                     (start_info.get("db") or {}).get("statement") or "")
        name = own.get("name") or " ".join(statement.split()[:4])
        actor = own.get("actor") or _actor_of_service(service)
        details = {"statement": statement}
    else:
        kind = own.get("kind") or category.upper()
        name = own.get("name") or category
        actor = own.get("actor") or _actor_of_service(service)
        details = own.get("details") or {}
    if kind == "REST" and isinstance(details, dict) and \
            details.get("action"):
        name = "%s (%s)" % (name, details["action"])
    if kind not in KINDS:
        kind = "LIBRARY"
    host = own.get("host") or span["host"] or start_info.get("host")
    if service == "cinder-api" and (kind in ("COMMAND", "LIBRARY") or (
            kind == "REST" and isinstance(details, dict) and
            details.get("side") == "client")):
        # minicinder runs both in one process; cinder-volume is also
        # what calls nova (a volume-extended event)
        service = "cinder-volume"
    if service == "cinder-volume":
        host = own.get("volume_host") or host
    if actor not in ACTORS:
        actor = _actor_of_service(service)
    error = None
    if stop_info.get("etype") or own.get("error"):
        error = own.get("error") or "%s: %s" % (
            stop_info.get("etype"), stop_info.get("message"))
    duration = None
    if span["stop"] is not None:
        duration = (span["stop"] - span["start"]).total_seconds() * 1000.0
    return {
        "id": span["id"],
        "parent_id": span["parent_id"],
        "service": service,
        "host": naming.mask(str(host)) if host else None,
        "actor": actor,
        "from_actor": "user",
        "kind": kind,
        "name": naming.mask(str(name)),
        "start_ms": 0.0,
        "duration_ms": duration,
        "phase": None,
        "status": int(status) if isinstance(status, (int, str)) and
        str(status).isdigit() else None,
        "request_id": request_id,
        "error": naming.mask(error) if error else None,
        "details": naming.mask(details) if isinstance(details, dict) else {},
        "server": None,
        "client_id": None,
        "_span": span,
    }


def _pair_rest(hop, parent):
    """Join cinder-api's entry span (``hop``) to nova's client call
    (``parent``) it is the other end of: one REST hop, two timings."""
    if hop["kind"] != "REST" or hop["_span"]["category"] != "wsgi" or \
            parent is None or parent["kind"] != "REST" or \
            parent["_span"]["category"] == "wsgi" or \
            parent["server"] is not None:
        return      # not an entry under a client's call, or a re-try
    hop["client_id"] = parent["id"]
    parent["server"] = {key: hop[key] for key in (
        "id", "service", "host", "start_ms", "duration_ms", "status",
        "request_id", "error")}


def build(rows):
    """The contract's trace dict from the stored notifications ``rows``."""
    spans = spans_from_rows(rows)
    if not spans:
        raise TraceNotFound("the trace has no spans")
    t0 = min(span["start"] for span in spans)
    t_end = max((span["stop"] or span["start"]) for span in spans)
    hops = [_hop(span) for span in spans]
    by_id = {hop["id"]: hop for hop in hops}
    for hop in hops:
        hop["start_ms"] = round(
            (hop["_span"]["start"] - t0).total_seconds() * 1000.0, 3)
        if hop["duration_ms"] is not None:
            hop["duration_ms"] = round(hop["duration_ms"], 3)
        if hop["parent_id"] not in by_id:
            hop["parent_id"] = None
    hops.sort(key=lambda hop: (hop["start_ms"], hop["_span"]["start"]))
    journey = journey_phases.journey_of(hops)
    # Parents start before their children: one pass in start order sees
    # every parent's phase and request id before its children.
    for hop in hops:
        parent = by_id.get(hop["parent_id"])
        if parent is not None:
            hop["from_actor"] = parent["actor"]
            if hop["details"].get("side") == "server" and \
                    parent["kind"] in ("CALL", "CAST"):
                # The compute's handler is what the message was.
                hop["kind"] = parent["kind"]
            if hop["from_actor"] == hop["actor"] and hop["kind"] == "REST":
                hop["from_actor"] = parent["from_actor"]
        phase = journey_phases.own_phase(journey, hop)
        if phase is None and parent is not None:
            phase = parent["phase"]
        hop["phase"] = phase
        if hop["request_id"] is None and parent is not None:
            hop["request_id"] = parent["request_id"]
        _pair_rest(hop, parent)
    request_ids = []
    for hop in hops:
        for rid in (hop["request_id"],
                    hop["details"].get("global_request_id")):
            if rid and rid not in request_ids:
                request_ids.append(rid)
    for hop in hops:
        del hop["_span"]
    return {
        "trace_id": spans[0]["base_id"],
        "journey": journey,
        "phases": list(journey_phases.PHASES[journey]),
        "request_ids": request_ids,
        "started_at": t0.replace(
            tzinfo=datetime.UTC).isoformat(),
        "duration_ms": round((t_end - t0).total_seconds() * 1000.0, 3),
        "hops": hops,
    }
