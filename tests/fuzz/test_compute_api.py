"""Fuzz every route of the compute API (miniapi, :8774, /v2.1).

The routes come from the app's own URL map (tests/fuzz/routes.py); each
gets hostile requests from hypothesis and must never answer 5xx or show
Python internals.
"""

import pytest

from tests.fuzz import routes


@pytest.mark.parametrize("route", routes.routes("compute"), ids=str)
def test_compute_route(route, fuzz):
    fuzz(route)
