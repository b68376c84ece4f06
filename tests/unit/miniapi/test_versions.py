"""Version documents and microversion negotiation."""

from miniapi.api import microversion


def test_root_lists_versions(api):
    """GET / answers 200 with v2.0 (deprecated) and v2.1 (current)."""
    status, body, headers = api.get("/")
    assert status == 200
    ids = [v["id"] for v in body["versions"]]
    assert ids == ["v2.0", "v2.1"]
    v21 = body["versions"][1]
    assert v21["version"] == str(microversion.MAX_VERSION)
    assert v21["min_version"] == "2.1"
    assert v21["links"][0]["href"].endswith("/v2.1/")
    assert "OpenStack-API-Version" not in headers


def test_v21_document_with_and_without_slash(api):
    """GET /v2.1 and /v2.1/ return the version document."""
    for path in ("/v2.1", "/v2.1/"):
        status, body, _ = api.get(path)
        assert status == 200
        version = body["version"]
        assert version["id"] == "v2.1"
        assert version["status"] == "CURRENT"
        assert "media-types" in version
        assert [link["rel"] for link in version["links"]].count("self") == 1


def test_max_version_in_range():
    """Advertised max is at least 2.89 and below 2.101 (attach body)."""
    assert "2.89" <= microversion.MAX_VERSION < "2.101"


def test_no_header_is_2_1(api):
    """Without a header the request runs at 2.1, echoed in the response."""
    status, _, headers = api.get("/v2.1/flavors")
    assert status == 200
    assert headers["OpenStack-API-Version"] == "compute 2.1"
    assert headers["X-OpenStack-Nova-API-Version"] == "2.1"
    assert "OpenStack-API-Version" in headers["Vary"]


def test_latest_is_max(api):
    status, _, headers = api.get("/v2.1/flavors", version="latest")
    assert status == 200
    assert headers["OpenStack-API-Version"] == \
        "compute %s" % microversion.MAX_VERSION


def test_legacy_header_honoured(api):
    status, _, headers = api.get(
        "/v2.1/flavors", headers={"X-OpenStack-Nova-API-Version": "2.60"})
    assert status == 200
    assert headers["X-OpenStack-Nova-API-Version"] == "2.60"


def test_out_of_range_is_406(api):
    status, body, _ = api.get("/v2.1/flavors", version="2.200")
    assert status == 406
    assert "Version 2.200 is not supported" in \
        body["notAcceptable"]["message"]


def test_malformed_is_400(api):
    status, body, _ = api.get("/v2.1/flavors", version="two")
    assert status == 400
    assert "badRequest" in body


def test_route_below_its_version_is_404(api):
    """PUT /os-services/{id} exists from 2.53 only."""
    path = "/v2.1/os-services/7d9c1a8e-3c55-4f59-9b7d-1cf0f2f0c2b1"
    status, body, _ = api.put(path, {"status": "disabled"}, version="2.52")
    assert status == 404
    assert "itemNotFound" in body


def test_request_id_headers(api):
    """Both x-openstack-request-id and x-compute-request-id, equal."""
    _, _, headers = api.get("/v2.1/flavors")
    rid = headers["x-openstack-request-id"]
    assert rid.startswith("req-")
    assert headers["x-compute-request-id"] == rid


def test_image_proxy_gone_from_2_36(api):
    assert api.get("/v2.1/images", version="2.35")[0] == 200
    assert api.get("/v2.1/images", version="2.36")[0] == 404


def test_project_id_urls(api):
    """/v2.1/{project_id}/flavors serves the same route."""
    status, body, _ = api.get("/v2.1/p1/flavors")
    assert status == 200
    assert body["flavors"]
    assert "/v2.1/p1/flavors/" in body["flavors"][0]["links"][0]["href"]


def test_unknown_route_is_404_fault(api):
    status, body, _ = api.get("/v2.1/nothing-here")
    assert status == 404
    assert body["itemNotFound"]["code"] == 404
