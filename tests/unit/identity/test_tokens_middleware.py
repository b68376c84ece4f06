"""Tokens, password hashes and the keystone path of ContextMiddleware."""

import datetime
import json

import pytest
from cryptography import fernet

from ministack import wsgi
from ministack.identity import exception
from ministack.identity import middleware
from ministack.identity import passwords
from ministack.identity import tokens

KEY = fernet.Fernet.generate_key()


def issue(formatter=None, roles=(("r1", "member"),), lifetime=3600,
          project="p1", user="u1"):
    formatter = formatter or tokens.TokenFormatter(KEY)
    return formatter.issue(user, user + "-name", project, project + "-name",
                           list(roles), ["password"], lifetime)


def test_round_trip_and_payload_is_opaque():
    token_id, token = issue()
    opened = tokens.TokenFormatter(KEY).verify(token_id)
    assert opened == token
    assert b"u1-name" not in token_id.encode()   # sealed, not just signed


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),
    lambda t: t[:40],
    lambda t: "",
    lambda t: "admin:admin",
    lambda t: "x" * 5000,
    lambda t: t + "é",
])
def test_tampered_or_garbage_tokens_are_invalid(mangle):
    token_id, _ = issue()
    with pytest.raises(exception.TokenInvalid):
        tokens.TokenFormatter(KEY).verify(mangle(token_id))


def test_other_key_is_invalid():
    token_id, _ = issue(tokens.TokenFormatter(fernet.Fernet.generate_key()))
    with pytest.raises(exception.TokenInvalid):
        tokens.TokenFormatter(KEY).verify(token_id)


def test_expiry_and_allow_expired_window():
    token_id, token = issue()
    later = token.expires_at + datetime.timedelta(seconds=10)
    formatter = tokens.TokenFormatter(KEY)
    with pytest.raises(exception.TokenExpired):
        formatter.verify(token_id, now=later)
    assert formatter.verify(token_id, allow_expired=60, now=later) == token


def test_key_file_created_once_0600(tmp_path):
    path = tmp_path / "keys" / "0"
    assert tokens.create_key_file(str(path)) is True
    first = path.read_bytes()
    assert tokens.create_key_file(str(path)) is False
    assert path.read_bytes() == first
    assert path.stat().st_mode & 0o777 == 0o600
    tokens.TokenFormatter.from_file(str(path))


def test_unusable_key_file_is_a_config_error(tmp_path):
    with pytest.raises(exception.KeyFileInvalid):
        tokens.TokenFormatter.from_file(str(tmp_path / "missing"))
    bad = tmp_path / "bad"
    bad.write_text("not a key")
    with pytest.raises(exception.KeyFileInvalid):
        tokens.TokenFormatter.from_file(str(bad))


def test_password_hashes_are_salted():
    one, two = passwords.hash_password("s3"), passwords.hash_password("s3")
    assert one != two
    assert passwords.check_password("s3", one)
    assert not passwords.check_password("s4", one)
    assert not passwords.check_password("s3", "garbage")
    assert not passwords.check_password(None, one)


# -- ContextMiddleware, auth_strategy = keystone ----------------------------

def _app():
    seen = {}

    def inner(environ, start_response):
        seen["ctx"] = environ[wsgi.ENV_CONTEXT]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
    validator = middleware.TokenValidator(tokens.TokenFormatter(KEY),
                                          allow_expired_window=600,
                                          www_authenticate_uri="http://id")
    app = wsgi.ContextMiddleware(inner, project_re=r"^/v3/([^/]+)",
                                 auth_strategy="keystone",
                                 token_validator=validator)
    return app, seen


def _call(app, path, headers=None, method="GET"):
    environ = {"PATH_INFO": path, "REQUEST_METHOD": method}
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    result = {}

    def start_response(status, headers, exc_info=None):
        result["status"] = int(status.split()[0])
        result["headers"] = dict(headers)
    body = b"".join(app(environ, start_response))
    return result["status"], result["headers"], body


def test_valid_token_builds_the_context():
    app, seen = _app()
    token_id, _ = issue(roles=[("r1", "member"), ("r2", "reader")])
    status, headers, _ = _call(app, "/v3/p1/volumes",
                               {"X-Auth-Token": token_id})
    assert status == 200 and "x-openstack-request-id" in headers
    ctx = seen["ctx"]
    assert (ctx.user_id, ctx.project_id) == ("u1", "p1")
    assert ctx.roles == ["member", "reader"] and not ctx.is_admin
    assert ctx.auth_token == token_id and not ctx.is_service


def test_missing_bad_expired_tokens_get_keystonemiddleware_401():
    app, _ = _app()
    expired, _ = issue(lifetime=-10)
    for headers in ({}, {"X-Auth-Token": "admin:p1"},
                    {"X-Auth-Token": expired}):
        status, hdrs, body = _call(app, "/v3/p1/volumes", headers)
        assert status == 401
        assert hdrs["WWW-Authenticate"] == 'Keystone uri="http://id"'
        assert json.loads(body) == {"error": {
            "code": 401, "title": "Unauthorized",
            "message": middleware.UNAUTHORIZED_MESSAGE}}
        assert "x-openstack-request-id" in hdrs


def test_discovery_needs_no_token():
    app, seen = _app()
    for path in ("/", "/v3", "/v3/", "/v2.1"):
        assert _call(app, path)[0] == 200
        assert seen["ctx"].user_id is None
    assert _call(app, "/v3/", method="POST")[0] == 401


def test_url_project_is_checked_by_the_app_not_here():
    """The middleware keeps the token's project; whether the URL's is the
    same is the application's check once the route is known (upstream's
    Resource), for admins too: ``wsgi.url_project_mismatch``."""
    app, seen = _app()
    for roles in ([("r1", "member")], [("r0", "admin")]):
        token, _ = issue(project="p1", roles=roles)
        assert _call(app, "/v3/p2/volumes", {"X-Auth-Token": token})[0] \
            == 200
        assert seen["ctx"].project_id == "p1"
        assert wsgi.url_project_mismatch(seen["ctx"], "p2")
        assert not wsgi.url_project_mismatch(seen["ctx"], "p1")
        assert not wsgi.url_project_mismatch(seen["ctx"], None)


def test_service_token_marks_service_and_allows_expired_user_token():
    app, seen = _app()
    user, _ = issue(lifetime=-60)
    service, _ = issue(user="nova", project="service",
                       roles=[("r9", "service")])
    status, _, _ = _call(app, "/v3/p1/attachments",
                         {"X-Auth-Token": user, "X-Service-Token": service})
    assert status == 200
    ctx = seen["ctx"]
    assert ctx.is_service and ctx.service_roles == ["service"]
    assert ctx.user_id == "u1" and "service" not in ctx.roles


def test_invalid_service_token_or_non_service_role():
    app, seen = _app()
    user, _ = issue()
    assert _call(app, "/v3/p1/x", {"X-Auth-Token": user,
                                   "X-Service-Token": "junk"})[0] == 401
    other, _ = issue(user="eve", project="p1")
    assert _call(app, "/v3/p1/x", {"X-Auth-Token": user,
                                   "X-Service-Token": other})[0] == 200
    assert not seen["ctx"].is_service
    expired, _ = issue(lifetime=-60)
    # No service role: an expired user token stays refused.
    assert _call(app, "/v3/p1/x", {"X-Auth-Token": expired,
                                   "X-Service-Token": other})[0] == 401


def test_unknown_strategy_refused():
    from ministack import exception as ms_exception
    with pytest.raises(ms_exception.ConfigError):
        wsgi.ContextMiddleware(lambda e, s: [], auth_strategy="magic")


def test_keystone_without_key_file_fails_at_construction(monkeypatch,
                                                         tmp_path):
    monkeypatch.setenv(middleware.KEY_FILE_ENV, str(tmp_path / "none"))
    from ministack import exception as ms_exception
    with pytest.raises(ms_exception.ConfigError):
        wsgi.ContextMiddleware(lambda e, s: [], auth_strategy="keystone")
