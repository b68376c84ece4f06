"""Version documents (nova's api/openstack/compute/versions.py)."""

import flask

from miniapi.api import microversion

UPDATED = "2013-07-23T11:33:21Z"


def _root():
    return flask.request.host_url.rstrip("/")


def version_list():
    """GET /: v2.0 (deprecated; only its document is served) and v2.1."""
    return {"versions": [
        {"id": "v2.0", "status": "DEPRECATED", "version": "",
         "min_version": "", "updated": "2025-07-04T12:00:00Z",
         "links": [{"rel": "self", "href": "%s/v2/" % _root()}]},
        {"id": "v2.1", "status": "CURRENT",
         "version": str(microversion.MAX_VERSION),
         "min_version": str(microversion.MIN_VERSION), "updated": UPDATED,
         "links": [{"rel": "self", "href": "%s/v2.1/" % _root()}]},
    ]}


def version_v2():
    """GET /v2 and /v2/: the deprecated v2.0 document, as listed by GET /.

    Only the document is served: the v2.0 API itself (upstream's
    v2-compatible mode of the v2.1 code) is not.
    """
    return {"version": {
        "id": "v2.0", "status": "DEPRECATED", "version": "",
        "min_version": "", "updated": "2025-07-04T12:00:00Z",
        "links": [{"rel": "self", "href": "%s/v2/" % _root()},
                  {"rel": "describedby", "type": "text/html",
                   "href": "http://docs.openstack.org/"}],
        "media-types": [{
            "base": "application/json",
            "type": "application/vnd.openstack.compute+json;version=2"}],
    }}


def version_v21():
    """GET /v2.1 and /v2.1/: the document clients discover from."""
    return {"version": {
        "id": "v2.1", "status": "CURRENT",
        "version": str(microversion.MAX_VERSION),
        "min_version": str(microversion.MIN_VERSION), "updated": UPDATED,
        "links": [{"rel": "self", "href": "%s/v2.1/" % _root()},
                  {"rel": "describedby", "type": "text/html",
                   "href": "http://docs.openstack.org/"}],
        "media-types": [{
            "base": "application/json",
            "type": "application/vnd.openstack.compute+json;version=2.1"}],
    }}
