"""The pure part of bench_attach --traced: the medians it prints."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import bench_attach_traced as traced  # noqa: E402


def test_overhead_of_medians_skips_unfinished_rounds():
    off, on, pct = traced.overhead([0.5, 0.4, None, 0.6], [0.55, 0.44, 0.66])
    assert (off, on) == (0.5, 0.55)
    assert round(pct, 6) == 10.0


def test_overhead_without_rounds_is_none():
    assert traced.overhead([None], [0.1]) is None
    assert traced.overhead([0.1], []) is None


def test_record_keeps_traced_columns_apart():
    rows = {"api_visible": [0.3]}
    traced.record(rows, {"api_visible": 0.33, "api_gone": 0.2,
                         "post_attach": 0.01})
    assert rows == {"api_visible": [0.3], "traced_api_visible": [0.33],
                    "traced_api_gone": [0.2]}


def _hop(name, start, dur, service="nova-compute", kind="LIBRARY",
         phase="connect/attach"):
    return {"phase": phase, "service": service, "kind": kind, "name": name,
            "start_ms": start, "duration_ms": dur}


def test_hop_medians_match_the_kth_hop_of_a_name_across_traces():
    one = {"hops": [_hop("tgtadm target show", 10.0, 5.0, kind="COMMAND"),
                    _hop("tgtadm target show", 20.0, 3.0, kind="COMMAND"),
                    _hop("virDomainAttachDeviceFlags", 30.0, 40.0)]}
    two = {"hops": [_hop("tgtadm target show", 12.0, 7.0, kind="COMMAND"),
                    _hop("tgtadm target show", 22.0, 1.0, kind="COMMAND"),
                    _hop("virDomainAttachDeviceFlags", 50.0, None)]}
    three = {"hops": [_hop("tgtadm target show", 14.0, 9.0,
                           kind="COMMAND")]}
    rows = traced.hop_medians([one, two, three])
    assert [(r["name"], r["n"], r["start_ms"], r["duration_ms"])
            for r in rows] == [
        ("tgtadm target show", 3, 12.0, 7.0),
        ("tgtadm target show", 2, 21.0, 2.0),
        ("virDomainAttachDeviceFlags", 2, 40.0, 40.0)]
    table = traced.format_hops(rows, 3)
    assert table.splitlines()[1].split()[:3] == ["12.0", "7.0", "3"]
    assert table.endswith("(medians over 3 traces)")


def test_record_keeps_the_trace_ids_of_a_traced_round():
    rows = {}
    traced.record(rows, {"api_visible": 0.3, "api_gone": 0.2,
                         "traces": ["t-attach", "t-detach"]})
    assert rows["traces"] == [["t-attach", "t-detach"]]
