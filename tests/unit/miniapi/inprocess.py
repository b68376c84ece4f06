"""What the in-process miniapi of the unit tests is driven with: the
image it serves (:data:`IMAGE_ID`, from :class:`FakeImages`) and
:class:`APIClient`, a small wrapper around Flask's test client that sends
the noauth token (``user:project``) and the microversion header and
returns (status, json, headers). The fixtures that use them are in
conftest; tests that build their own app import them from here."""

import json

from tests.support import http_verbs

IMAGE_ID = "6a1e0a38-6f1f-4a9e-9d32-1d4b3f7f0b11"


class FakeImages:
    """Stands in for ministack.images (the lab engineer's registry)."""

    @staticmethod
    def list_images(root=None):
        return [{"id": IMAGE_ID, "name": "cirros-guest", "size": 1024}]


class APIClient(http_verbs.Verbs):
    def __init__(self, flask_client, token="admin:p1", version=None):
        self.client = flask_client
        self.token = token
        self.version = version

    def request(self, method, path, body=None, version=None, token=None,
                raw=None, headers=None):
        hdrs = {"X-Auth-Token": token or self.token}
        version = version or self.version
        if version:
            hdrs["OpenStack-API-Version"] = "compute %s" % version
        hdrs.update(headers or {})
        data = raw if raw is not None else (
            json.dumps(body) if body is not None else None)
        resp = self.client.open(path, method=method, data=data,
                                headers=hdrs,
                                content_type="application/json")
        payload = resp.get_json(silent=True)
        return resp.status_code, payload, resp.headers
