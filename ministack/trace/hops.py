"""A stored osprofiler trace, read back as the hops of the attach journey.

This module is the data contract between the trace store and whatever
draws a trace (``ministack-trace show``, the web page of
:mod:`ministack.trace.web`, ``tools/journey.py``).

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
         "request_ids": [str],         # every request id, first seen first
         "started_at": str,            # ISO 8601, UTC, of the first span
         "duration_ms": float,         # first start to last stop
         "hops": [hop, ...]}           # sorted by start_ms

    and each hop is::

        {"id": str,                    # osprofiler trace point id
         "parent_id": str | None,      # the hop it happened in (None: a root)
         "service": str,               # nova-api, nova-compute, cinder-api,
                                       # cinder-volume
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
                                       # "os_brick connect_volume",
                                       # virDomainAttachDeviceFlags, tgtadm...
         "start_ms": float,            # offset from the trace's first span
         "duration_ms": float | None,  # None: the span never stopped
         "phase": str | None,          # reserve, cast, connect/attach,
                                       # complete (rules below)
         "status": int | None,         # HTTP status of a REST hop
         "request_id": str | None,     # the request id the hop ran under
         "error": str | None,          # "ExceptionClass: message" if it failed
         "details": dict}              # arguments, secrets masked; an
                                       # action request's REST hops (both
                                       # sides) have "action"

``format_table(trace) -> str``
    The hops as an aligned text table (start, duration, phase, service,
    kind, name, status), for ``ministack-trace show``.

Where the hops come from
========================

Every span is an osprofiler start/stop pair in osprofiler's ``data``
table. The span's osprofiler name (without ``-start``/``-stop``) says
what made it:

* ``wsgi`` - an API's WSGI entry (:mod:`ministack.trace.middleware`,
  osprofiler's WsgiMiddleware): kind REST, name ``METHOD /path`` with
  UUIDs and the project replaced by ``{id}``/``{project}``
  (:func:`rest_name`), status and request id from the stop info, the
  action of a ``POST .../action`` from the start info. Actor: nova-api for
  nova-api, cinder for cinder-api.
* ``rpc`` - an RPC CALL or CAST made by a client (miniapi): actor
  rabbitmq, kind and method name from the span info.
* every other span carries ``info["ministack"]`` written by
  :func:`ministack.trace.profiler.span` with ``kind``, ``name``,
  ``actor`` and ``details`` (already masked when recorded; masked again
  here): the compute's RPC endpoint (nova-compute, CALL/CAST), the
  Cinder client's REST calls (cinder, REST), os-brick (LIBRARY), the
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

Phase rules (the seed's four phases), first match wins:

1. ``complete``: attachment_complete (``os-complete``), attachment_delete
   (``DELETE .../attachments/{id}``), ``os-roll_detaching``,
   ``os-detach`` and ``os-unreserve``, client side or server side.
2. ``cast``: a CAST made by a client (the hop that puts the message on
   the broker).
3. ``connect/attach``: the compute's handler of a CAST (``attach_volume``,
   ``detach_volume``...).
4. ``reserve``: the compute API's entry for ``os-volume_attachments``
   (POST and DELETE), the CALL ``reserve_block_device_name``,
   attachment_create (``POST .../attachments``) and ``os-begin_detaching``.
5. otherwise the parent's phase (None for a root that matched nothing:
   the CLI's GETs before the attach).

No secret leaves this module: ``details``, ``error`` and names pass
through oslo.utils' ``mask_dict_password``/``mask_password`` (CHAP
``auth_password``, tokens, ``password`` keys).
"""

import datetime
import json
import re

from oslo_utils import strutils

ACTORS = ("user", "nova-api", "rabbitmq", "nova-compute", "cinder",
          "os-brick", "libvirt", "guest")
KINDS = ("REST", "CALL", "CAST", "LIBRARY", "COMMAND", "DB")
PHASES = ("reserve", "cast", "connect/attach", "complete")

_TS_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"
_UUID = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?" \
        r"[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
_UUID_RE = re.compile("^%s$" % _UUID)
_REQ_RE = re.compile(r"req-%s" % _UUID)
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

# The actor of a REST server span, by the osprofiler service that made it.
_SERVICE_ACTOR = {"nova-api": "nova-api", "nova-compute": "nova-compute",
                  "cinder-api": "cinder", "cinder-volume": "cinder",
                  "glance-api": "nova-api", "neutron-server": "nova-api"}

_COMPLETE_ACTIONS = ("os-complete", "os-roll_detaching", "os-detach",
                     "os-unreserve")
_RESERVE_CALLS = ("reserve_block_device_name",)


class TraceNotFound(LookupError):
    """No stored span matches the trace id or request id."""


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
    parts = ["{id}" if _UUID_RE.match(part) else part
             for part in path.split("/")]
    return "%s %s" % (method, "/".join(parts))


# --- reading the store -------------------------------------------------------

def _engine(connection_string):
    from ministack.trace import storage
    return storage.engine(connection_string)


def _rows(connection_string, ident):
    """The stored notifications of the trace named by ``ident``, as
    dicts (name, base_id, trace_id, parent_id, service, host, timestamp,
    data)."""
    import sqlalchemy as sa

    from ministack.trace import storage
    table = storage.data_table()
    engine = _engine(connection_string)
    try:
        with engine.connect() as conn:
            if _UUID_RE.match(ident or ""):
                base_id = ident
            elif _REQ_RE.fullmatch(ident or ""):
                found = conn.execute(
                    sa.select(table.c.base_id)
                    .where(table.c.data.cast(sa.Text).contains(ident))
                    .order_by(table.c.id.desc()).limit(1)).first()
                if found is None:
                    raise TraceNotFound(
                        "no trace carries request id %s" % ident)
                base_id = found[0]
            else:
                raise TraceNotFound(
                    "%r is neither a trace id (UUID) nor a request id "
                    "(req-UUID)" % ident)
            result = conn.execute(
                sa.select(table).where(table.c.base_id == base_id)
                .order_by(table.c.id)).mappings().all()
    finally:
        engine.dispose()
    if not result:
        raise TraceNotFound("no trace %s" % ident)
    return [dict(row) for row in result]


def load(connection_string, ident):
    """The trace named by ``ident`` (trace id or request id) as hops."""
    return build(_rows(connection_string, ident))


# --- spans to hops -----------------------------------------------------------

def _data(row):
    data = row.get("data")
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            data = {}
        if isinstance(data, str):  # osprofiler stores a JSON string
            try:
                data = json.loads(data)
            except ValueError:
                data = {}
    return data if isinstance(data, dict) else {}


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
        info = _data(row).get("info") or {}
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
        name = rest_name(request.get("method", "?"), request.get("path"))
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
    if service == "cinder-api" and kind in ("COMMAND", "LIBRARY"):
        service = "cinder-volume"  # minicinder runs both in one process
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
        "actor": actor,
        "from_actor": "user",
        "kind": kind,
        "name": mask(str(name)),
        "start_ms": 0.0,
        "duration_ms": duration,
        "phase": None,
        "status": int(status) if isinstance(status, (int, str)) and
        str(status).isdigit() else None,
        "request_id": request_id,
        "error": mask(error) if error else None,
        "details": mask(details) if isinstance(details, dict) else {},
        "_span": span,
    }


def _own_phase(hop, parent):
    """Rules 1-4 of the module docstring (None: inherit)."""
    name = hop["name"]
    kind = hop["kind"]
    action = (hop["details"] or {}).get("action")
    if action in _COMPLETE_ACTIONS or any(
            name.endswith(suffix) for suffix in
            ("attachment_complete", "attachment_delete", "roll_detaching")):
        return "complete"
    if kind == "REST":
        method, _, path = name.partition(" ")
        if method == "DELETE" and re.search(r"/attachments/\{id\}$", path):
            return "complete"
        if method == "POST" and re.search(r"/attachments$", path):
            return "reserve"
        if method in ("POST", "DELETE") and \
                "/os-volume_attachments" in path and \
                hop["actor"] == "nova-api":
            return "reserve"
        if action == "os-begin_detaching" or \
                name.endswith("begin_detaching"):
            return "reserve"
    if kind == "CAST":
        if hop["actor"] == "rabbitmq":
            return "cast"
        return "connect/attach"
    if kind == "CALL" and name in _RESERVE_CALLS:
        return "reserve"
    return None


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
        phase = _own_phase(hop, parent)
        if phase is None and parent is not None:
            phase = parent["phase"]
        hop["phase"] = phase
        if hop["request_id"] is None and parent is not None:
            hop["request_id"] = parent["request_id"]
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
        "request_ids": request_ids,
        "started_at": t0.replace(
            tzinfo=datetime.UTC).isoformat(),
        "duration_ms": round((t_end - t0).total_seconds() * 1000.0, 3),
        "hops": hops,
    }


def format_table(trace):
    """The hops as a text table (what ``ministack-trace show`` prints)."""
    header = ("start ms", "dur ms", "phase", "service", "kind", "name",
              "status")
    lines = []
    for hop in trace["hops"]:
        duration = ("%.1f" % hop["duration_ms"]
                    if hop["duration_ms"] is not None else "-")
        status = str(hop["status"]) if hop["status"] is not None else ""
        if hop["error"]:
            status = (status + " " if status else "") + "ERROR " + \
                hop["error"][:60]
        lines.append(("%.1f" % hop["start_ms"], duration,
                      hop["phase"] or "", hop["service"], hop["kind"],
                      hop["name"], status))
    widths = [max(len(str(row[i])) for row in [header] + lines)
              for i in range(len(header) - 1)]
    out = ["trace %s  (%s, %.1f ms, request ids: %s)" % (
        trace["trace_id"], trace["started_at"], trace["duration_ms"],
        ", ".join(trace["request_ids"]) or "-")]
    for row in [header] + lines:
        cells = [str(cell).rjust(widths[i]) if i < 2 else
                 str(cell).ljust(widths[i])
                 for i, cell in enumerate(row[:-1])]
        out.append("  ".join(cells + [row[-1]]).rstrip())
    return "\n".join(out)
