"""/os-aggregates, read-only and empty (what ``openstack hypervisor show``
needs), checked with tempest's aggregates_client schemas."""

import pytest

from tests.unit.miniapi import tempest_schemas as ts


@pytest.mark.parametrize("version", ["2.1", "2.41", "2.96"])
def test_list_is_empty(api, version):
    ts.require_tempest()
    status, body, _ = api.get("/v2.1/os-aggregates", version=version)
    ts.check_client("aggregates_client", "list_aggregates", version,
                    status, body)
    assert body == {"aggregates": []}
    assert api.get("/v2.1/p1/os-aggregates")[1] == {"aggregates": []}


def test_show_and_policy(api):
    status, body, _ = api.get("/v2.1/os-aggregates/1")
    assert status == 404
    assert body["itemNotFound"]["message"] == \
        "Aggregate 1 could not be found."
    status, body, _ = api.get("/v2.1/os-aggregates/x")
    assert status == 400
    assert body["badRequest"]["message"] == \
        "Invalid input received: id must be an integer"
    for path, action in (("", "index"), ("/1", "show")):
        status, body, _ = api.get("/v2.1/os-aggregates" + path,
                                  token="u1:p1")
        assert status == 403
        assert body["forbidden"]["message"] == (
            "Policy doesn't allow os_compute_api:os-aggregates:%s to be "
            "performed." % action)
    assert api.post("/v2.1/os-aggregates", {"aggregate": {
        "name": "a"}})[0] == 405
