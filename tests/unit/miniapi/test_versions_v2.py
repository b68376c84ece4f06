"""GET /v2/: the deprecated v2.0 document that GET / links to."""


def test_every_listed_version_self_link_is_served(app):
    """Tempest's test_get_version_details follows each listed self link."""
    client = app.test_client()
    versions = client.get("/").get_json()["versions"]
    for version in versions:
        [self_link] = [link["href"] for link in version["links"]
                       if link["rel"] == "self"]
        path = "/" + self_link.split("/", 3)[3]
        resp = client.get(path)
        assert resp.status_code == 200, path
        doc = resp.get_json()["version"]
        assert doc["id"] == version["id"]
        assert [link["href"] for link in doc["links"]
                if link["rel"] == "self"] == [self_link]
