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
