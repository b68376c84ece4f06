"""Fuzz every route of the image API (miniapi, :9292, /v2).

The routes come from the app's own URL map (tests/fuzz/routes.py); each
gets hostile requests from hypothesis and must never answer 5xx or show
Python internals.
"""

import pytest

from tests.fuzz import routes


@pytest.mark.parametrize("route", routes.routes("image"), ids=str)
def test_image_route(route, fuzz):
    fuzz(route)
