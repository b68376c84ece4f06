"""A Cinder stand-in for the unit tests of nova's Cinder client
(``minicompute.volume.cinder``): a real HTTP server (wsgiref in a thread)
that keeps connections alive as minicinder's server does, counts them,
answers the version document at ``/`` (counted apart), records every
other request and answers what a test queues; Cinder's default answer
and what the client returns for its volume; the fixtures the tests share
(``cinder_server``, ``api``, ``ctxt``: the caller the expected requests
were recorded for).
"""

import json
import socketserver
import threading
from wsgiref import simple_server

from oslo_config import cfg
import pytest

from minicompute.volume import cinder
from ministack import context

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

#: Cinder's version document (``GET /``), as minicinder answers it.
VERSIONS = {"versions": [{"id": "v3.0", "status": "CURRENT",
                          "version": "3.70", "min_version": "3.0"}]}

# What the client returns for ANSWER.
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
        # Counted before answering: a test that sets close_after once
        # the previous answer arrived must not close that request's
        # connection under the next one.
        cinder = self.server.cinder
        close = cinder.close_after > 0
        if close:
            cinder.close_after -= 1
        handler.run(self.server.get_app())
        if close:
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
        self.version_requests = 0
        self.versions = VERSIONS
        self.connections = []
        self.answers = []         # (status, body[, headers]), first first
        self.close_after = 0      # close the connection after N requests
        self.closed = threading.Event()

    def app(self, environ, start_response):
        if environ["PATH_INFO"] == "/":
            self.version_requests += 1
            data = json.dumps(self.versions).encode()
            start_response("200 OK", [("Content-Type", "application/json"),
                                      ("Content-Length", str(len(data)))])
            return [data]
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


def nova_api(port, strategy="noauth"):
    """nova's Cinder client, pointed at ``port`` on localhost."""
    conf = cfg.ConfigOpts()
    api = cinder.API(conf, sleep=lambda s: None)
    conf([], project="t")
    conf.set_override("endpoint_template", "http://127.0.0.1:%d/v3/"
                      "%%(project_id)s" % port, "cinder")
    conf.set_override("auth_strategy", strategy, "cinder")
    return api


@pytest.fixture
def api(cinder_server):
    return nova_api(cinder_server.port)


@pytest.fixture
def ctxt():
    return context.RequestContext(user_id="u", project_id="p",
                                  roles=["member", "reader"],
                                  auth_token="user-token",
                                  request_id="req-1",
                                  global_request_id="req-g")
