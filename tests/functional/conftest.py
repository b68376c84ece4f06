"""Functional tier: with MINISTACK_REQUIRE_LAB=1 (run_tests.sh, CI) a test
that skips because part of the lab is missing fails instead, so a broken
bring-up can never pass as "skipped"."""

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("MINISTACK_REQUIRE_LAB") == "1":
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr,
                                                  tuple) else report.longrepr
        report.longrepr = ("skipped, but MINISTACK_REQUIRE_LAB=1 requires "
                           "the lab: %s" % reason)
