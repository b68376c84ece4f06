"""Fuzz every route of the keystone v3 subset (miniapi, :5000).

The routes come from the app's own URL map (tests/fuzz/routes.py); each
gets hostile requests from hypothesis and must never answer 5xx or show
Python internals.
"""

import pytest

from tests.fuzz import routes


@pytest.mark.parametrize("route", routes.routes("identity"), ids=str)
def test_identity_route(route, fuzz):
    fuzz(route)
