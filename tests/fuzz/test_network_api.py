"""Fuzz every route of the network API (miniapi, :9696, /v2.0).

The API reports no networks: every list is empty, every id a 404
``NeutronError``, every create a 403. Its routes come from the app's own
URL map (tests/fuzz/routes.py), the collection in ``/v2.0/<name>`` from
its ``COLLECTIONS`` (``routes.KIND_ARGUMENTS``); each route gets hostile
requests from hypothesis and must never answer 5xx or show Python
internals.
"""

import pytest

from tests.fuzz import routes


@pytest.mark.parametrize("route", routes.routes("network"), ids=str)
def test_network_route(route, fuzz):
    fuzz(route)
