"""A trace's hops as the text table ``ministack-trace show`` prints.

:func:`format_table` takes :func:`ministack.trace.hops.load`'s dict (also
reached as ``hops.format_table``). One row per REST call: the client's
hop, with its server's time in ``server ms`` (a server hop without a
client hop has a row of its own). Columns::

    start ms  dur ms  server ms  phase  service  host  kind  name  status

``host`` is the hop's ``host``, the ``[DEFAULT] host`` of the daemon that
did it: the compute host of a nova-compute hop (``compute2``), the
``<host>@<backend>`` of a cinder-volume one (``vm@lvmdriver-1``), ``-``
when the trace did not record it. A failed hop's status cell ends with
``ERROR <its error>`` (a REST call's server error: ``(server) ...``).
"""

HEADER = ("start ms", "dur ms", "server ms", "phase", "service", "host",
          "kind", "name", "status")
#: The columns aligned to the right (the numbers).
_NUMBERS = 3


def _ms(value):
    return "%.1f" % value if value is not None else "-"


def _row(hop):
    server = hop.get("server") or {}
    status = hop["status"] if hop["status"] is not None \
        else server.get("status")
    status = str(status) if status is not None else ""
    error = hop["error"] or (server.get("error") and
                             "(server) " + server["error"])
    if error:
        status = (status + " " if status else "") + "ERROR " + error[:60]
    return ("%.1f" % hop["start_ms"], _ms(hop["duration_ms"]),
            _ms(server["duration_ms"]) if server else "",
            hop["phase"] or "", hop["service"], hop.get("host") or "-",
            hop["kind"], hop["name"], status)


def format_table(trace):
    """The hops as a text table (what ``ministack-trace show`` prints):
    one row per REST call, the client's, with its server's time."""
    lines = [_row(hop) for hop in trace["hops"] if not hop.get("client_id")]
    widths = [max(len(str(row[i])) for row in [HEADER] + lines)
              for i in range(len(HEADER) - 1)]
    out = ["trace %s  (%s%s, %.1f ms, request ids: %s)" % (
        trace["trace_id"],
        trace["journey"] + ", " if trace.get("journey") else "",
        trace["started_at"], trace["duration_ms"],
        ", ".join(trace["request_ids"]) or "-")]
    for row in [HEADER] + lines:
        cells = [str(cell).rjust(widths[i]) if i < _NUMBERS else
                 str(cell).ljust(widths[i])
                 for i, cell in enumerate(row[:-1])]
        out.append("  ".join(cells + [row[-1]]).rstrip())
    return "\n".join(out)
