"""In-process minicinder for unit tests: fake driver, SQLite, no threads.

``cinder`` is a small client over the real WSGI app (middleware included)
that speaks JSON and sets the microversion header, so tests read like the
HTTP traffic they check (``inprocess.py``, with the config and the fake
Nova the service is built with).
"""

import time

import pytest

from minicinder import service
from minicinder.db import session as db_session
from minicinder.volume import manager as volume_manager
from minicinder.volume.drivers import fake
from tests.support.minicinder_inprocess import CinderClient
from tests.support.minicinder_inprocess import FakeNova
from tests.support.minicinder_inprocess import make_conf


@pytest.fixture
def nova():
    return FakeNova()


@pytest.fixture
def stack(tmp_path, nova):
    """(client, driver, service) with a file-backed SQLite database and
    the fake Nova of the ``nova`` fixture (no BDMs unless a test adds
    them)."""
    conf = make_conf()
    database = db_session.Database("sqlite:///%s" % (tmp_path / "c.sqlite"))
    database.upgrade()
    driver = fake.FakeDriver()
    svc = service.CinderService(conf, database, driver,
                                executor=volume_manager.InlineExecutor(),
                                compute=nova)
    yield CinderClient(svc.app), driver, svc
    svc.stop()


@pytest.fixture
def cinder(stack):
    return stack[0]


@pytest.fixture
def driver(stack):
    return stack[1]


@pytest.fixture
def multiattach_type(cinder):
    response = cinder.post("/types", {"volume_type": {
        "name": "multiattach-%s" % time.monotonic_ns(),
        "extra_specs": {"multiattach": "<is> True"}}})
    assert response.status_code == 200, response.body
    return response.body["volume_type"]["name"]
