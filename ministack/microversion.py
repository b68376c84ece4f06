"""Microversion parsing and negotiation, shared by miniapi and minicinder.

Upstream's rules (nova/api/openstack/api_version_request.py and the cinder
equivalent): no header means the minimum version, ``latest`` means the
maximum, an out-of-range version is 406, a malformed one is 400.
"""

import functools
import re

from ministack import exception

_VERSION_RE = re.compile(r"^([1-9]\d*)\.(0|[1-9]\d*)$")


@functools.total_ordering
class APIVersion:
    """A ``major.minor`` version that compares numerically (2.10 > 2.9)."""

    def __init__(self, text):
        match = _VERSION_RE.match(text or "")
        if not match:
            raise exception.Invalid(
                reason="API version string %s is not valid. Valid version "
                       "strings are in the form X.Y, e.g. 3.44." % text)
        self.major = int(match.group(1))
        self.minor = int(match.group(2))

    def _key(self):
        return (self.major, self.minor)

    def __eq__(self, other):
        return self._key() == APIVersion.coerce(other)._key()

    def __lt__(self, other):
        return self._key() < APIVersion.coerce(other)._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return "%d.%d" % self._key()

    __repr__ = __str__

    @classmethod
    def coerce(cls, value):
        return value if isinstance(value, APIVersion) else cls(value)

    def matches(self, minimum=None, maximum=None):
        """True when minimum <= self <= maximum (either bound optional)."""
        if minimum is not None and self < minimum:
            return False
        if maximum is not None and self > maximum:
            return False
        return True


class VersionNotAcceptable(exception.MinistackException):
    msg_fmt = ("Version %(version)s is not supported by the API. Minimum is "
               "%(min_version)s and maximum is %(max_version)s.")
    code = 406


def header_value(headers, service, legacy_header=None):
    """Extract the requested version string for ``service`` or None.

    ``OpenStack-API-Version`` may carry several comma-separated
    ``<service> <version>`` tokens; the one naming ``service`` wins, then
    the legacy header (``X-OpenStack-Nova-API-Version``).
    """
    raw = headers.get("OpenStack-API-Version")
    if raw:
        for token in raw.split(","):
            parts = token.strip().split()
            if len(parts) == 2 and parts[0].lower() == service:
                return parts[1]
            if len(parts) != 2 and service in token:
                raise exception.Invalid(
                    reason="Invalid OpenStack-API-Version header %r" % raw)
    if legacy_header:
        legacy = headers.get(legacy_header)
        if legacy:
            return legacy.strip()
    return None


def negotiate(requested, min_version, max_version):
    """Return the APIVersion a request runs at.

    :raises Invalid: malformed version string (400).
    :raises VersionNotAcceptable: outside [min, max] (406).
    """
    min_version = APIVersion.coerce(min_version)
    max_version = APIVersion.coerce(max_version)
    if requested is None:
        return min_version
    if requested.strip().lower() == "latest":
        return max_version
    version = APIVersion(requested.strip())
    if not version.matches(min_version, max_version):
        raise VersionNotAcceptable(version=version, min_version=min_version,
                                   max_version=max_version)
    return version
