"""The per-request path of the volume API after its CPU diet (issue 16).

``create_app`` runs its three before-request steps as one hook, asks
``inspect`` once per plain function whether it is a coroutine, and builds
the access-log line only when INFO is logged. None of that may change a
byte of what a client or the log sees: these tests pin the access-log
line, the hook order (a bad microversion is refused before a foreign URL
project), the noauth service-token flag, and the remembered answers of
``ensure_sync``.
"""

import datetime
import functools
import logging
import re

import pytest
from werkzeug.test import Client

from minicinder import service
from minicinder.api import app as api_app
from minicinder.api import views
from minicinder.db import session as db_session
from minicinder.volume import manager as volume_manager
from minicinder.volume.drivers import fake
from tests.support.minicinder_inprocess import OTHER_PROJECT
from tests.support.minicinder_inprocess import PROJECT
from tests.support.minicinder_inprocess import make_conf
from tests.unit import fake_keystone

LOGGER = "minicinder.api.app"


def _access_lines(caplog):
    return [r.getMessage() for r in caplog.records
            if r.name == LOGGER and "status:" in r.getMessage()]


def _volume(cinder):
    response = cinder.post("/volumes", {"volume": {"size": 1}})
    assert response.status_code == 202, response.body
    return response.body["volume"]["id"]


def test_access_log_line_is_cinders(cinder, caplog):
    """The line upstream cinder logs, byte for byte: method, path (query
    string included, no lone ``?``), status, body length, microversion,
    seconds with four decimals."""
    volume_id = _volume(cinder)
    caplog.set_level(logging.INFO, logger=LOGGER)
    response = cinder.get("/volumes/%s" % volume_id)
    assert response.status_code == 200
    listed = cinder.get("/volumes?limit=1")
    assert listed.status_code == 200
    lines = _access_lines(caplog)
    assert len(lines) == 2, lines
    show = re.fullmatch(
        r'"GET /v3/%s/volumes/%s" status: 200 len: (\d+) '
        r'microversion: 3\.44 time: \d+\.\d{4}' % (PROJECT, volume_id),
        lines[0])
    assert show, lines[0]
    assert int(show.group(1)) == len(response.get_data())
    assert re.fullmatch(
        r'"GET /v3/%s/volumes\?limit=1" status: 200 len: %d '
        r'microversion: 3\.44 time: \d+\.\d{4}'
        % (PROJECT, len(listed.get_data())), lines[1]), lines[1]


def test_access_log_line_of_a_refusal(cinder, caplog):
    """A 406 is logged too, at the minimum version it was answered at."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    response = cinder.get("/volumes", version="3.99")
    assert response.status_code == 406
    assert response.headers["OpenStack-API-Version"] == "volume 3.0"
    lines = _access_lines(caplog)
    assert len(lines) == 1 and re.fullmatch(
        r'"GET /v3/%s/volumes" status: 406 len: %d microversion: 3\.0 '
        r'time: \d+\.\d{4}' % (PROJECT, len(response.get_data())),
        lines[0]), lines


def test_no_access_line_when_info_is_off_headers_unchanged(cinder, caplog):
    """With INFO off no line is made, and the response headers are the
    same as with it on."""
    volume_id = _volume(cinder)
    caplog.set_level(logging.INFO, logger=LOGGER)
    logged = cinder.get("/volumes/%s" % volume_id)
    caplog.clear()
    caplog.set_level(logging.WARNING, logger=LOGGER)
    quiet = cinder.get("/volumes/%s" % volume_id)
    assert _access_lines(caplog) == []
    assert quiet.get_data() == logged.get_data()
    for name in ("OpenStack-API-Version", "Vary", "Content-Type",
                 "Content-Length"):
        assert quiet.headers[name] == logged.headers[name]


@pytest.fixture
def keystone_client(tmp_path, monkeypatch):
    """The app behind keystonemiddleware (the URL's project can then
    differ from the token's), and a member token of PROJECT."""
    conf = make_conf(auth_strategy="keystone")
    fake_keystone.configure(conf)
    database = db_session.Database("sqlite:///%s" % (tmp_path / "k.sqlite"))
    database.upgrade()
    svc = service.CinderService(
        conf, database, fake.FakeDriver(),
        executor=volume_manager.InlineExecutor(), compute=None)
    keystone = fake_keystone.FakeKeystone(monkeypatch)
    yield Client(svc.app), keystone.issue("u1", PROJECT, ["member"])
    svc.stop()


def test_bad_microversion_is_refused_before_a_foreign_url_project(
        keystone_client):
    """The hook order of upstream (and of the three hooks this was):
    the microversion first, then the URL's project."""
    client, token = keystone_client
    url = "/v3/%s/volumes" % OTHER_PROJECT
    foreign = client.get(url, headers={
        "X-Auth-Token": token, "OpenStack-API-Version": "volume 3.99"})
    assert foreign.status_code == 406
    assert foreign.get_json()["notAcceptable"]["message"].startswith(
        "Version 3.99 is not supported by the API.")
    malformed = client.get(url, headers={
        "X-Auth-Token": token, "OpenStack-API-Version": "volume 3.44"})
    assert malformed.status_code == 400
    assert malformed.get_json() == {"badRequest": {
        "code": 400, "message": "Malformed request url"}}
    assert malformed.headers["OpenStack-API-Version"] == "volume 3.44"
    own = client.get("/v3/%s/volumes" % PROJECT, headers={
        "X-Auth-Token": token, "OpenStack-API-Version": "volume 3.44"})
    assert own.status_code == 200


def test_noauth_service_token_still_makes_a_service_call(stack):
    """noauth: ``X-Service-Token`` still marks the context as a service's
    (the first step of the merged hook)."""
    cinder, _driver, svc = stack
    flask_app = svc.app.application.app
    seen = []

    @flask_app.get("/v3/<project_id>/unit-is-service")
    def _probe(project_id):
        seen.append(api_app.common.context().is_service)
        return "", 204

    assert cinder.get("/unit-is-service").status_code == 204
    assert cinder.as_nova().get("/unit-is-service").status_code == 204
    assert seen == [False, True]


def test_ensure_sync_remembers_plain_functions_only(stack):
    """A plain function is its own sync version, asked once; a coroutine
    function, a partial or a bound method gets Flask's answer each time
    and is not remembered."""
    flask_app = stack[2].app.application.app
    assert isinstance(flask_app, api_app._Flask)

    def plain():
        return None

    async def coroutine():
        return None

    wrapped = []

    def fake_async_to_sync(func):
        wrapped.append(func)
        label = "sync-%d" % len(wrapped)
        return lambda: label

    flask_app.async_to_sync = fake_async_to_sync
    assert flask_app.ensure_sync(plain) is plain
    assert flask_app.ensure_sync(plain) is plain
    assert flask_app._sync_functions[plain] is plain
    first = flask_app.ensure_sync(coroutine)
    second = flask_app.ensure_sync(coroutine)
    assert (first(), second()) == ("sync-1", "sync-2")
    assert coroutine not in flask_app._sync_functions
    partial = functools.partial(plain)
    assert flask_app.ensure_sync(partial) is partial
    assert partial not in flask_app._sync_functions


def test_discovery_stays_versionless(cinder):
    response = cinder.request("GET", "/", version="3.99")
    assert response.status_code == 300
    assert response.headers["OpenStack-API-Version"] == "volume 3.0"


@pytest.mark.parametrize("value", [
    datetime.datetime(2026, 12, 2, 4, 1, 2),
    datetime.datetime(2026, 12, 2, 4, 1, 2, 5),
    datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
    datetime.datetime(999, 1, 1, 0, 0, 0, 1),
    datetime.datetime(1, 1, 1),
    datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
    datetime.date(2026, 1, 2),
])
def test_timestamp_renders_as_strftime_did(value):
    """``timestamp``'s fast path gives strftime's text exactly; what it
    cannot give (aware, dates, years below 1000) still uses strftime."""
    assert views.timestamp(value) == value.strftime("%Y-%m-%dT%H:%M:%S.%f")
    assert views.timestamp(None) is None


def test_query_without_a_query_string_and_with_one(cinder):
    """No query string: nothing to refuse; one: still checked."""
    volume_id = _volume(cinder)
    assert cinder.get("/volumes/%s" % volume_id).status_code == 200
    assert cinder.get("/volumes/%s?" % volume_id).status_code == 200
    refused = cinder.get("/volumes/%s?bogus=1" % volume_id)
    assert refused.status_code == 400
    assert refused.body["badRequest"]["message"] == (
        "Invalid input received: Invalid filters bogus are found in "
        "query options.")
