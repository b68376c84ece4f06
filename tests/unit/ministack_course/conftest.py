"""Fixtures of the course's unit tests: the trace store of the ministack
unit tests (traces are recorded by ministack.trace, below the course)."""

from tests.unit.ministack.conftest import store  # noqa: F401
