"""The shared hardening in ministack.wsgi and ministack.microversion:
the body size limit (oslo.middleware's sizelimit semantics), text no
database can store, and microversions too long to convert."""

import io
import json

import pytest

from ministack import exception
from ministack import json_text
from ministack import microversion as mv
from ministack import wsgi
from ministack import wsgi_server

LIMIT = 2048


def _inner(seen):
    def app(environ, start_response):
        try:
            seen["body"] = environ["wsgi.input"].read()
        except wsgi.RequestBodyTooLarge as exc:
            seen["error"] = exc
            start_response("413 Request Entity Too Large", [])
            return [b""]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
    return app


def _call(app, body, length=True):
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/v2.1/servers",
               "wsgi.input": io.BytesIO(body)}
    if length:
        environ["CONTENT_LENGTH"] = str(len(body))
    result = {}

    def start_response(status, headers, exc_info=None):
        result["status"] = int(status.split()[0])
        result["headers"] = dict(headers)
    data = b"".join(app(environ, start_response))
    return result["status"], result["headers"], data


def test_body_at_the_limit_passes_one_byte_more_is_413_unread():
    seen = {}
    limiter = wsgi.RequestBodySizeLimiter(_inner(seen), LIMIT)
    status, _, _ = _call(limiter, b"x" * LIMIT)
    assert status == 200 and seen["body"] == b"x" * LIMIT
    seen.clear()
    status, headers, data = _call(limiter, b"x" * (LIMIT + 1))
    assert status == 413 and "body" not in seen   # refused before reading
    assert headers["Content-Type"] == "application/json"
    assert json.loads(data) == {"overLimit": {
        "code": 413, "message": "Request is too large. Larger than "
                                "max_request_body_size (2048)."}}


def test_body_of_unknown_length_is_cut_at_the_limit():
    """Chunked: no Content-Length; reading past the limit raises, and
    never more than limit + 1 bytes are asked of the stream."""
    seen = {}
    limiter = wsgi.RequestBodySizeLimiter(_inner(seen), LIMIT)
    assert _call(limiter, b"y" * LIMIT, length=False)[0] == 200
    assert seen["body"] == b"y" * LIMIT
    seen.clear()
    assert _call(limiter, b"y" * (LIMIT * 50), length=False)[0] == 413
    assert isinstance(seen["error"], wsgi.RequestBodyTooLarge)
    reader = wsgi.LimitingReader(io.BytesIO(b"z" * 10000), LIMIT)
    with pytest.raises(wsgi.RequestBodyTooLarge):
        reader.read()
    assert reader.bytes_read == LIMIT + 1
    lines = wsgi.LimitingReader(io.BytesIO(b"a\nb\n"), LIMIT)
    assert list(lines) == [b"a\n", b"b\n"]


def test_render_hook_and_huge_content_length():
    limiter = wsgi.RequestBodySizeLimiter(
        _inner({}), LIMIT, render=lambda exc: {"error": {"code": exc.code}})
    environ = {"REQUEST_METHOD": "POST", "CONTENT_LENGTH": "9" * 5000,
               "wsgi.input": io.BytesIO(b"")}
    assert isinstance(limiter.refusal(environ), wsgi.RequestBodyTooLarge)
    status, _, data = _call(limiter, b"q" * (LIMIT + 1))
    assert status == 413 and json.loads(data) == {"error": {"code": 413}}


def test_context_middleware_limits_before_auth_with_request_id():
    app = wsgi.ContextMiddleware(_inner({}), max_request_body_size=LIMIT)
    assert app.max_request_body_size == LIMIT
    status, headers, data = _call(app, b"x" * (LIMIT + 1))
    assert status == 413 and "x-openstack-request-id" in headers
    assert json.loads(data)["overLimit"]["code"] == 413
    assert _call(app, b"x" * LIMIT)[0] == 200


def test_server_body_limit_sits_above_the_apps():
    app = wsgi.ContextMiddleware(_inner({}), max_request_body_size=LIMIT)
    assert wsgi_server.server_body_limit(app) > LIMIT

    class FlaskLike:
        wsgi_app = app
    assert wsgi_server.server_body_limit(FlaskLike()) == \
        wsgi_server.server_body_limit(app)
    assert wsgi_server.server_body_limit(_inner({})) is None


@pytest.mark.parametrize("data, path", [
    ({"volume": {"name": "\ud800"}}, ["volume", "name"]),
    ({"a": [1, {"b": "ok"}, "x\x00y"]}, ["a", 2]),
    ({"server": {"metadata": {"\udfff": "v"}}}, ["server", "metadata",
                                                  "\udfff"]),
])
def test_bad_text_names_the_field(data, path):
    found_path, _, reason = json_text.bad_text(data)
    assert found_path == path
    assert "surrogate" in reason or "NUL" in reason


def test_good_text_passes():
    assert json_text.bad_text({"name": "ok é 中 \U0001f600", "n": [1, None,
                                                            True]}) is None
    assert "\\ud800" in json_text.shown("\ud800")
    assert len(json_text.shown("9" * 5000)) < 100


def test_huge_microversion_is_406_not_a_crash():
    """A 5000-digit minor is well formed and beyond every range: 406 with
    the number shortened (int() refuses more than 4300 digits)."""
    with pytest.raises(mv.VersionNotAcceptable) as err:
        mv.negotiate("3." + "1" * 5000, "3.0", "3.54")
    assert err.value.code == 406
    assert len(err.value.format_message()) < 200
    with pytest.raises(mv.VersionNotAcceptable):
        mv.negotiate("1" * 5000 + ".0", "2.1", "2.96")
    with pytest.raises(exception.Invalid) as err:
        mv.APIVersion("2." + "1" * 10)
    assert err.value.code == 400
    assert mv.APIVersion("2." + "9" * mv.MAX_DIGITS) > "2.96"


def test_non_ascii_digits_are_malformed():
    with pytest.raises(exception.Invalid):
        mv.negotiate("2.\u0661", "2.1", "2.96")
