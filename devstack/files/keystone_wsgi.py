"""Keystone's WSGI application, for gunicorn (lib/keystone).

keystone.wsgi.api builds the application at import time, and its
oslo.config parser reads ``sys.argv``: under gunicorn that holds
gunicorn's own options (``--bind``, ``--workers``...), which keystone
would refuse. DevStack avoids it by running keystone under uwsgi's
``wsgi-file``; here the argv is cut to the program name before the
import. The config file is named by keystone's own variable,
``OS_KEYSTONE_CONFIG_FILES`` (lib/keystone sets it).

:class:`AuthBodyCheck` sits in front of keystone: keystone 30.0.0
answers 500 to JSON nested past the parser's depth and to lone
surrogates in any request body (it parses the body of every method,
even ``GET``), and to some malformed login bodies on ``POST
/v3/auth/tokens`` (an application credential's ``user.domain`` as a
string, ``user.id`` as an object, lists for names). Those get keystone's
own 400 instead; every well-formed body reaches keystone untouched
(docs/deviations.md). It answers the same 400 to a ``Host`` header
whose name IDNA cannot encode (a label over 63 characters): werkzeug
raises BadHost when keystone builds a URL adapter, and keystone let that
escape as a 500 on every route.
"""

import io
import json
import os
import sys

_MAX_BODY = 114688   # keystone's own sizelimit answers larger bodies


def _bad_text(value):
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return "\x00" in value
    if isinstance(value, dict):
        return any(_bad_text(k) or _bad_text(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_bad_text(v) for v in value)
    return False


# Keystone's migrations make utf8 (utf8mb3) tables on MySQL/MariaDB: a
# character outside the Basic Multilingual Plane (4 bytes in UTF-8, an
# emoji) cannot be stored there, and keystone answered 500 to a name
# holding one (POST application_credentials as any user). Passwords and
# secrets are only hashed, never stored as text: they may hold any.
_HASHED = frozenset(("password", "original_password", "secret"))


def _outside_bmp(value, key=None):
    if isinstance(value, str):
        return key not in _HASHED and any(ord(c) > 0xFFFF for c in value)
    if isinstance(value, dict):
        return any(_outside_bmp(k) or _outside_bmp(v, k)
                   for k, v in value.items())
    if isinstance(value, list):
        return any(_outside_bmp(v, key) for v in value)
    return False


def _stores_utf8mb3(config_files):
    """Whether keystone's database is MySQL/MariaDB (its tables utf8)."""
    import configparser
    parser = configparser.ConfigParser(interpolation=None)
    parser.read([f for f in config_files.split(",") if f])
    url = parser.get("database", "connection", fallback="")
    return url.startswith("mysql")


def _bad_user(user):
    """Why a password or application-credential ``user`` would make
    keystone fail, or None."""
    if not isinstance(user, dict):
        return "user must be an object"
    for key in ("id", "name", "password"):
        if key in user and not isinstance(user[key], str):
            return "user.%s must be a string" % key
    domain = user.get("domain")
    if domain is not None:
        if not isinstance(domain, dict):
            return "user.domain must be an object"
        for key in ("id", "name"):
            if key in domain and not isinstance(domain[key], str):
                return "user.domain.%s must be a string" % key
    return None


def body_problem(body, utf8mb3=False):
    """What keystone would 500 on in any request body, or None: JSON
    nested past the parser's depth, text that is not Unicode, and, on a
    MySQL database (``utf8mb3``), text it cannot store. (Any other body
    that is not JSON gets keystone's own 400.)"""
    try:
        data = json.loads(body)
    except RecursionError:
        return "Malformed request body."
    except (ValueError, UnicodeDecodeError):
        return None
    if _bad_text(data):
        return "Invalid Unicode text in the request body."
    if utf8mb3 and _outside_bmp(data):
        return ("Invalid input: the identity database cannot store "
                "characters outside the Basic Multilingual Plane.")
    return None


def problem(body):
    """What is wrong with an auth request body, or None."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "Malformed request body."
    if _bad_text(data):
        return "Invalid Unicode text in the request body."
    identity = data.get("auth", {}).get("identity") \
        if isinstance(data, dict) and isinstance(data.get("auth"), dict) \
        else None
    if not isinstance(identity, dict):
        return None     # keystone's own schema answers this one
    for method in ("password", "application_credential"):
        section = identity.get(method)
        if isinstance(section, dict) and "user" in section:
            reason = _bad_user(section["user"])
            if reason:
                return "Invalid input for field '%s': %s" % (method, reason)
    return None


def host_problem(environ):
    """Why werkzeug would refuse the request's host name, or None.

    werkzeug encodes the name (the port cut off) to IDNA when keystone
    binds its URL map; a name it cannot encode, such as a label longer
    than 63 characters, raised BadHost in keystone's error handler."""
    from werkzeug.wsgi import get_host
    try:
        host = get_host(environ)
    except Exception:   # werkzeug's own refusal (an untrusted host)
        return None     # keystone answers that one itself
    name = host.lower().partition(":")[0]
    try:
        name.encode("idna")
    except UnicodeError:
        return "Invalid Host header."
    return None


def _bad_request(start_response, reason):
    data = json.dumps({"error": {
        "code": 400, "title": "Bad Request", "message": reason}}).encode()
    start_response("400 Bad Request", [
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(data)))])
    return [data]


def _is_login(environ):
    return environ.get("REQUEST_METHOD") == "POST" and environ.get(
        "PATH_INFO", "").rstrip("/") == "/v3/auth/tokens"


class AuthBodyCheck:
    """400 in keystone's error shape for the requests keystone 500s on."""

    def __init__(self, app, utf8mb3=False):
        self.app = app
        self.utf8mb3 = utf8mb3

    def __call__(self, environ, start_response):
        reason = host_problem(environ)
        if reason:
            return _bad_request(start_response, reason)
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if 0 < length <= _MAX_BODY:
            body = environ["wsgi.input"].read(length)
            environ["wsgi.input"] = io.BytesIO(body)
            reason = problem(body) if _is_login(environ) \
                else body_problem(body, self.utf8mb3)
            if reason:
                return _bad_request(start_response, reason)
        return self.app(environ, start_response)


if not os.environ.get("OS_KEYSTONE_CONFIG_FILES"):
    raise SystemExit("keystone_wsgi: set OS_KEYSTONE_CONFIG_FILES to the "
                     "path of keystone.conf")
sys.argv = sys.argv[:1]

from keystone.wsgi.api import application as _keystone  # noqa: E402

application = AuthBodyCheck(_keystone, utf8mb3=_stores_utf8mb3(
    os.environ["OS_KEYSTONE_CONFIG_FILES"]))
