"""minicompute.volume.cinder_http: the Cinder requests nova sends, on
kept-alive ``http.client`` connections, against a real HTTP server.

The expected requests and results are what python-cinderclient 9.10.0 at
microversion 3.44 (on keystoneauth and requests) sent and returned for
the same calls, captured before the transport was replaced.
"""

import gzip
import json
import socket
import socketserver
import threading
import time
from wsgiref import simple_server

import pytest
from keystoneauth1 import plugin as ks_plugin
from oslo_config import cfg
from osprofiler import profiler

from minicompute import exception
from minicompute.volume import cinder
from minicompute.volume import cinder_http
from ministack import context
from ministack import exception as ms_exception
from ministack.identity import client as identity_client
from ministack.identity import conf as identity_conf

VOLUME = {"id": "v1", "status": "in-use", "name": "n", "size": 1,
          "multiattach": False, "metadata": {"k": "v"},
          "links": [{"href": "x", "rel": "self"}],
          "attachments": [{"server_id": "s1", "attachment_id": "a1",
                           "device": "/dev/vdb", "host_name": "h",
                           "id": "v1", "volume_id": "v1"}]}
ATTACHMENT = {"id": "a1", "status": "attached", "instance": "s1",
              "volume_id": "v1", "attached_at": None, "detached_at": None,
              "attach_mode": "rw",
              "connection_info": {"driver_volume_type": "iscsi",
                                  "target_iqn": "iqn.x", "target_lun": 1,
                                  "attachment_id": "a1", "attach_mode": "rw",
                                  "status": "attached",
                                  "instance_uuid": "s1"}}
#: Cinder's answer to every request unless a test says otherwise: each
#: call finds the key it reads.
ANSWER = {"volume": VOLUME, "volumes": [VOLUME], "attachment": ATTACHMENT,
          "attachments": [ATTACHMENT, {}],
          "connection_info": {"driver_volume_type": "iscsi",
                              "data": {"a": 1}}}

# What the old client returned for ANSWER.
GOT_VOLUME = {
    "id": "v1", "status": "in-use", "name": "n", "size": 1,
    "multiattach": False, "metadata": {"k": "v"},
    "links": [{"href": "x", "rel": "self"}], "display_name": "n",
    "attach_status": "attached",
    "attachments": {"s1": {"attachment_id": "a1", "mountpoint": "/dev/vdb",
                           "host_name": "h"}},
    "cinder_attachments": [{"server_id": "s1", "attachment_id": "a1",
                            "device": "/dev/vdb", "host_name": "h",
                            "id": "v1", "volume_id": "v1"}]}
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


# --- the server --------------------------------------------------------------


class _ServerHandler(simple_server.ServerHandler):
    http_version = "1.1"      # wsgiref's is 1.0: a connection per request


class _KeepAlive(simple_server.WSGIRequestHandler):
    """wsgiref's handler serving several requests per connection (as
    minicinder's server does); each connection is counted."""

    protocol_version = "HTTP/1.1"

    def handle(self):
        self.server.cinder.connections.append(self.client_address)
        self.close_connection = False
        while not self.close_connection:
            self.handle_one_request()

    def handle_one_request(self):
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline or not self.parse_request():
            self.close_connection = True
            return
        handler = _ServerHandler(self.rfile, self.wfile, self.get_stderr(),
                                 self.get_environ(), multithread=True)
        handler.request_handler = self
        handler.run(self.server.get_app())
        if self.server.cinder.close_after:
            self.server.cinder.close_after -= 1
            self.close_connection = True

    def log_message(self, *args):
        pass


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    block_on_close = False

    def shutdown_request(self, request):
        super().shutdown_request(request)
        self.cinder.closed.set()


class Cinder:
    """What the server received, and what it answers next."""

    def __init__(self):
        self.requests = []
        self.connections = []
        self.answers = []         # (status, body[, headers]), first first
        self.close_after = 0      # close the connection after N requests
        self.closed = threading.Event()

    def app(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        headers = {k: v for k, v in environ.items()
                   if k.startswith("HTTP_") and k != "HTTP_HOST"}
        if environ.get("CONTENT_LENGTH"):
            headers["CONTENT_LENGTH"] = environ["CONTENT_LENGTH"]
        if body:
            headers["CONTENT_TYPE"] = environ["CONTENT_TYPE"]
        query = environ.get("QUERY_STRING")
        self.requests.append({
            "method": environ["REQUEST_METHOD"],
            "path": environ["PATH_INFO"] + ("?" + query if query else ""),
            "headers": headers,
            "body": json.loads(body) if body else None})
        status, answer, *extra = self.answers.pop(0) if self.answers \
            else ("200 OK", ANSWER)
        data = answer if isinstance(answer, bytes) else \
            json.dumps(answer).encode()
        start_response(status, [("Content-Type", "application/json"),
                                ("Content-Length", str(len(data))),
                                ("X-OpenStack-Request-ID", "req-cinder")]
                       + (extra[0] if extra else []))
        return [data]

    def last(self):
        return self.requests[-1]


@pytest.fixture
def cinder_server():
    state = Cinder()
    server = _Server(("127.0.0.1", 0), _KeepAlive)
    server.cinder = state
    server.set_app(state.app)
    thread = threading.Thread(target=server.serve_forever,
                              kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.port = server.server_port
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _api(port, strategy="noauth"):
    conf = cfg.ConfigOpts()
    api = cinder.API(conf, sleep=lambda s: None)
    conf([], project="t")
    conf.set_override("endpoint_template", "http://127.0.0.1:%d/v3/"
                      "%%(project_id)s" % port, "cinder")
    conf.set_override("auth_strategy", strategy, "cinder")
    return api


@pytest.fixture
def api(cinder_server):
    return _api(cinder_server.port)


@pytest.fixture
def ctxt():
    return context.RequestContext(user_id="u", project_id="p",
                                  roles=["member", "reader"],
                                  auth_token="user-token",
                                  request_id="req-1",
                                  global_request_id="req-g")


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
    api = _api(cinder_server.port, "keystone")
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
    ctxt = context.RequestContext(user_id=None, project_id=None,
                                  roles=["admin"], request_id="req-3")
    keystone_api.get(ctxt, "v1")
    headers = dict(KEYSTONE_HEADERS, HTTP_X_AUTH_TOKEN="service-token-0",
                   HTTP_X_OPENSTACK_REQUEST_ID="req-3")
    del headers["HTTP_X_SERVICE_TOKEN"]
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


# --- connections -------------------------------------------------------------


def test_a_kept_alive_connection_is_reused(cinder_server, api, ctxt):
    api.get(ctxt, "v1")
    api.attachment_update(ctxt, "a1", {"host": "h"})
    api.attachment_complete(ctxt, "a1")
    worker = threading.Thread(target=api.get, args=(ctxt, "v1"))
    worker.start()
    worker.join(10)
    api.attachment_delete(ctxt, "a1")
    assert len(cinder_server.requests) == 5
    assert len(cinder_server.connections) == 1


def test_a_connection_the_server_closed_is_not_reused(cinder_server, api,
                                                      ctxt):
    cinder_server.close_after = 1
    api.get(ctxt, "v1")
    assert cinder_server.closed.wait(5)
    assert api.get(ctxt, "v1") == GOT_VOLUME
    assert len(cinder_server.connections) == 2
    api.get(ctxt, "v1")
    assert len(cinder_server.connections) == 2


def test_an_error_answer_keeps_the_connection(cinder_server, api, ctxt):
    cinder_server.answers = [("404 Not Found", {"itemNotFound": {
        "message": "Volume v9 could not be found.", "code": 404}})]
    with pytest.raises(exception.VolumeNotFound):
        api.get(ctxt, "v9")
    api.get(ctxt, "v1")
    assert len(cinder_server.connections) == 1


def test_pool_is_lifo_and_bounded():
    pool = cinder_http._Pool(size=2)
    conns = [_Idle() for _ in range(3)]
    for conn in conns:
        pool.put(("http", "h", 1), conn)
    assert conns[2].closed and pool.idle(("http", "h", 1)) == 2
    assert pool.get(("http", "h", 1)) is conns[1]
    assert pool.get(("http", "h", 1)) is conns[0]
    assert pool.get(("http", "h", 1)) is None


class _Idle:
    """An idle connection whose socket has nothing to read."""

    def __init__(self):
        self.sock, self._peer = socket.socketpair()
        self.closed = False

    def close(self):
        self.closed = True
        self.sock.close()
        self._peer.close()


def _listener():
    """A socket that accepts connections; its port's volume URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    return listener, port, "http://127.0.0.1:%d/v3/p/volumes/v1" % port


def test_a_truncated_answer_closes_the_connection():
    """A response not read to its end (the server sent less than its
    Content-Length) fails the call and its connection is not pooled."""
    listener, port, url = _listener()

    def serve():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    transport = cinder_http.Transport(environ={})
    try:
        with pytest.raises(cinder_http.CinderConnectFailure):
            transport.request("GET", url, {}, timeout=5)
    finally:
        thread.join(5)
        listener.close()
    assert transport.pool.idle(("http", "127.0.0.1", port)) == 0


def test_a_silent_server_is_a_timeout():
    listener, _port, url = _listener()
    transport = cinder_http.Transport(environ={})
    started = time.monotonic()
    try:
        with pytest.raises(cinder_http.CinderTimeout):
            transport.request("GET", url, {}, timeout=0.2)
    finally:
        listener.close()
    assert time.monotonic() - started < 5


def test_a_refused_port_is_cinder_connection_failed(ctxt):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    api = _api(port)
    with pytest.raises(exception.CinderConnectionFailed) as err:
        api.get(ctxt, "v1")
    assert isinstance(err.value.__cause__, cinder_http.CinderConnectFailure)
    with pytest.raises(exception.CinderConnectionFailed):
        api.attachment_delete(ctxt, "a1")    # retried, then given up


def test_a_gzip_answer_is_decoded(cinder_server, api, ctxt):
    """requests asked for gzip and decoded it; so does the transport."""
    cinder_server.answers = [("200 OK", gzip.compress(json.dumps(
        ANSWER).encode()), [("Content-Encoding", "gzip")])]
    assert api.get(ctxt, "v1") == GOT_VOLUME


def test_an_undecodable_answer_is_cinder_connection_failed(cinder_server,
                                                           api, ctxt):
    cinder_server.answers = [("200 OK", b"not gzip",
                              [("Content-Encoding", "gzip")])]
    with pytest.raises(exception.CinderConnectionFailed,
                       match="Cannot decode"):
        api.get(ctxt, "v1")


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
    assert isinstance(err.value.__cause__, cinder_http.CinderError)
    assert err.value.__cause__.message == "not here"
    assert err.value.__cause__.request_id == "req-cinder"
    cinder_server.answers = [fault]
    with pytest.raises(exception.VolumeAttachmentNotFound):
        api.attachment_get(ctxt, "a9")


def test_retriable_errors_are_retried_on_update(cinder_server, api, ctxt):
    cinder_server.answers = [("500 Internal Server Error", {}),
                             ("503 Service Unavailable", b"down")]
    assert api.attachment_update(ctxt, "a1", {"host": "h"}) == \
        GOT_ATTACHMENT
    assert len(cinder_server.requests) == 3


@pytest.mark.parametrize("body,message", [
    ({"itemNotFound": {"message": "m", "code": 404}}, "m"),
    ({"message": "top"}, "top"),
    ({"itemNotFound": {"code": 404}}, "n/a"),
    (["odd"], "n/a"),
    (None, "Not Found"),
])
def test_fault_message_as_cinderclient_read_it(body, message):
    assert cinder_http.fault_message(body, "Not Found") == message


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


def test_nothing_imports_cinderclient_or_requests():
    """minicompute.volume imports neither (keystoneauth, for the service
    token, still uses requests itself)."""
    import ast
    import os
    import subprocess
    import sys
    here = os.path.dirname(cinder.__file__)
    for name in sorted(os.listdir(here)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(here, name), encoding="utf-8") as source:
            tree = ast.parse(source.read())
        imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module}
        assert not imported & {"cinderclient", "requests"}, name
    code = ("import sys, minicompute.volume.cinder; "
            "print([m for m in sys.modules if m.startswith('cinderclient')])")
    out = subprocess.run([sys.executable, "-c", code], check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "[]"
