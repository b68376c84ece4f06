"""``auth_strategy = keystone``: keystonemiddleware's auth_token, then the
request context from the headers it set (upstream's keystonecontext).

The middleware is the real one; only its HTTP call to keystone is
answered from a table (``tests/unit/fake_keystone.py``).
"""

import json

from oslo_config import cfg
import pytest

from ministack import exception as ms_exception
from ministack import wsgi
from ministack.identity import authtoken
from tests.unit import fake_keystone


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    conf([], project="unit")
    fake_keystone.configure(conf)
    yield conf
    conf.reset()


@pytest.fixture
def keystone(monkeypatch):
    return fake_keystone.FakeKeystone(monkeypatch)


@pytest.fixture
def app(conf, keystone):
    seen = {}

    def inner(environ, start_response):
        seen["ctx"] = environ[wsgi.ENV_CONTEXT]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
    middleware = wsgi.ContextMiddleware(inner, project_re=r"^/v3/([^/]+)",
                                        auth_strategy="keystone", conf=conf)
    middleware.seen = seen
    return middleware


def _call(app, path, headers=None, method="GET"):
    environ = {"PATH_INFO": path, "REQUEST_METHOD": method,
               "SERVER_NAME": "unit", "SERVER_PORT": "80",
               "wsgi.url_scheme": "http"}
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    result = {}

    def start_response(status, headers, exc_info=None):
        result["status"] = int(status.split()[0])
        result["headers"] = dict(headers)
    body = b"".join(app(environ, start_response))
    return result["status"], result["headers"], body


def test_valid_token_builds_the_context(app, keystone):
    token = keystone.issue("u1", "p1", ["member", "reader"],
                           user_name="demo", project_name="demo")
    status, headers, _ = _call(app, "/v3/p1/volumes",
                               {"X-Auth-Token": token,
                                "X-OpenStack-Request-ID":
                                "req-11111111-2222-3333-4444-555555555555"})
    assert status == 200 and "x-openstack-request-id" in headers
    ctx = app.seen["ctx"]
    assert (ctx.user_id, ctx.project_id) == ("u1", "p1")
    assert (ctx.user_name, ctx.project_name) == ("demo", "demo")
    assert sorted(ctx.roles) == ["member", "reader"] and not ctx.is_admin
    assert ctx.auth_token == token and not ctx.is_service
    assert ctx.request_id == headers["x-openstack-request-id"]
    assert ctx.global_request_id == \
        "req-11111111-2222-3333-4444-555555555555"


def test_identity_headers_from_the_client_are_ignored(app, keystone):
    """auth_token strips X-User-Id, X-Roles, X-Service-Roles... sent by
    the client: only keystone's answer counts."""
    token = keystone.issue("u1", "p1", ["member"])
    status, _, _ = _call(app, "/v3/p1/volumes", {
        "X-Auth-Token": token, "X-Roles": "admin", "X-User-Id": "admin",
        "X-Project-Id": "p2", "X-Service-Roles": "service",
        "X-Identity-Status": "Confirmed"})
    assert status == 200
    ctx = app.seen["ctx"]
    assert (ctx.user_id, ctx.project_id, ctx.roles) == \
        ("u1", "p1", ["member"])
    assert not ctx.is_admin and not ctx.is_service


def test_missing_unknown_expired_tokens_get_keystonemiddleware_401(
        app, keystone):
    expired = keystone.issue("u1", "p1", ["member"], expires_in=-10)
    for headers in ({}, {"X-Auth-Token": "admin:p1"},
                    {"X-Auth-Token": expired},
                    {"X-User-Id": "admin", "X-Roles": "admin",
                     "X-Identity-Status": "Confirmed"}):
        status, hdrs, body = _call(app, "/v3/p1/volumes", headers)
        assert status == 401, headers
        assert hdrs["WWW-Authenticate"] == \
            'Keystone uri="%s"' % fake_keystone.WWW_AUTHENTICATE
        assert json.loads(body) == authtoken.UNAUTHORIZED_BODY
        assert "x-openstack-request-id" in hdrs


def test_discovery_needs_no_token(app, keystone):
    for path in ("/", "/v3", "/v3/", "/v2.1"):
        assert _call(app, path)[0] == 200
        assert app.seen["ctx"].user_id is None
    assert keystone.fetched == []
    assert _call(app, "/v3/", method="POST")[0] == 401
    assert _call(app, "/v3/p1")[0] == 401


def test_url_project_is_checked_by_the_app_not_here(app, keystone):
    """The middleware keeps the token's project; whether the URL's is the
    same is the application's check once the route is known (upstream's
    Resource), for admins too: ``wsgi.url_project_mismatch``."""
    for roles in (["member"], ["admin"]):
        token = keystone.issue("u1", "p1", roles)
        assert _call(app, "/v3/p2/volumes", {"X-Auth-Token": token})[0] \
            == 200
        ctx = app.seen["ctx"]
        assert ctx.project_id == "p1"
        assert wsgi.url_project_mismatch(ctx, "p2")
        assert not wsgi.url_project_mismatch(ctx, "p1")
        assert not wsgi.url_project_mismatch(ctx, None)


def test_service_token_marks_service_and_allows_expired_user_token(
        app, keystone):
    user = keystone.issue("u1", "p1", ["member"], expires_in=-60)
    service = keystone.issue("nova", "service", ["admin", "service"])
    status, _, _ = _call(app, "/v3/p1/attachments",
                         {"X-Auth-Token": user, "X-Service-Token": service})
    assert status == 200
    ctx = app.seen["ctx"]
    assert ctx.is_service and sorted(ctx.service_roles) == \
        ["admin", "service"]
    assert ctx.user_id == "u1" and "service" not in ctx.roles
    assert ctx.service_token == service


def test_service_token_without_the_service_role_is_refused(app, keystone):
    """``service_token_roles_required``: a valid token of a user without
    the service role is not a service token (401), and an invalid one
    neither."""
    user = keystone.issue("u1", "p1", ["member"])
    other = keystone.issue("eve", "p1", ["admin", "member"])
    for service in ("junk", other):
        assert _call(app, "/v3/p1/x", {"X-Auth-Token": user,
                                       "X-Service-Token": service})[0] == 401


def test_a_revoked_token_is_refused_once_the_cache_lets_go(conf, keystone):
    """A validation is trusted for ``token_cache_time`` seconds: a token
    revoked meanwhile still works until then, and is refused after
    (oslo_utils' time override moves the cache's clock)."""
    from oslo_utils import timeutils
    conf.set_override("token_cache_time", 30, group="keystone_authtoken")

    def inner(environ, start_response):
        start_response("200 OK", [])
        return [b""]
    app = wsgi.ContextMiddleware(inner, auth_strategy="keystone", conf=conf)
    token = keystone.issue("u1", "p1", ["member"])
    timeutils.set_time_override()
    try:
        assert _call(app, "/v3/p1/x", {"X-Auth-Token": token})[0] == 200
        keystone.revoke(token)
        timeutils.advance_time_seconds(29)
        assert _call(app, "/v3/p1/x", {"X-Auth-Token": token})[0] == 200
        timeutils.advance_time_seconds(2)
        assert _call(app, "/v3/p1/x", {"X-Auth-Token": token})[0] == 401
    finally:
        timeutils.clear_time_override()


def test_validations_are_cached(app, keystone):
    token = keystone.issue("u1", "p1", ["member"])
    for _ in range(3):
        assert _call(app, "/v3/p1/x", {"X-Auth-Token": token})[0] == 200
    assert keystone.fetched == [token]


def test_unknown_strategy_refused():
    with pytest.raises(ms_exception.ConfigError):
        wsgi.ContextMiddleware(lambda e, s: [], auth_strategy="magic")


def test_keystone_without_authtoken_config_fails_at_construction():
    with pytest.raises(ms_exception.ConfigError):
        wsgi.ContextMiddleware(lambda e, s: [], auth_strategy="keystone")
    bare = cfg.ConfigOpts()
    bare([], project="unit")
    with pytest.raises(ms_exception.ConfigError) as err:
        wsgi.ContextMiddleware(lambda e, s: [], auth_strategy="keystone",
                               conf=bare)
    assert "[keystone_authtoken] auth_type" in str(err.value)


def test_tokens_no_keystone_issues_get_401_without_asking_it(app, keystone):
    """A 20000-byte token passed on overflowed keystone's header limit
    and auth_token answered 503; control characters and non-ASCII the
    same. They are refused as auth_token refuses an unknown token."""
    good = keystone.issue("u1", "p1", ["member"])
    for headers in ({"X-Auth-Token": "x" * 20000},
                    {"X-Auth-Token": "x" * (authtoken.MAX_TOKEN_BYTES + 1)},
                    {"X-Auth-Token": "abc\x01def"},
                    {"X-Auth-Token": "caf\xe9"},
                    {"X-Auth-Token": "two words"},
                    {"X-Auth-Token": good, "X-Service-Token": "y" * 9000}):
        status, hdrs, body = _call(app, "/v3/p1/volumes", headers)
        assert status == 401, headers
        assert hdrs["WWW-Authenticate"] == \
            'Keystone uri="%s"' % fake_keystone.WWW_AUTHENTICATE
        assert json.loads(body) == authtoken.UNAUTHORIZED_BODY
    assert good not in keystone.fetched
    # A well-formed token at the limit still goes to keystone.
    assert authtoken.malformed_token(
        {"HTTP_X_AUTH_TOKEN": "x" * authtoken.MAX_TOKEN_BYTES}) is None
    assert _call(app, "/v3/p1/volumes", {"X-Auth-Token": good})[0] == 200
