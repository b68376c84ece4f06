"""Tracing's cost: the latency rounds of tools/bench_attach.py, each run a
second time with osprofiler trace headers (``--traced``).

The traced round follows its untraced twin on the same server, so both
see the same load; the report prints both medians and the difference
(issue 13's budget: tracing on adds less than 10% to the attach). Tracing
off is the untraced column itself: with no trace headers, every span is
osprofiler's no-op.
"""

import statistics

import journey_trace
from bench_attach_report import say

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
    """Add a traced round's attach and detach times to ``rows``."""
    for key in KEYS:
        rows.setdefault("traced_" + key, []).append(values[key])


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
