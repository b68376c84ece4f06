"""Fixtures: the real miniapi app in-process over fake:/ RPC and SQLite.

``api`` is a small client wrapper around Flask's test client that sends
the noauth token (``user:project``) and the microversion header, and
returns (status, json, headers) (``inprocess.APIClient``).
"""

from oslo_config import cfg
import oslo_messaging as messaging
import pytest

from miniapi import app as app_mod
from miniapi import conf as api_conf
from miniapi import db_setup
from miniapi.compute import images as images_adapter
from minicompute import rpcapi
from minicompute.db import api as db_api
from minicompute.db import models
from ministack import config as ms_config
from ministack import context
from ministack import db
from ministack import rpc
from tests.support import fake_cinder
from tests.unit.miniapi import fakes
from tests.unit.miniapi.inprocess import IMAGE_ID
from tests.unit.miniapi.inprocess import APIClient
from tests.unit.miniapi.inprocess import FakeImages

HOST = "host1"
HOST2 = "host2"


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    ms_config.register_common_opts(conf)
    api_conf.register_opts(conf)
    conf([], project="miniapi")
    yield conf
    conf.reset()


@pytest.fixture
def engine():
    engine = db.make_engine("sqlite:///:memory:")
    models.Base.metadata.create_all(engine)
    db_api.configure(engine)
    db_setup.seed_default_flavors()
    yield engine
    engine.dispose()


@pytest.fixture
def admin_ctxt():
    return context.get_admin_context()


@pytest.fixture(scope="session")
def _rpc_server():
    """One fake:/ RPC server for the session (stopping one takes ~1 s)."""
    conf = cfg.ConfigOpts()
    api_conf.register_opts(conf)
    conf([], project="miniapi")
    transport = messaging.get_rpc_transport(
        conf, url="fake:/", allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    manager = fakes.FakeComputeManager(HOST)
    server = rpc.get_server(
        transport, messaging.Target(topic=rpcapi.RPC_TOPIC, server=HOST),
        [manager])
    server.start()
    manager.transport = transport
    yield manager
    server.stop()
    server.wait()
    transport.cleanup()


@pytest.fixture(scope="session")
def _rpc_server2(_rpc_server):
    """The second compute host, ``host2``, on the same fake:/ transport."""
    manager = fakes.FakeComputeManager(HOST2)
    server = rpc.get_server(
        _rpc_server.transport,
        messaging.Target(topic=rpcapi.RPC_TOPIC, server=HOST2), [manager])
    server.start()
    manager.transport = _rpc_server.transport
    yield manager
    server.stop()
    server.wait()


@pytest.fixture
def compute(engine, admin_ctxt, _rpc_server):
    """The fake compute manager on fake:/ as host1: heartbeat up and its
    node reported, as minicompute's start-up does."""
    _rpc_server.reset()
    fakes.heartbeat(HOST)
    fakes.report_node(HOST)
    yield _rpc_server
    # Before ``engine`` is disposed: no reservation may still be writing.
    assert _rpc_server.wait_idle(), "a reservation is still running"


@pytest.fixture
def compute2(compute, _rpc_server2):
    """A second compute host, host2 (after host1), up with its node."""
    _rpc_server2.reset()
    fakes.heartbeat(HOST2)
    fakes.report_node(HOST2, host_ip="192.0.2.20", vcpus=8,
                      memory_mb=16384, local_gb=200,
                      disk_available_least=150)
    yield _rpc_server2
    assert _rpc_server2.wait_idle(), "a reservation is still running"


@pytest.fixture
def volumes():
    """The fake Cinder (``tests.support.fake_cinder``) behind the API."""
    return fake_cinder.FakeCinder()


@pytest.fixture
def app(conf, engine, compute, volumes, monkeypatch):
    monkeypatch.setattr(images_adapter, "_images_module",
                        lambda: FakeImages)
    conf.set_override("rpc_call_timeout", 5)
    return app_mod.create_app(conf, transport=compute.transport,
                              engine=engine, volume_api=volumes)


@pytest.fixture
def api(app):
    return APIClient(app.test_client())


@pytest.fixture
def make_server(api, compute):
    """Create a server through the API; mark it ACTIVE as compute would."""
    def _make(name="vm1", token=None, vm_state="active"):
        status, body, _ = api.post("/v2.1/servers", {"server": {
            "name": name, "imageRef": IMAGE_ID, "flavorRef": "42",
            "networks": "none"}}, token=token)
        assert status == 202, body
        server_id = body["server"]["id"]
        db_api.instance_update(context.get_admin_context(), server_id,
                               {"vm_state": vm_state, "task_state": None,
                                "power_state": 1})
        return server_id
    return _make
