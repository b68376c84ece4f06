"""What the in-process minicinder of the unit tests is built and driven
with: its config (:func:`make_conf`), a JSON client over the real WSGI
app (:class:`CinderClient`, middleware included, microversion header
set, so tests read like the HTTP traffic they check), a host connector
and a fake Nova. The fixtures that use them are in conftest; tests that
build their own service import them from here."""

import json

from oslo_config import cfg
from werkzeug.test import Client

from minicinder import conf as cinder_conf
from minicinder import exception
from ministack import config
from tests.support import http_verbs

PROJECT = "6f70656e737461636b20726f636b7321"
OTHER_PROJECT = "0ther0project"


def make_conf(**overrides):
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    cinder_conf.register_opts(conf)
    conf([], project="minicinder")
    conf.set_override("host", "unit-host")
    conf.set_override("volume_driver", "fake")
    for key, value in overrides.items():
        conf.set_override(key, value)
    return conf


class CinderClient(http_verbs.Verbs):
    """JSON over the WSGI app, as ``project`` at microversion ``version``."""

    def __init__(self, app, project=PROJECT, version="3.44", user="admin",
                 roles=None, service_token=None):
        self.client = Client(app)
        self.project = project
        self.version = version
        self.user = user
        self.roles = roles
        self.service_token = service_token

    def as_user(self, user, project=None, roles="member"):
        other = CinderClient(self.client.application,
                             project or self.project, self.version, user,
                             roles)
        return other

    def as_nova(self):
        """The same caller, through Nova: adds ``X-Service-Token`` (noauth
        takes its presence as the service's word; OSSA-2023-003)."""
        return CinderClient(self.client.application, self.project,
                            self.version, self.user, self.roles,
                            service_token="nova")

    def request(self, method, path, body=None, version="default",
                raw=None, headers=None):
        hdrs = {"X-Auth-Token": "%s:%s" % (self.user, self.project)}
        version = self.version if version == "default" else version
        if version is not None:
            hdrs["OpenStack-API-Version"] = "volume %s" % version
        if self.roles:
            hdrs["X-Roles"] = self.roles
        if self.service_token:
            hdrs["X-Service-Token"] = self.service_token
        hdrs.update(headers or {})
        data = raw if raw is not None else (
            None if body is None else json.dumps(body))
        if data is not None:
            hdrs.setdefault("Content-Type", "application/json")
        url = path
        if not path.startswith("/v3") and path != "/":
            url = "/v3/%s%s" % (self.project, path)
        response = self.client.open(url, method=method, data=data,
                                    headers=hdrs)
        text = response.get_data(as_text=True)
        response.body = json.loads(text) if text else None
        return response

    # --- shortcuts -----------------------------------------------------------

    def create_volume(self, size=1, volume_type=None, name="vol"):
        body = {"volume": {"size": size, "name": name}}
        if volume_type:
            body["volume"]["volume_type"] = volume_type
        response = self.post("/volumes", body)
        assert response.status_code == 202, response.body
        return response.body["volume"]["id"]

    def volume(self, volume_id):
        response = self.get("/volumes/%s" % volume_id)
        assert response.status_code == 200, response.body
        return response.body["volume"]

    def reserve(self, volume_id, instance_uuid):
        response = self.post("/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": instance_uuid}})
        assert response.status_code == 200, response.body
        return response.body["attachment"]


def connector(initiator="iqn.1993-08.org.debian:01:unit", host="unit-host"):
    return {"initiator": initiator, "ip": "127.0.0.1", "platform": "x86_64",
            "host": host, "os_type": "linux", "multipath": False,
            "mountpoint": "/dev/vdb"}


class FakeNova:
    """Stands in for ``minicinder.compute.nova.API``: Nova's block device
    mappings as ``{(server, volume): attachment_id}``.

    Nova is not the thing under test here; the real HTTP adapter is tested
    in ``test_compute_nova.py`` and against the real miniapi in
    ``tests/functional/minicinder/test_nova_check.py``.
    """

    configured = True

    def __init__(self):
        self.bdms = {}
        self.down = False
        self.asked = []
        self.extended = []     # (server ids, volume id) told of
        self.reimaged = []     # (server ids, volume id) told of

    def extend_volume(self, ctxt, server_ids, volume_id):
        if self.down:
            raise exception.ComputeAPIUnavailable(
                reason="connection refused")
        self.extended.append((list(server_ids), volume_id))
        return {server: 200 for server in server_ids}

    def reimage_volume(self, ctxt, server_ids, volume_id):
        if self.down:
            raise exception.ComputeAPIUnavailable(
                reason="connection refused")
        self.reimaged.append((list(server_ids), volume_id))
        return {server: 200 for server in server_ids}

    def attach(self, server_id, volume_id, attachment_id):
        """Record a BDM, as Nova's compute API does when it attaches."""
        self.bdms[(server_id, volume_id)] = attachment_id

    def get_server_volume_attachment_id(self, ctxt, server_id, volume_id):
        self.asked.append((server_id, volume_id))
        if self.down:
            raise exception.ComputeAPIUnavailable(
                reason="connection refused")
        return self.bdms.get((server_id, volume_id))
