"""Functional tier: with MINISTACK_REQUIRE_LAB=1 (run_tests.sh, CI) a test
that skips because part of the lab is missing fails instead, so a broken
bring-up can never pass as "skipped" (tests/support/require_lab.py)."""

from tests.support.require_lab import pytest_runtest_makereport  # noqa: F401
