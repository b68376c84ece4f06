"""Fixtures of the minicompute unit tests: the nova DB, contexts, and the
compute manager's stack (a ComputeService over fake:/ RPC with the fake
driver and the fake Cinder of ``tests.support.fake_cinder``, and one
ACTIVE server on it) that the manager, reboot/console, fault and
reconciler tests share."""

from oslo_config import cfg
import oslo_messaging as messaging
import pytest

from minicompute import conf as compute_conf
from minicompute import rpcapi
from minicompute import service
from minicompute.db import api as db_api
from minicompute.db import models
from minicompute.virt import fake
from ministack import config
from ministack import context
from ministack import db
from ministack import rpc
from tests.support import fake_cinder
from tests.support import rpc as rpc_support


@pytest.fixture
def nova_db(tmp_path):
    """A fresh nova database wired into minicompute.db.api.

    A file, not ``:memory:``: an in-memory SQLite database is one
    connection shared by every thread (StaticPool), and the manager's RPC
    executor threads commit while the test thread reads; two transactions
    on one connection interleave ("cannot commit - no transaction is
    active", a flaky failure). A file gives each thread its own
    connection, as the daemons have.
    """
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    models.Base.metadata.create_all(engine)
    db_api.configure(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def ctxt():
    return context.RequestContext(user_id="u1", project_id="p1",
                                  roles=["member"])


@pytest.fixture
def admin_ctxt():
    return context.RequestContext(user_id="admin", project_id="p1",
                                  roles=["admin"])


@pytest.fixture
def instance(nova_db, ctxt):
    return db_api.instance_create(ctxt, {
        "display_name": "vm1", "host": "h1", "vm_state": "active",
        "task_state": None, "root_device_name": "/dev/vda"})


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    compute_conf.register_opts(conf)
    conf([], project="minicompute")
    conf.set_override("host", "h1")
    return conf


@pytest.fixture
def stack(conf, nova_db):
    """``(service, client, driver, volume_api)``: the manager served on
    fake:/ as host h1; ``client`` is the real ComputeAPI whose casts are
    sent as calls, so each returns once the manager has handled it."""
    transport = messaging.get_rpc_transport(
        conf, url="fake:/", allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    driver = fake.FakeDriver()
    volume_api = fake_cinder.FakeCinder()
    svc = service.ComputeService(conf, transport, driver, volume_api)
    svc.start()
    client = rpc_support.cast_as_call(rpcapi.ComputeAPI(transport,
                                                        timeout=10))
    yield svc, client, driver, volume_api
    svc.stop()
    transport.cleanup()


@pytest.fixture
def server(ctxt, stack):
    """One server built by the manager on the stack: ACTIVE."""
    svc, client, driver, _ = stack
    inst = db_api.instance_create(ctxt, {
        "display_name": "vm", "host": "h1", "vm_state": "building",
        "memory_mb": 128, "vcpus": 1})
    db_api.action_start(ctxt, inst.uuid, "create")
    svc.manager.build_and_run_instance(
        ctxt, db_api.to_dict(inst), {"id": "img"},
        {"memory_mb": 128, "vcpus": 1})
    return db_api.to_dict(db_api.instance_get(ctxt, inst.uuid))
