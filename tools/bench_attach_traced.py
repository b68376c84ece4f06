"""Tracing's cost: the latency rounds of tools/bench_attach.py, each run a
second time with osprofiler trace headers (``--traced``).

The traced round follows its untraced twin on the same server, so both
see the same load; the report prints both medians and the difference
(the budget: tracing on adds less than 10% to the attach). Tracing
off is the untraced column itself: with no trace headers, every span is
osprofiler's no-op.
"""

import statistics

from bench_attach_report import say
import journey_trace

KEYS = ("api_visible", "api_gone")


def tracing(args):
    """journey_trace.Tracing of the lab, or None (not asked, or off)."""
    if not getattr(args, "traced", False):
        return None
    found = journey_trace.Tracing.from_config()
    if found.off:
        say("   --traced: %s; measuring untraced only" % found.off)
        return None
    return found


def record(rows, values):
    """Add a traced round's attach and detach times (and its two trace
    ids, when the round kept them) to ``rows``."""
    for key in KEYS:
        rows.setdefault("traced_" + key, []).append(values[key])
    if values.get("traces"):
        rows.setdefault("traces", []).append(values["traces"])


def hop_medians(traces):
    """Where the time goes, over several traces of the same request:
    one row per hop (the k-th hop of a name in a trace is matched with
    the k-th of the others), in the order hops first start, with the
    median start and duration in ms and how many traces had it."""
    found = {}
    for trace in traces:
        seen = {}
        for hop in trace["hops"]:
            name = (hop["phase"] or "", hop["service"], hop["kind"],
                    hop["name"])
            seen[name] = seen.get(name, 0) + 1
            row = found.setdefault(name + (seen[name],),
                                   {"start": [], "dur": []})
            row["start"].append(hop["start_ms"])
            if hop["duration_ms"] is not None:
                row["dur"].append(hop["duration_ms"])
    rows = []
    for key, row in found.items():
        rows.append({"phase": key[0], "service": key[1], "kind": key[2],
                     "name": key[3], "n": len(row["start"]),
                     "start_ms": statistics.median(row["start"]),
                     "duration_ms": (statistics.median(row["dur"])
                                     if row["dur"] else None)})
    rows.sort(key=lambda r: r["start_ms"])
    return rows


def format_hops(rows, total):
    """``hop_medians`` as the text table the report prints."""
    lines = ["   %8s %8s  %-3s %-14s %-13s %-8s %s" % (
        "start ms", "dur ms", "n", "phase", "service", "kind", "name")]
    for row in rows:
        lines.append("   %8.1f %8s  %-3d %-14s %-13s %-8s %s" % (
            row["start_ms"], "-" if row["duration_ms"] is None
            else "%.1f" % row["duration_ms"], row["n"], row["phase"],
            row["service"], row["kind"], row["name"][:60]))
    lines.append("   (medians over %d traces)" % total)
    return "\n".join(lines)


def hop_report(tracing, rows):
    """Print where the attach's and the detach's time goes, hop by hop,
    from the traced rounds' stored traces."""
    pairs = rows.get("traces") or []
    for index, what, handler in ((0, "attach", "attach_volume"),
                                 (1, "detach", "detach_volume")):
        traces = []
        for pair in pairs:
            trace, _settled = tracing.settled(pair[index], handler,
                                              timeout=10)
            if trace is not None:
                traces.append(trace)
        say("== the %s hop by hop (osprofiler, traced rounds)" % what)
        if not traces:
            say("   no stored trace")
            continue
        say(format_hops(hop_medians(traces), len(traces)))


def overhead(untraced, traced):
    """(median untraced, median traced, +%) of two lists of seconds,
    rounds that never finished (None) left out; None if either is empty."""
    off = [v for v in untraced if v is not None]
    on = [v for v in traced if v is not None]
    if not off or not on:
        return None
    a, b = statistics.median(off), statistics.median(on)
    return a, b, (b - a) / a * 100.0 if a else 0.0


def report(rows):
    say("== tracing off vs on (median of %d rounds each)"
        % len(rows.get("traced_api_visible", [])))
    for key, what in zip(KEYS, ("attach, accepted -> visible in guest",
                                "detach, accepted -> gone from guest"),
                         strict=True):
        found = overhead(rows[key], rows.get("traced_" + key, []))
        if found is None:
            say("   %s: no finished rounds" % what)
            continue
        say("   %-40s off %7.0f ms   on %7.0f ms   %+5.1f%%" % (
            what, found[0] * 1000, found[1] * 1000, found[2]))
