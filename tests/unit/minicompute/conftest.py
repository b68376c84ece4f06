"""Fixtures of the minicompute unit tests: in-memory nova DB, contexts."""

import pytest

from ministack import context
from ministack import db
from ministack.nova_db import api as db_api
from ministack.nova_db import models


@pytest.fixture
def nova_db():
    """A fresh in-memory nova database wired into ministack.nova_db.api."""
    engine = db.make_engine("sqlite:///:memory:")
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
