"""Fixtures of the minicompute unit tests: in-memory nova DB, contexts."""

import pytest

from ministack import context
from ministack import db
from minicompute.db import api as db_api
from minicompute.db import models


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
