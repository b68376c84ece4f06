"""The journey page: one stored trace drawn as the seed's diagram.

``GET /trace/<id>`` (an osprofiler trace id or a request id) draws the
hops of :func:`ministack.trace.hops.load` the way the seed teaches the
attach: one lane per actor (user, nova-api, RabbitMQ, nova-compute,
Cinder, os-brick, libvirt/QEMU, guest; the compute's lane titled with
its host, one compute lane per host when the trace reached several:
:mod:`ministack_course.lanes`), one arrow per hop labelled with
its kind (REST, CALL, CAST, LIBRARY, COMMAND, DB) and its time (a REST
call is one arrow, caller to Cinder, with the client's and the server's
time), the phases of the trace's journey as bands (an attach's reserve,
cast, connect/attach, complete; a detach's begin_detaching, cast,
unplug + disconnect, attachment_delete), failed hops in red with their
error; clicking a hop shows its details. The lanes fit the window's
width (down to a lane width under which the diagram scrolls in its box).
``GET /trace/`` lists the recent traces, ``GET /trace/<id>.json`` is the
same data for scripts.

The page also steps through the trace as the seed's animation does
("Next step", the arrow keys, play/pause: ``static/steps.js``): one hop
at a time, the packet on its arrow, its kind, what the seed says of the
step (:mod:`ministack_course.course`) and the volume, attachment,
connection_info and BDM after it (:mod:`ministack_course.state`); a
failed trace's failure, then its recovery, each undo step labelled; a
lane's title shows its role. ``GET /trace/<id>/quiz`` asks the seed's
"Check yourself" of that trace, answered from its data
(:mod:`ministack_course.quiz`; checked in the browser, ``static/quiz.js``).

The ``ministack-course`` daemon serves it (:mod:`ministack_course.server`,
``[trace] listen_port``; devstack: 8780). Why it is built this way:

* Read-only: GET and HEAD only, no form, no state (the quiz is checked
  in the browser: nothing is sent).
* Everything comes from the package (template, script, style sheet): no
  CDN, nothing fetched at run time, and a Content-Security-Policy that
  allows only this origin's script and style.
* A trace is attacker-influenced (volume names, paths, error messages
  end up in span names and details): the template autoescapes, the data
  reaches the script as a JSON data block (``tojson`` escapes ``<``,
  ``>``, ``&`` and quotes), and the script builds the SVG and the details
  with ``textContent``, never with HTML strings.
* No secrets: the hops come masked from ``hops.load``; :func:`masked`
  masks again every value under a key that looks secret (password,
  secret, token, ...) and ``key=value`` text of that kind, so a span that
  slipped through is still not shown.
* Bound to ``[trace] listen`` (default 127.0.0.1), not the API's address:
  traces show every project's ids, as ``osprofiler trace show`` with the
  database's connection string does, so the page is for the lab host's
  operator (an SSH tunnel reaches it from elsewhere).
"""

import re

import flask
from oslo_config import cfg
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc
from werkzeug import exceptions as wz_exceptions

from ministack.trace import phases
from ministack_course import course
from ministack_course import lanes
from ministack_course import listing
from ministack_course import quiz
from ministack_course import state

LOG = logging.getLogger(__name__)

trace_group = cfg.OptGroup("trace", title="The journey page")

trace_opts = [
    cfg.HostAddressOpt("listen", default="127.0.0.1",
                       help="""
IP address the journey page (``/trace/<id>``) listens on. Traces show the
ids of every project's servers and volumes: keep it on the host unless
the network is the operator's.
"""),
    cfg.PortOpt("listen_port", default=0,
                help="""
TCP port of the journey page the ``ministack-course`` daemon serves;
``0`` (the default) disables it; devstack uses 8780.

Related options:

* ``[profiler] connection_string``: where the traces are read from.
"""),
]

#: The seed's lanes, left to right: (actor, title) (ministack_course.lanes).
ACTORS = lanes.ACTORS
#: The seed's four phases of the attach, in order (a trace's own
#: journey's phases come with it: hops.load's "phases").
PHASES = phases.ATTACH_PHASES
KINDS = ("REST", "CALL", "CAST", "LIBRARY", "COMMAND", "DB")

#: A trace id (a UUID) or a request id (``req-<uuid>``).
IDENT_RE = re.compile(r"^(req-)?[0-9a-fA-F]{8}(-?[0-9a-fA-F]{4}){3}"
                      r"-?[0-9a-fA-F]{12}$")

MASK = "***"
_SECRET_KEY = re.compile(
    r"pass(word|phrase)?|secret|token|credential|hmac|auth_key|"
    r"private_key", re.IGNORECASE)
# key=value / "key": "value" inside text (argv, messages, bodies).
_SECRET_TEXT = re.compile(
    r"""((?:password|passphrase|secret|token|hmac_key)["']?\s*[:=]\s*"""
    r"""["']?)[^\s"',;&}]+""", re.IGNORECASE)

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def register_opts(conf):
    conf.register_group(trace_group)
    conf.register_opts(trace_opts, group=trace_group)


def list_opts():
    return [(trace_group, trace_opts)]


def masked(value, key=None):
    """``value`` with every secret-looking key's value and every
    ``password=...`` in text replaced by ``***`` (recursively)."""
    if key is not None and _SECRET_KEY.search(str(key)):
        return MASK
    if isinstance(value, dict):
        return {str(k): masked(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(v) for v in value]
    if isinstance(value, str):
        return _SECRET_TEXT.sub(r"\1" + MASK, value)
    return value


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _text(value):
    """``value`` as text, or None (a hop's host, request id...)."""
    return None if value is None or value == "" else str(value)


def _server(server):
    """A REST hop's server side (hops.py's ``server``), or None."""
    if not isinstance(server, dict):
        return None
    status = server.get("status")
    return {"id": str(server.get("id") or ""),
            "service": str(server.get("service") or ""),
            "host": _text(server.get("host")),
            "start_ms": _number(server.get("start_ms")),
            "duration_ms": (None if server.get("duration_ms") is None
                            else _number(server["duration_ms"])),
            "status": status if isinstance(status, int) else None,
            "request_id": (None if server.get("request_id") is None
                           else str(server["request_id"])),
            "error": (None if server.get("error") is None
                      else str(server["error"]))}


def _hop(hop, actors, known_phases):
    """One hop with every field the page reads, of the type it expects."""
    status = hop.get("status")
    details = hop.get("details")
    parent = actors.get(hop.get("parent_id"))
    return dict(hop, **{
        "id": str(hop.get("id") or ""),
        "parent_id": (None if hop.get("parent_id") is None
                      else str(hop["parent_id"])),
        "service": str(hop.get("service") or ""),
        "host": _text(hop.get("host")),
        "actor": str(hop.get("actor") or ""),
        "from_actor": str(hop.get("from_actor") or parent or "user"),
        "kind": str(hop.get("kind") or ""),
        "name": str(hop.get("name") or ""),
        "start_ms": _number(hop.get("start_ms")),
        # None: the span never stopped (the daemon died mid-hop).
        "duration_ms": (None if hop.get("duration_ms") is None
                        else _number(hop["duration_ms"])),
        "phase": (hop.get("phase") if hop.get("phase") in known_phases
                  else None),
        "status": status if isinstance(status, int) else None,
        "error": None if hop.get("error") is None else str(hop["error"]),
        "details": details if isinstance(details, dict) else {},
        "server": _server(hop.get("server")),
        "client_id": (None if hop.get("client_id") is None
                      else str(hop["client_id"]))})


def _phases(trace):
    """The trace's journey and its phases: hops.load's, or the attach's
    for a trace without them."""
    journey = trace.get("journey")
    if journey not in phases.PHASES:
        journey = None
    names = trace.get("phases")
    if not isinstance(names, list) or not names or \
            not all(isinstance(name, str) for name in names):
        names = list(phases.PHASES[journey])
    return journey, names


def view(trace):
    """The page's data: the trace masked, its lanes and the phases of its
    journey."""
    trace = masked(trace)
    hops = [h for h in trace.get("hops") or [] if isinstance(h, dict)]
    actors = {h.get("id"): h.get("actor") for h in hops}
    trace["journey"], names = _phases(trace)
    trace["phases"] = names
    hops = [_hop(h, actors, names) for h in hops]
    ids = {h["id"] for h in hops}
    for h in hops:
        if h["client_id"] not in ids:
            h["client_id"] = None       # no client hop to draw it: drawn
    lanes_of_trace = lanes.assign(hops)
    for lane in lanes_of_trace:
        lane["role"] = course.role(lane["actor"])
    trace["hops"] = hops
    trace["duration_ms"] = _number(trace.get("duration_ms"))
    state.annotate(trace)   # the step-through's course, state, failure
    return {"trace": trace, "lanes": lanes_of_trace,
            "phases": trace["phases"],      # a failed attach's recovery too
            "journey": trace["journey"], "kinds": list(KINDS),
            # one arrow per REST call: the server's side is its client's
            "drawn": sum(1 for h in hops if not h["client_id"])}


#: The newest traces of a store (ministack_course.listing).
recent_traces = listing.recent_traces


def create_app(load, recent=None, recent_limit=50):
    """The page as a Flask app.

    :param load: ``load(ident) -> trace`` (the shape of
        :func:`ministack.trace.hops.load`); ``LookupError`` (or an empty
        trace) means no such trace.
    :param recent: ``recent(limit) -> [{"trace_id", "started_at",
        "name", ...}]`` for the listing at ``/trace/``; None: no listing.
    """
    app = flask.Flask(__name__, static_folder="static",
                      static_url_path="/trace/static",
                      template_folder="templates")
    app.url_map.strict_slashes = False
    app.url_map.merge_slashes = False
    app.json.sort_keys = False

    def _trace(ident):
        if not IDENT_RE.match(ident):
            flask.abort(400, "not a trace id or a request id")
        try:
            trace = load(ident)
        except LookupError:
            trace = None
        if not trace or not trace.get("hops"):
            flask.abort(404, "no trace %s" % ident)
        return view(trace)

    @app.get("/")
    def root():
        return flask.redirect("/trace/", code=302)

    @app.get("/favicon.ico")
    def favicon():
        return "", 204

    @app.get("/trace/")
    def index():
        traces = masked(list(recent(recent_limit))) if recent else None
        return flask.render_template("index.html", traces=traces)

    @app.get("/trace/<ident>.json")
    def trace_json(ident):
        return flask.jsonify(_trace(ident)["trace"])

    @app.get("/trace/<ident>")
    def trace_page(ident):
        data = _trace(ident)
        return flask.render_template("trace.html", data=data,
                                     trace=data["trace"])

    @app.get("/trace/<ident>/quiz")
    def trace_quiz(ident):
        data = _trace(ident)
        questions = quiz.questions(data["trace"])
        return flask.render_template("quiz.html", trace=data["trace"],
                                     journey=data["journey"],
                                     questions=questions)

    @app.errorhandler(wz_exceptions.HTTPException)
    def http_error(exc):
        page = flask.render_template("error.html", code=exc.code,
                                     title=exc.name,
                                     message=exc.description)
        return page, exc.code

    @app.errorhandler(sa_exc.SQLAlchemyError)
    def store_error(exc):
        LOG.error("The trace store cannot be read: %s",
                  type(exc).__name__)
        return http_error(wz_exceptions.ServiceUnavailable(
            "the trace store cannot be read (see miniapi's log)"))

    @app.after_request
    def headers(response):
        response.headers.update(SECURITY_HEADERS)
        return response

    return app


def _unreadable(reason):
    def fail(*_args):
        raise wz_exceptions.ServiceUnavailable(reason)
    return fail


def app_from_conf(conf):
    """The page reading the traces where the daemons store them
    (``[profiler] connection_string``, an SQL URL).

    A store the page cannot read (``otlp://``, ``jaeger://``...: the spans
    went to a collector) does not stop the daemon: the page answers 503
    saying so, and the collector's own UI shows the traces.
    """
    from ministack.trace import hops
    from ministack.trace import profiler
    from ministack.trace import storage
    profiler.register_opts(conf)
    connection = conf.profiler.connection_string or ""
    if not storage.is_sql_url(connection):
        reason = ("the journey page reads the traces from an SQL "
                  "[profiler] connection_string (sqlite://, "
                  "mysql+pymysql://, postgresql://); this lab sends them "
                  "to %s://" % connection.partition("://")[0])
        LOG.warning("[trace] listen_port: %s", reason)
        return create_app(_unreadable(reason), _unreadable(reason))
    return create_app(
        lambda ident: hops.load(connection, ident),
        lambda limit: recent_traces(connection, limit))
