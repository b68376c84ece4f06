"""``ministack-trace show <trace id | request id> [--json]``.

Prints the hops of one stored trace (:mod:`ministack.trace.hops`) in
order: start offset, duration, the server's duration of a REST call
(one row per call), the phase of the trace's journey (attach or detach;
a failed attach's undo steps in its phase ``recovery``), service, host
(the ``[DEFAULT] host`` of the daemon that did the hop: a nova-compute
hop's compute host, e.g. ``compute2``), kind, name, status; then the
journey page that draws it (``the journey page:
http://127.0.0.1:8780/trace/<trace id>``) when the lab serves one
(``[trace] listen_port`` of the first config that sets it). ``--json``
prints :func:`ministack.trace.hops.load`'s dict alone (with that
recovery phase). The trace store is the daemons' ``[profiler]
connection_string``, read from the first of ``--config-file`` (default:
the lab's miniapi, minicinder and minicompute configs in
/etc/ministack) that has one, unless ``--connection-string`` (or
``OSPROFILER_CONNECTION_STRING``) names it.

Exit codes: 0 shown, 1 no such trace, 2 usage or configuration error.
"""

import argparse
import configparser
import json
import os
import sys

from ministack.trace import hops
from ministack_course import state

DEFAULT_CONFIG_FILES = ("/etc/ministack/miniapi.conf",
                        "/etc/ministack/minicinder.conf",
                        "/etc/ministack/minicompute.conf")


def _configs(config_files):
    """The readable files of ``config_files``, parsed, in order."""
    for path in config_files:
        parser = configparser.RawConfigParser(strict=False)
        try:
            with open(path) as handle:
                parser.read_file(handle)
        except (OSError, configparser.Error):
            continue
        yield parser


def connection_string(config_files):
    """``[profiler] connection_string`` of the first file that has one."""
    for parser in _configs(config_files):
        if parser.has_option("profiler", "connection_string"):
            value = parser.get("profiler", "connection_string").strip()
            if value:
                return value
    return None


def page_url(config_files):
    """``http://HOST:PORT/trace/`` of the journey page ministack-course serves
    (``[trace] listen``, ``listen_port`` of the first file that sets the
    port), or None when no file turns it on (port 0 or unset)."""
    for parser in _configs(config_files):
        port = parser.get("trace", "listen_port", fallback="").strip()
        if not port:
            continue
        if port == "0":
            return None
        host = parser.get("trace", "listen", fallback="").strip() or \
            "127.0.0.1"
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"      # listening everywhere: here too
        if ":" in host:
            host = "[%s]" % host
        return "http://%s:%s/trace/" % (host, port)
    return None


def _parser():
    parser = argparse.ArgumentParser(
        prog="ministack-trace",
        description="Show a traced request's hops (osprofiler traces "
                    "stored by miniapi, minicompute and minicinder).")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="the hops of one trace")
    show.add_argument("ident", metavar="TRACE_ID|REQUEST_ID",
                      help="an osprofiler trace id (what openstack "
                           "--os-profile prints) or a request id (req-...)")
    show.add_argument("--json", action="store_true",
                      help="the trace as JSON (hops.load's contract), "
                           "without the page's URL")
    show.add_argument("--connection-string",
                      default=os.environ.get("OSPROFILER_CONNECTION_STRING"),
                      help="the trace store's SQLAlchemy URL (default: "
                           "[profiler] connection_string of the config)")
    show.add_argument("--config-file", action="append",
                      help="a daemon config to read [profiler] from "
                           "(repeatable; default: /etc/ministack/*.conf)")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    url = args.connection_string or connection_string(
        args.config_file or DEFAULT_CONFIG_FILES)
    if not url:
        print("ministack-trace: no [profiler] connection_string in %s; "
              "pass --connection-string" % ", ".join(
                  args.config_file or DEFAULT_CONFIG_FILES),
              file=sys.stderr)
        return 2
    from ministack.trace import storage
    if not storage.is_sql_url(url):
        print("ministack-trace: %s is not an SQL trace store (with an "
              "OTLP or Jaeger exporter, look the trace up there)"
              % url.partition("://")[0], file=sys.stderr)
        return 2
    try:
        trace = hops.load(url, args.ident)
    except hops.TraceNotFound as exc:
        print("ministack-trace: %s" % exc, file=sys.stderr)
        return 1
    state.recovery_phase(trace)     # a failed attach's undo steps
    if args.json:
        print(json.dumps(trace, indent=2))
        return 0
    print(hops.format_table(trace))
    page = page_url(args.config_file or DEFAULT_CONFIG_FILES)
    if page:
        print("the journey page: %s%s" % (page, trace["trace_id"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
