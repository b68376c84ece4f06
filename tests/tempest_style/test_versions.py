"""Version discovery of both APIs (tempest's compute and volume
test_versions.py)."""

import pytest

from tests.tempest_style import clients
from tests.tempest_style.decorators import idempotent_id

VERSION_KEYS = {"id", "links", "status", "updated"}
VOLUME_VERSION_KEYS = VERSION_KEYS | {"min_version", "version",
                                      "media-types"}


def _self_links(version):
    return [link["href"] for link in version["links"]
            if link["rel"] == "self"]


def _check_version_details(compute, version):
    """Tempest's loop body: exactly one self link, and GETting it returns
    the version document whose self link is that same link."""
    links = _self_links(version)
    assert len(links) == 1, "%s has %d self links: %s" % (
        version["id"], len(links), version["links"])
    shown = compute.get_version_by_url(links[0])["version"]
    assert VERSION_KEYS <= set(shown), shown
    assert _self_links(shown) == links, shown
    assert shown["id"] == version["id"]


@idempotent_id("17358887-33b3-47bd-b48c-7800e90f89dd")
def test_list_api_versions(cloud):
    """GET / on compute lists its versions, v2.0 first."""
    body = cloud.compute.list_versions(expected=200)
    versions = body["versions"]
    for version in versions:
        assert VERSION_KEYS <= set(version), version
    assert versions[0]["id"] == "v2.0", \
        "the first listed version should be v2.0: %s" % versions


@idempotent_id("56b515b1-0e4d-4cd1-b4da-b32724b70e5b")
def test_get_version_details(cloud):
    """Every current version's self link round-trips (the endpoint the
    catalog names is one of them)."""
    versions = cloud.compute.list_versions(expected=200)["versions"]
    current = [v for v in versions if v["status"] != "DEPRECATED"]
    assert current, versions
    for version in current:
        _check_version_details(cloud.compute, version)


@idempotent_id("f96f72ca-fe2a-4704-a10a-0dbe50e5196c")
def test_get_deprecated_version_details(cloud):
    """Tempest checks the listed deprecated versions the same way."""
    versions = cloud.compute.list_versions(expected=200)["versions"]
    deprecated = [v for v in versions if v["status"] == "DEPRECATED"]
    if not deprecated:
        pytest.skip("the cloud lists no deprecated compute version")
    for version in deprecated:
        _check_version_details(cloud.compute, version)


@idempotent_id("f28e278a-8d74-46e2-9e55-b152853f2222")
def test_list_volume_versions(cloud):
    """GET / on the volume API is 300 Multiple Choices with the schema
    tempest checks."""
    body = cloud.volumes.list_versions(expected=300)
    assert body["versions"], body
    for version in body["versions"]:
        missing = VOLUME_VERSION_KEYS - set(version)
        assert not missing, "version %s lacks %s" % (version.get("id"),
                                                      missing)
        assert len(_self_links(version)) == 1, version


@idempotent_id("ba53c974-0424-46f7-be20-03e8d506d878")
def test_show_volume_version(cloud):
    """GET /v3/ is 200 and names the same version as the list."""
    listed = {v["id"]: v for v in
              cloud.volumes.list_versions(expected=300)["versions"]}
    root = clients.unversioned(cloud.volumes.endpoint)
    shown = cloud.volumes.get_version_by_url(root + "v3/")["versions"]
    assert len(shown) == 1, shown
    assert shown[0]["id"] in listed, (shown, sorted(listed))
    assert shown[0]["id"].startswith("v3"), shown
    assert shown[0]["version"] == listed[shown[0]["id"]]["version"]
