"""Quickstart tier: what README and docs/ tell people to type, as typed.

With MINISTACK_REQUIRE_LAB=1 (run_tests.sh, CI) a test that skips for
want of the lab fails instead (tests/support/require_lab.py).
"""

from tests.support.require_lab import pytest_runtest_makereport  # noqa: F401
