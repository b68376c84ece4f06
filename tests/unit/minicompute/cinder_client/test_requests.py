"""minicompute.volume.cinder: the Cinder requests nova sends through
python-cinderclient on one keystoneauth Session, against a real HTTP
server.

The expected requests and results are what python-cinderclient 9.10.0 at
microversion 3.44 sent and returned for the same calls (captured once,
when a hand-written client sent them instead): a cinderclient or
keystoneauth upgrade that changes them shows here.
"""

import json

from cinderclient import exceptions as cinder_exception
from keystoneauth1 import plugin as ks_plugin
from osprofiler import profiler
import pytest

from minicompute import exception
from ministack import context
from ministack import exception as ms_exception
from ministack.identity import client as identity_client
from ministack.identity import conf as identity_conf
from tests.support.cinder_server import GOT_VOLUME
from tests.support.cinder_server import nova_api

# What the old client returned for ANSWER's attachment.
GOT_ATTACHMENT = {
    "id": "a1", "status": "attached", "instance": "s1", "volume_id": "v1",
    "attached_at": None, "detached_at": None, "attach_mode": "rw",
    "connection_info": {"driver_volume_type": "iscsi",
                        "data": {"target_iqn": "iqn.x", "target_lun": 1}}}
GOT_RAW_ATTACHMENT = {
    "id": "a1", "status": "attached", "instance": "s1", "volume_id": "v1",
    "attached_at": None, "detached_at": None, "attach_mode": "rw",
    "connection_info": {"driver_volume_type": "iscsi", "target_iqn": "iqn.x",
                        "target_lun": 1, "attachment_id": "a1",
                        "attach_mode": "rw", "status": "attached",
                        "instance_uuid": "s1"}}

# Every request's headers as the old client sent them (WSGI environ
# names; Host aside), noauth, for RequestContext(user_id="u",
# project_id="p", roles=["member", "reader"], global_request_id="req-g").
NOAUTH_HEADERS = {
    "HTTP_ACCEPT": "application/json",
    "HTTP_ACCEPT_ENCODING": "gzip, deflate",
    "HTTP_CONNECTION": "keep-alive",
    "HTTP_OPENSTACK_API_VERSION": "volume 3.44",
    "HTTP_USER_AGENT": "python-cinderclient",
    "HTTP_X_AUTH_TOKEN": "u:p",
    "HTTP_X_OPENSTACK_REQUEST_ID": "req-g",
    "HTTP_X_PROJECT_ID": "p",
    "HTTP_X_ROLES": "member,reader",
    "HTTP_X_SERVICE_TOKEN": "nova",
    "HTTP_X_USER_ID": "u",
}
KEYSTONE_HEADERS = {
    "HTTP_ACCEPT": "application/json",
    "HTTP_ACCEPT_ENCODING": "gzip, deflate",
    "HTTP_CONNECTION": "keep-alive",
    "HTTP_OPENSTACK_API_VERSION": "volume 3.44",
    "HTTP_USER_AGENT": "python-cinderclient",
    "HTTP_X_AUTH_TOKEN": "user-token",
    "HTTP_X_OPENSTACK_REQUEST_ID": "req-g",
    "HTTP_X_SERVICE_TOKEN": "service-token-0",
}


# --- what each call sends ----------------------------------------------------

CALLS = [
    ("get", ("v1",), {}, "GET", "/v3/p/volumes/v1", None),
    ("get_all", (), {}, "GET", "/v3/p/volumes/detail", None),
    ("create", (1,), {"name": "n"}, "POST", "/v3/p/volumes",
     {"volume": {"size": 1, "consistencygroup_id": None,
                 "snapshot_id": None, "name": "n", "description": None,
                 "volume_type": None, "availability_zone": None,
                 "metadata": {}, "imageRef": None, "source_volid": None,
                 "backup_id": None}}),
    ("create", (2,), {"name": "n", "description": "d", "volume_type": "t",
                      "metadata": {"a": "b"}, "availability_zone": "z",
                      "snapshot_id": "s"}, "POST", "/v3/p/volumes",
     {"volume": {"size": 2, "consistencygroup_id": None,
                 "snapshot_id": "s", "name": "n", "description": "d",
                 "volume_type": "t", "availability_zone": "z",
                 "metadata": {"a": "b"}, "imageRef": None,
                 "source_volid": None, "backup_id": None}}),
    ("delete", ("v1",), {}, "DELETE", "/v3/p/volumes/v1", None),
    ("attachment_create", ("v1", "s1"), {}, "POST", "/v3/p/attachments",
     {"attachment": {"volume_uuid": "v1", "connector": None,
                     "instance_uuid": "s1"}}),
    ("attachment_create", ("v1", "s1"),
     {"connector": {"host": "h"}, "mountpoint": "/dev/vdb"}, "POST",
     "/v3/p/attachments",
     {"attachment": {"volume_uuid": "v1",
                     "connector": {"host": "h", "mountpoint": "/dev/vdb"},
                     "instance_uuid": "s1"}}),
    ("attachment_get", ("a1",), {}, "GET", "/v3/p/attachments/a1", None),
    ("attachment_list", (), {}, "GET", "/v3/p/attachments?all_tenants=1",
     None),
    ("attachment_list", (), {"instance_id": "s1", "volume_id": "v1"}, "GET",
     "/v3/p/attachments?all_tenants=1&instance_id=s1&volume_id=v1", None),
    ("attachment_update", ("a1", {"host": "h"}), {"mountpoint": "/dev/vdb"},
     "PUT", "/v3/p/attachments/a1",
     {"attachment": {"connector": {"host": "h", "mountpoint": "/dev/vdb"}}}),
    ("attachment_complete", ("a1",), {}, "POST",
     "/v3/p/attachments/a1/action", {"os-complete": None}),
    ("attachment_delete", ("a1",), {}, "DELETE", "/v3/p/attachments/a1",
     None),
    ("begin_detaching", ("v1",), {}, "POST", "/v3/p/volumes/v1/action",
     {"os-begin_detaching": None}),
    ("roll_detaching", ("v1",), {}, "POST", "/v3/p/volumes/v1/action",
     {"os-roll_detaching": None}),
    ("reset_status", ("v1", "available"), {}, "POST",
     "/v3/p/volumes/v1/action", {"os-reset_status": {"status": "available"}}),
    ("reset_status", ("v1", "available"), {"attach_status": "detached"},
     "POST", "/v3/p/volumes/v1/action",
     {"os-reset_status": {"status": "available",
                          "attach_status": "detached"}}),
    ("reserve_volume", ("v1",), {}, "POST", "/v3/p/volumes/v1/action",
     {"os-reserve": None}),
    ("unreserve_volume", ("v1",), {}, "POST", "/v3/p/volumes/v1/action",
     {"os-unreserve": None}),
    ("initialize_connection", ("v1", {"host": "h"}), {}, "POST",
     "/v3/p/volumes/v1/action",
     {"os-initialize_connection": {"connector": {"host": "h"}}}),
    ("terminate_connection", ("v1", {"host": "h"}), {}, "POST",
     "/v3/p/volumes/v1/action",
     {"os-terminate_connection": {"connector": {"host": "h"}}}),
    ("attach", ("v1", "s1", "/dev/vdb"), {}, "POST",
     "/v3/p/volumes/v1/action",
     {"os-attach": {"mountpoint": "/dev/vdb", "mode": "rw",
                    "instance_uuid": "s1"}}),
    ("detach", ("v1",), {"attachment_id": "a9"}, "POST",
     "/v3/p/volumes/v1/action", {"os-detach": {"attachment_id": "a9"}}),
]


def _expected_headers(base, method, body):
    headers = dict(base)
    if body is not None:
        headers["CONTENT_TYPE"] = "application/json"
        headers["CONTENT_LENGTH"] = str(len(json.dumps(body)))
    elif method == "DELETE":
        headers["CONTENT_LENGTH"] = "0"      # requests sent it
    return headers


@pytest.mark.parametrize("name,args,kwargs,method,path,body", CALLS,
                         ids=["%s-%d" % (c[0], i)
                              for i, c in enumerate(CALLS)])
def test_each_call_sends_what_cinderclient_sent(cinder_server, api, ctxt,
                                                name, args, kwargs, method,
                                                path, body):
    getattr(api, name)(ctxt, *args, **kwargs)
    assert cinder_server.requests == [{
        "method": method, "path": path, "body": body,
        "headers": _expected_headers(NOAUTH_HEADERS, method, body)}]


def test_detach_of_an_instance_looks_its_attachment_up(cinder_server, api,
                                                       ctxt):
    api.detach(ctxt, "v1", instance_uuid="s1")
    assert [(r["method"], r["path"], r["body"])
            for r in cinder_server.requests] == [
        ("GET", "/v3/p/volumes/v1", None),
        ("POST", "/v3/p/volumes/v1/action",
         {"os-detach": {"attachment_id": "a1"}})]


def test_host_work_without_a_project_is_nova_in_admin(cinder_server, api):
    ctxt = context.RequestContext(user_id=None, project_id=None,
                                  roles=["admin"], request_id="req-3")
    api.get(ctxt, "v1")
    assert cinder_server.last()["path"] == "/v3/admin/volumes/v1"
    assert cinder_server.last()["headers"] == dict(
        NOAUTH_HEADERS, HTTP_X_AUTH_TOKEN="nova:admin",
        HTTP_X_USER_ID="nova", HTTP_X_PROJECT_ID="admin",
        HTTP_X_ROLES="admin", HTTP_X_OPENSTACK_REQUEST_ID="req-3")


def test_the_request_id_is_the_global_one_else_the_own(cinder_server, api):
    ctxt = context.RequestContext(user_id="u", project_id="p",
                                  request_id="req-2")
    api.get(ctxt, "v1")
    headers = cinder_server.last()["headers"]
    assert headers["HTTP_X_OPENSTACK_REQUEST_ID"] == "req-2"


# --- keystone mode -----------------------------------------------------------


class StubServiceAuth(ks_plugin.BaseAuthPlugin):
    """The service account's plugin: a token that changes when it is
    invalidated, and the Session each token was asked through."""

    def __init__(self):
        super().__init__()
        self.generation = 0
        self.sessions = []

    def get_token(self, session, **kwargs):
        self.sessions.append(session)
        return "service-token-%d" % self.generation

    def get_project_id(self, session, **kwargs):
        self.sessions.append(session)
        return "svcproj"

    def invalidate(self):
        self.generation += 1
        return True


@pytest.fixture
def service_auth(monkeypatch):
    stub = StubServiceAuth()
    monkeypatch.setattr(identity_client, "_service_auth", lambda conf: stub)
    return stub


@pytest.fixture
def keystone_api(cinder_server, service_auth):
    api = nova_api(cinder_server.port, "keystone")
    identity_conf.register_opts(api.conf)
    api.conf.set_override("send_service_user_token", True, "service_user")
    return api


def test_keystone_sends_the_user_and_the_service_token(
        cinder_server, keystone_api, ctxt, service_auth):
    keystone_api.attachment_update(ctxt, "a1", {"host": "h"})
    keystone_api.get(ctxt, "v1")
    body = {"attachment": {"connector": {"host": "h"}}}
    assert cinder_server.requests[0]["headers"] == _expected_headers(
        KEYSTONE_HEADERS, "PUT", body)
    assert cinder_server.requests[1]["headers"] == KEYSTONE_HEADERS
    assert cinder_server.requests[1]["path"] == "/v3/p/volumes/v1"
    # One keystoneauth Session for every token, never one per call.
    assert len(set(map(id, service_auth.sessions))) == 1


def test_keystone_without_service_token_sends_the_user_token_alone(
        cinder_server, keystone_api, ctxt):
    keystone_api.conf.set_override("send_service_user_token", False,
                                   "service_user")
    keystone_api.get(ctxt, "v1")
    headers = dict(KEYSTONE_HEADERS)
    del headers["HTTP_X_SERVICE_TOKEN"]
    assert cinder_server.last()["headers"] == headers


def test_host_work_runs_as_the_service_account_in_its_project(
        cinder_server, keystone_api):
    """Work the host starts itself (start-up recovery, the reconciler)
    sends the service account's token as the user's and as the service
    token, as nova's cinder client does with [service_user]: Cinder then
    lets Nova delete an attachment Nova uses (a rolled-back attach)."""
    ctxt = context.RequestContext(user_id=None, project_id=None,
                                  roles=["admin"], request_id="req-3")
    keystone_api.get(ctxt, "v1")
    headers = dict(KEYSTONE_HEADERS, HTTP_X_AUTH_TOKEN="service-token-0",
                   HTTP_X_SERVICE_TOKEN="service-token-0",
                   HTTP_X_OPENSTACK_REQUEST_ID="req-3")
    assert cinder_server.last()["path"] == "/v3/svcproj/volumes/v1"
    assert cinder_server.last()["headers"] == headers


def test_a_401_renews_the_service_token_once(cinder_server, keystone_api,
                                             ctxt):
    """As keystoneauth did: the plugin invalidates its cached token and
    the request is sent once more, with the new one."""
    cinder_server.answers = [("401 Unauthorized", {"error": {
        "message": "token expired", "code": 401}})]
    assert keystone_api.get(ctxt, "v1") == GOT_VOLUME
    assert [r["headers"]["HTTP_X_SERVICE_TOKEN"]
            for r in cinder_server.requests] == ["service-token-0",
                                                 "service-token-1"]
    cinder_server.answers = [("401 Unauthorized", {"error": {
        "message": "no", "code": 401}})] * 2
    with pytest.raises(exception.CinderConnectionFailed) as err:
        keystone_api.get(ctxt, "v1")
    assert "Cinder answered 401: no" in str(err.value)
    assert len(cinder_server.requests) == 4


def test_noauth_does_not_retry_a_401(cinder_server, api, ctxt):
    cinder_server.answers = [("401 Unauthorized", {"error": {
        "message": "no", "code": 401}})]
    with pytest.raises(exception.CinderConnectionFailed):
        api.get(ctxt, "v1")
    assert len(cinder_server.requests) == 1


# --- errors ------------------------------------------------------------------


@pytest.mark.parametrize("status,raised", [
    ("400 Bad Request", ms_exception.InvalidInput),
    ("403 Forbidden", ms_exception.Forbidden),
    ("413 Request Entity Too Large", ms_exception.Forbidden),
    ("409 Conflict", ms_exception.Conflict),
    ("404 Not Found", ms_exception.NotFound),
    ("500 Internal Server Error", exception.CinderConnectionFailed),
])
def test_an_error_status_is_the_domain_error_with_cinders_message(
        cinder_server, api, ctxt, status, raised):
    cinder_server.answers = [(status, {"badRequest": {
        "message": "Cinder says no.", "code": int(status[:3])}})]
    with pytest.raises(raised) as err:
        api.attachment_list(ctxt)
    assert "Cinder says no." in str(err.value)
    if raised is exception.CinderConnectionFailed:
        assert "Cinder answered 500: Cinder says no." in str(err.value)


def test_a_404_is_the_not_found_of_the_thing_asked_about(cinder_server, api,
                                                         ctxt):
    fault = ("404 Not Found", {"itemNotFound": {
        "message": "not here", "code": 404}})
    cinder_server.answers = [fault]
    with pytest.raises(exception.VolumeNotFound) as err:
        api.get(ctxt, "v9")
    assert isinstance(err.value.__cause__, cinder_exception.NotFound)
    assert err.value.__cause__.message == "not here"
    cinder_server.answers = [fault]
    with pytest.raises(exception.VolumeAttachmentNotFound):
        api.attachment_get(ctxt, "a9")


# Ids as the API's callers may send them (the fuzz tier's DELETE
# /os-volumes/<id> with NULs): Cinder's 404, never a 500.
@pytest.mark.parametrize("volume_id", ["fuzz-\x00\x00\x00", "a b", "é☃"])
def test_an_odd_id_reaches_cinder_and_its_404_is_volume_not_found(
        cinder_server, api, ctxt, volume_id):
    cinder_server.answers = [("404 Not Found", {"itemNotFound": {
        "message": "not here", "code": 404}})]
    with pytest.raises(exception.VolumeNotFound):
        api.delete(ctxt, volume_id)
    # wsgiref hands the path over unquoted, UTF-8 bytes as latin-1.
    assert cinder_server.last()["path"] == "/v3/p/volumes/%s" % \
        volume_id.encode().decode("latin-1")


def test_retriable_errors_are_retried_on_update(cinder_server, api, ctxt):
    cinder_server.answers = [("500 Internal Server Error", {}),
                             ("503 Service Unavailable", b"down")]
    assert api.attachment_update(ctxt, "a1", {"host": "h"}) == \
        GOT_ATTACHMENT
    assert len(cinder_server.requests) == 3


# --- results -----------------------------------------------------------------


@pytest.mark.parametrize("name,args,expected", [
    ("get", ("v1",), GOT_VOLUME),
    ("get_all", (), [GOT_VOLUME]),
    ("create", (1,), GOT_VOLUME),
    ("attachment_create", ("v1", "s1"), GOT_RAW_ATTACHMENT),
    ("attachment_get", ("a1",), GOT_ATTACHMENT),
    ("attachment_update", ("a1", {"host": "h"}), GOT_ATTACHMENT),
    ("attachment_list", (), [GOT_RAW_ATTACHMENT]),
    ("initialize_connection", ("v1", {"host": "h"}),
     {"driver_volume_type": "iscsi", "data": {"a": 1}}),
    ("attachment_complete", ("a1",), None),
    ("delete", ("v1",), None),
    ("reserve_volume", ("v1",), None),
])
def test_results_are_what_the_old_client_returned(api, ctxt, name, args,
                                                  expected):
    assert getattr(api, name)(ctxt, *args) == expected


def test_list_calls_follow_the_next_pages(cinder_server, api, ctxt):
    base = "http://127.0.0.1:%d/v3/p" % cinder_server.port
    cinder_server.answers = [
        ("200 OK", {"attachments": [{"id": "a1"}], "attachments_links": [
            {"rel": "next", "href": base + "/attachments?all_tenants=1"
                                           "&marker=a1"}]}),
        ("200 OK", {"attachments": [{"id": "a2"}],
                    "attachments_links": []})]
    assert api.attachment_list(ctxt) == [{"id": "a1"}, {"id": "a2"}]
    assert [r["path"] for r in cinder_server.requests] == [
        "/v3/p/attachments?all_tenants=1",
        "/v3/p/attachments?all_tenants=1&marker=a1"]


# --- tracing -----------------------------------------------------------------


def test_trace_headers_only_inside_a_trace(cinder_server, api, ctxt):
    api.get(ctxt, "v1")
    assert "HTTP_X_TRACE_INFO" not in cinder_server.last()["headers"]
    profiler.init("unit-key")
    try:
        api.get(ctxt, "v1")
    finally:
        profiler.clean()
    headers = cinder_server.last()["headers"]
    assert headers.keys() - NOAUTH_HEADERS.keys() == {
        "HTTP_X_TRACE_INFO", "HTTP_X_TRACE_HMAC"}


# --- one session, one version check ----------------------------------------


def test_calls_share_one_session_and_its_connection(cinder_server, api,
                                                    ctxt):
    api.get(ctxt, "v1")
    session = api._get_session()
    other = context.RequestContext(user_id="w", project_id="q")
    api.attachment_update(other, "a1", {"host": "h"})
    api.attachment_complete(ctxt, "a1")
    assert api._get_session() is session
    assert len(cinder_server.requests) == 3
    # The version document's request (no keep-alive on requests.get) aside,
    # every call went over one kept-alive connection.
    assert len(cinder_server.connections) - \
        cinder_server.version_requests == 1


def test_the_microversion_is_checked_once(cinder_server, api, ctxt):
    for _ in range(3):
        api.get(ctxt, "v1")
    assert cinder_server.version_requests == 1
    assert cinder_server.requests[-1]["headers"][
        "HTTP_OPENSTACK_API_VERSION"] == "volume 3.44"


def test_a_cinder_without_3_44_is_refused(cinder_server, api, ctxt):
    cinder_server.versions = {"versions": [{
        "id": "v3.0", "status": "CURRENT", "version": "3.27",
        "min_version": "3.0"}]}
    with pytest.raises(exception.CinderAPIVersionNotAvailable):
        api.get(ctxt, "v1")
    assert cinder_server.requests == []


def test_an_unreachable_cinder_is_connection_failed_then_asked_again(ctxt):
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]      # nothing listens there
    api = nova_api(port)
    for _ in range(2):
        with pytest.raises(exception.CinderConnectionFailed):
            api.get(ctxt, "v1")
    assert api._version_checked is False


def test_a_dropped_connection_is_a_connection_failure_and_retried(
        cinder_server, api, ctxt):
    """Cinder closing the kept-alive connection under an idempotent call:
    keystoneauth's ConnectFailure, retried as a 5xx is."""
    api.get(ctxt, "v1")
    cinder_server.close_after = 1
    api.get(ctxt, "v1")            # the server closes after answering
    assert cinder_server.closed.wait(5)
    assert api.attachment_delete(ctxt, "a1") is None
    assert cinder_server.last()["method"] == "DELETE"
