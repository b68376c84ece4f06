"""Send one fuzz request to a real daemon and judge the answer.

A finding is any of:

* a 5xx status;
* Python internals in the response body (a traceback, a source path, an
  exception class name) that the request itself did not contain;
* no answer at all once the service answers other requests again (a
  connection refused while another session restarts a daemon is waited
  out, not reported).

For a 5xx the daemon's log is read for the traceback of that request
(matched by ``x-openstack-request-id`` where the service logs it), so a
finding names the exception and the line that raised it, and findings
with the same cause are counted once.
"""

import dataclasses
import json
import os
import re

import requests

from tests.support import waiting
from tests.tempest_style import clients

TIMEOUT = 60
RECONNECT_WAIT = 90

# Python internals that must never reach a client.
_INTERNALS = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"]*\", line \d+"
    r"|\b(?:KeyError|ValueError|TypeError|AttributeError|IndexError"
    r"|UnicodeEncodeError|UnicodeDecodeError|UnicodeError|OverflowError"
    r"|RecursionError|ZeroDivisionError|AssertionError|NameError"
    r"|UnboundLocalError|RuntimeError|NotImplementedError|StopIteration"
    r"|JSONDecodeError|IntegrityError|OperationalError|ProgrammingError"
    r"|StatementError|DataError|DBAPIError|InterfaceError"
    r"|ProcessExecutionError|MessagingTimeout|RemoteError"
    r"|BadRequestKeyError|InvalidRequestError|DetachedInstanceError)\b"
    r"|\bsqlalchemy\.|\bsqlite3\.|\bpsycopg|\bpymysql\.|\boslo_[a-z]+\."
    r"|\bjsonschema\.|\bwerkzeug\.|set_int_max_str_digits"
    r"|<built-in |object at 0x[0-9a-f]+")

# Where each API's daemon logs (the first of these that exists).
LOG_FILES = {"compute": ["miniapi.log"],
             "identity": ["keystone.log", "miniapi.log"],
             "image": ["miniapi.log"], "network": ["miniapi.log"],
             "volume": ["minicinder.log"]}

_LOG_LINE = re.compile(
    r"^(?P<prefix>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \d+ [A-Z]+ \S+) "
    r"(?P<msg>.*)$")


@dataclasses.dataclass
class Request:
    group: str
    route_id: str
    who: str            # demo, admin, junk (a bad token) or none
    method: str
    url: str
    headers: dict       # name -> str/bytes; None removes a default
    body: bytes = None
    focus: str = ""     # what the request attacks (attack.FOCI_*)

    def describe(self, secrets=()):
        """The request as a reproducer, tokens and passwords masked."""
        headers = {k: v for k, v in self.headers.items() if v is not None}
        text = "%s %s\nheaders: %s\nbody: %s" % (
            self.method, _short(_squeeze(self.url), 1500),
            _short(_squeeze(repr(headers)), 1500),
            _short(_squeeze(repr(self.body)), 1500)
            if self.body is not None else "(none)")
        for secret, name in secrets:
            if secret:
                text = text.replace(secret, name)
        return text

    def size(self):
        return len(self.url) + len(self.body or b"") + sum(
            len(v) for v in self.headers.values() if v)


@dataclasses.dataclass
class Result:
    status: int = None
    text: str = ""
    request_id: str = None
    error: str = None   # no answer
    unsendable: str = None  # the HTTP library refused to send it


@dataclasses.dataclass
class Finding:
    kind: str           # "5xx", "internals" or "no answer"
    cause: str          # what the log or the body says went wrong
    request: Request
    result: Result
    trace: str = ""
    count: int = 1

    @property
    def signature(self):
        return (self.request.route_id, self.kind, self.result.status,
                self.cause)

    def describe(self, secrets=()):
        lines = ["%s on %s (seen %d time(s)): %s" % (
            self.kind, self.request.route_id, self.count, self.cause),
            "  smallest request: " + self.request.describe(secrets).replace(
                "\n", "\n    "),
            "  answer: %s %s" % (self.result.status or self.result.error,
                                 _short(self.result.text, 600))]
        if self.trace:
            lines.append("  server log:\n    " + self.trace.replace(
                "\n", "\n    "))
        return "\n".join(lines)


def _short(text, limit):
    text = text or ""
    return text if len(text) <= limit else "%s...<%d more chars>" % (
        text[:limit], len(text) - limit)


class Prober:
    """Sends requests with one raw client (tests/tempest_style) and keeps
    the findings, one per cause, each with its smallest request."""

    def __init__(self, roots, log_dir=None):
        self.client = clients.RestClient("", "", timeout=TIMEOUT)
        self.roots = roots        # group -> service root URL
        self.logs = LogReader(log_dir or os.environ.get(
            "MINISTACK_LOG_DIR", "/opt/stack/logs"))
        self.findings = {}        # signature -> Finding
        self.cases = {}           # route id -> requests sent
        self.statuses = {}        # group -> {status: count}
        self.unsendable = []      # what requests refused to send
        # MINISTACK_FUZZ_TRACE=FILE: one line per request and answer.
        self.trace = os.environ.get("MINISTACK_FUZZ_TRACE")

    def send(self, request):
        """Send ``request``; a :class:`Result` (``error`` when nothing
        answered)."""
        for attempt in range(2):
            try:
                status, headers, payload = self.client.request(
                    request.method, "", raw=request.body,
                    headers=request.headers, microversion="",
                    url=request.url)
            except requests.Timeout:
                return Result(error="no answer within %ss" % TIMEOUT)
            except (requests.exceptions.InvalidHeader,
                    requests.exceptions.InvalidURL, ValueError) as exc:
                return Result(unsendable=str(exc)[:200])
            except requests.ConnectionError as exc:
                # A daemon restarted by someone else: wait until it
                # answers again, then send once more.
                if attempt == 0 and self._wait_for(request.group):
                    continue
                return Result(error="connection failed: %s" % exc)
            except requests.RequestException as exc:
                return Result(error="broken answer: %s" % exc)
            text = payload if isinstance(payload, str) else json.dumps(
                payload)
            return Result(status=status, text=text or "",
                          request_id=headers.get("x-openstack-request-id"))

    def _wait_for(self, group):
        """Whether the group's service answers again within
        RECONNECT_WAIT seconds (any answer will do)."""
        try:
            waiting.wait_for(
                "%s to answer again" % self.roots[group],
                lambda: requests.get(self.roots[group], timeout=10),
                done=lambda resp: resp is not None,
                timeout=RECONNECT_WAIT, interval=1,
                ignoring=(requests.RequestException,))
        except waiting.WaitTimeout:
            return False
        return True

    def check(self, request, result):
        """Record ``result`` of ``request``; the new or updated Finding,
        or None when the answer is fine."""
        if self.trace:
            with open(self.trace, "a") as f:
                f.write("%s %s %s %s %s %r -> %s %s\n" % (
                    request.route_id, request.focus, request.who,
                    request.method, _short(request.url, 200),
                    _short(repr(request.headers.get(
                        "OpenStack-API-Version")), 60),
                    result.status or result.error or result.unsendable,
                    _short(result.text, 300)))
        if result.unsendable:
            self.unsendable.append(result.unsendable)
            return None
        self.cases[request.route_id] = self.cases.get(request.route_id,
                                                      0) + 1
        counts = self.statuses.setdefault(request.group, {})
        key = result.status or "no answer"
        counts[key] = counts.get(key, 0) + 1
        if result.error:
            return self._add(Finding("no answer", result.error, request,
                                     result))
        if result.status >= 500:
            cause, trace = self.logs.cause(request.group, result.request_id)
            cause = cause or "no traceback in the log; the answer: " + \
                _generic(result.text)
            leaked = self._internals(request, result.text)
            if leaked:
                cause += "; the answer shows %r" % leaked
            return self._add(Finding("5xx", cause, request, result, trace))
        leaked = self._internals(request, result.text)
        if leaked:
            return self._add(Finding("internals", "response body shows %r"
                                     % leaked, request, result))
        return None

    @staticmethod
    def _internals(request, text):
        sent = request.url + repr(request.headers) + (
            request.body or b"").decode("utf-8", "replace")
        for match in _INTERNALS.finditer(text or ""):
            if match.group(0) not in sent:
                return match.group(0)
        return None

    def _add(self, finding):
        if self.trace:   # the whole request, for a reproducer
            with open(self.trace, "a") as f:
                f.write("FINDING %s: %r\n" % (finding.cause, finding.request))
        known = self.findings.get(finding.signature)
        if known is None:
            self.findings[finding.signature] = finding
            return finding
        known.count += 1
        if finding.request.size() < known.request.size():
            known.request, known.result = finding.request, finding.result
        return known

    def findings_for(self, route_id):
        return [f for f in self.findings.values()
                if f.request.route_id == route_id]


class LogReader:
    """Reads what the daemons logged since the last look, for tracebacks.

    The services log with oslo.log: every line of a traceback carries the
    prefix of its ERROR record, the first one the request id.
    """

    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.offsets = {}
        for names in LOG_FILES.values():
            for name in names:
                self.offsets[name] = self._size(name)

    def _path(self, name):
        return os.path.join(self.log_dir, name)

    def _size(self, name):
        try:
            return os.path.getsize(self._path(name))
        except OSError:
            return 0

    def _read_new(self, name):
        start = self.offsets.get(name, 0)
        if self._size(name) < start:   # a new log after a restart
            start = 0
        try:
            with open(self._path(name), "rb") as f:
                f.seek(start)
                data = f.read()
        except OSError:
            return ""
        self.offsets[name] = start + len(data)
        return data.decode("utf-8", "replace")

    def cause(self, group, request_id, wait=5.0):
        """(exception and where it was raised, traceback text) of the
        request's failure, or ("", "") when the log has none."""
        names = [n for n in LOG_FILES[group]
                 if os.path.exists(self._path(n))]
        if not names:
            return "", ""
        name = names[0]
        read = []   # the log's new text, as it grows between polls

        def traceback_of_request():
            read.append(self._read_new(name))
            traces = list(tracebacks("".join(read)))
            mine = [t for t in traces if request_id and request_id in t[0]]
            if mine or (traces and not request_id):
                return (mine or traces)[-1]
            return None
        try:
            header, frames, exc = waiting.wait_for(
                "the traceback of request %s in %s" % (request_id, name),
                traceback_of_request, timeout=wait, interval=0.2)
        except waiting.WaitTimeout:
            return "", ""
        own = [f for f in frames if "site-packages" not in f and
               "/lib/python3" not in f]
        where = own[-1] if own else (frames[-1] if frames else "")
        where = re.sub(r'^\s*File "([^"]*)", ',
                       lambda m: _source(m.group(1)) + " ", where)
        trace = "\n".join([header] + frames[-6:] + [exc])
        return "%s at %s" % (exc[:300], where.strip()), trace


def _generic(text):
    """An error message with its ids and numbers blanked, so the same
    failure on different resources counts once."""
    try:
        body = json.loads(text)
        text = json.dumps(body)
        inner = next(iter(body.values())) if isinstance(body, dict) else {}
        text = inner.get("message", text) if isinstance(inner, dict) \
            else text
    except (ValueError, StopIteration):
        pass
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{32}", "<id>", text)
    return _short(re.sub(r"\d+", "N", text), 300)


def _source(path):
    """A traceback's file, from the package down (``miniapi/app.py``)."""
    match = re.search(r"(?:^|/)((?:miniapi|minicinder|minicompute|"
                      r"ministack)/.*)$", path)
    return match.group(1) if match else os.path.basename(path)


def _squeeze(text):
    """Long runs of one character as ``c<xN>``: a 100000-deep body
    stays readable in a report."""
    return re.sub(r"(.)\1{31,}", lambda m: "%s<x%d>" % (
        m.group(1), len(m.group(0))), text, flags=re.S)


def tracebacks(text):
    """``(first line, frame lines, exception line)`` of each traceback in
    a log: oslo.log's (every line with its record's prefix, the line
    before naming the request) or a bare one printed to stderr."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _LOG_LINE.match(line)
        prefix, msg = (m.group("prefix"), m.group("msg")) if m \
            else (None, line)
        if not msg.startswith("Traceback (most recent call last)"):
            continue
        header = ""
        if prefix and i and lines[i - 1].startswith(prefix):
            header = lines[i - 1]
        frames, exc = [], ""
        for later in lines[i + 1:]:
            if prefix:
                if not later.startswith(prefix + " "):
                    break
                later = later[len(prefix) + 1:]
            if not later.strip():
                continue
            if later.startswith(" "):
                if later.lstrip().startswith('File "'):
                    frames.append(later)
                continue
            exc = later
            break
        yield header, frames, exc
