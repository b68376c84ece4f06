"""A skip for want of the lab is a failure when the lab was just brought
up: with MINISTACK_REQUIRE_LAB=1 (run_tests.sh, CI) a lab tier's skipped
test is reported failed, so a broken bring-up can never pass as
"skipped". A tier's conftest imports the hook by name::

    from tests.support.require_lab import pytest_runtest_makereport  # noqa
"""

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
