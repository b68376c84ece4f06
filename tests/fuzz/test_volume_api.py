"""Fuzz every route of the block storage API (minicinder, :8776,
/v3/{project_id}).

The routes come from the app's own URL map (tests/fuzz/routes.py); each
gets hostile requests from hypothesis and must never answer 5xx or show
Python internals.
"""

import pytest

from tests.fuzz import routes


@pytest.mark.parametrize("route", routes.routes("volume"), ids=str)
def test_volume_route(route, fuzz):
    fuzz(route)
