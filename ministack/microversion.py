"""Microversion parsing and negotiation, shared by miniapi and minicinder.

Upstream's rules (nova/api/openstack/api_version_request.py and the cinder
equivalent): no header means the minimum version, ``latest`` means the
maximum, an out-of-range version is 406, a malformed one is 400.
"""

import functools
import re

from ministack import exception

_VERSION_RE = re.compile(r"^([1-9][0-9]*)\.(0|[1-9][0-9]*)$")

# No microversion will ever need ten digits. Longer numbers are refused
# before int() sees them: Python refuses to convert more than 4300 digits
# (a ValueError, which used to surface as a 500), and a number that long
# is out of every range anyway.
MAX_DIGITS = 9

# How much of a client's version string a message quotes.
_QUOTED = 32


def quoted(text):
    """``text`` for a message, shortened when a client sent a huge one."""
    text = str(text)
    return text if len(text) <= _QUOTED else "%s... (%d characters)" % (
        text[:_QUOTED], len(text))


@functools.total_ordering
class APIVersion:
    """A ``major.minor`` version that compares numerically (2.10 > 2.9)."""

    def __init__(self, text):
        match = _VERSION_RE.match(text) if isinstance(text, str) else None
        if not match:
            raise exception.Invalid(
                reason="API version string %s is not valid. Valid version "
                       "strings are in the form X.Y, e.g. 3.44."
                       % quoted(text))
        if any(len(part) > MAX_DIGITS for part in match.groups()):
            raise VersionOutOfRange(version=quoted(text))
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


class VersionOutOfRange(exception.Invalid):
    """A well-formed version with a component of more than MAX_DIGITS
    digits: beyond any API's range (:func:`negotiate` answers 406)."""
    msg_fmt = "API version string %(version)s is out of range."


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
                    reason="Invalid OpenStack-API-Version header %r"
                    % quoted(raw))
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
    try:
        version = APIVersion(requested.strip())
    except VersionOutOfRange:
        raise VersionNotAcceptable(
            version=quoted(requested.strip()), min_version=min_version,
            max_version=max_version) from None
    if not version.matches(min_version, max_version):
        raise VersionNotAcceptable(version=version, min_version=min_version,
                                   max_version=max_version)
    return version
