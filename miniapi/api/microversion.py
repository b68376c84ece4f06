"""The compute API's microversion range and per-request negotiation.

The version a request runs at comes from ``OpenStack-API-Version: compute
X`` or the legacy ``X-OpenStack-Nova-API-Version: X`` (no header: 2.1,
``latest``: the maximum). It is stored on ``flask.g`` before the view runs
and echoed back in the response headers, as upstream does.

We advertise 2.96. What that promises on the routes we serve:

* 2.3   server show/detail extended attributes (admin), volumes_attached
        entries carry delete_on_termination
* 2.9   ``locked``; 2.16 ``host_status``; 2.19 ``description``;
        2.26 ``tags``; 2.47 flavor embedded in the server
* 2.49  ``tag`` accepted on attach; 2.70 ``tag`` shown
* 2.51  instance action events visible to the owner; 2.58 ``updated_at``
        and paging on actions; 2.62 event ``host``/``hostId``;
        2.84 event ``details``
* 2.53  os-services ids are UUIDs
* 2.55  flavor ``description``; 2.61 flavor ``extra_specs``;
        2.75 flavor ``swap`` is 0 rather than ""
* 2.60  multiattach volumes may be attached
* 2.74  server create takes ``host`` / ``hypervisor_hostname`` (admin)
* 2.63  ``trusted_image_certificates``; 2.71 ``server_groups``;
        2.73 ``locked_reason``
* 2.75  unknown query parameters on attachment list are 400
* 2.79  ``delete_on_termination`` on attach; 2.85 PUT updates it
* 2.89  attachment GET shows ``attachment_id``/``bdm_uuid``, drops ``id``
* 2.90  ``OS-EXT-SRV-ATTR:hostname`` for everyone;
        2.96 ``pinned_availability_zone``

Anything above 2.100 changes the attach response (202, no body); we stay
below it, as the reference advises.
"""

import functools

import flask

from ministack import microversion
from ministack.microversion import APIVersion

MIN_VERSION = APIVersion("2.1")
MAX_VERSION = APIVersion("2.96")

LEGACY_HEADER = "X-OpenStack-Nova-API-Version"
HEADER = "OpenStack-API-Version"


def negotiate(headers):
    """The APIVersion for a request with these headers.

    :raises ministack.exception.Invalid: malformed header (400).
    :raises ministack.microversion.VersionNotAcceptable: out of range (406).
    """
    requested = microversion.header_value(headers, "compute",
                                          legacy_header=LEGACY_HEADER)
    return microversion.negotiate(requested, MIN_VERSION, MAX_VERSION)


def current():
    """The version the current request runs at (2.1 outside a request)."""
    return flask.g.get("api_version", MIN_VERSION)


def at_least(version):
    """True when the current request's version is >= ``version``."""
    return current() >= APIVersion.coerce(version)


def add_headers(response, version):
    """Echo the negotiated version, as nova does on every versioned reply."""
    response.headers[HEADER] = "compute %s" % version
    response.headers[LEGACY_HEADER] = str(version)
    response.headers["Vary"] = "%s, %s" % (HEADER, LEGACY_HEADER)
    return response


def min_version(version):
    """Decorator: the route does not exist below ``version`` (404).

    Upstream answers a method that is not available at the requested
    version with a bare 404, as if it were not implemented.
    """
    version = APIVersion.coerce(version)

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if current() < version:
                flask.abort(404)
            return func(*args, **kwargs)
        return wrapper
    return decorator


def max_version(version):
    """Decorator: the route is gone above ``version`` (404), as nova's
    proxy APIs (os-volumes...) are from 2.36."""
    version = APIVersion.coerce(version)

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if current() > version:
                flask.abort(404)
            return func(*args, **kwargs)
        return wrapper
    return decorator
