"""Fixtures of the tempest-style suite: config, clients, cleanups, guests.

Every resource a test creates is registered for deletion right after it is
created (``cleanup``), and cleanups run last-in first-out even when the test
fails, as tempest's addCleanup does. ``servers`` boots two guests once per
session (tempest boots them per class; on a 2-core TCG box guests are the
expensive part) and every test leaves them as it found them: ACTIVE, with
no volume attached.

``pytest_collection_modifyitems`` refuses a suite in which a test has no
``@idempotent_id`` or shares one with another test.
"""

import os

import pytest

from tests.support.cleanups import Cleanups
from tests.tempest_style import auth
from tests.tempest_style import base
from tests.tempest_style import clients
from tests.tempest_style import config as suite_config
from tests.tempest_style import guest as guest_mod
from tests.tempest_style import waiters
from tests.tempest_style.decorators import check_idempotent_ids


def pytest_configure(config):
    config.addinivalue_line("markers",
                            "idempotent_id(uuid): a test's stable id")


def pytest_collection_modifyitems(session, config, items):
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    mine = [i for i in items if str(i.path).startswith(here)]
    problems = check_idempotent_ids(mine)
    if problems:
        raise pytest.UsageError("tempest-style suite ids:\n  "
                                + "\n  ".join(problems))


@pytest.fixture(scope="session")
def conf():
    return suite_config.load()


@pytest.fixture(scope="session")
def user_session(conf):
    """Token and endpoints of the (non-admin) test user."""
    return auth.authenticate(conf, conf.user)


@pytest.fixture(scope="session")
def admin_session(conf):
    return auth.authenticate(conf, conf.admin, admin=True)


@pytest.fixture(scope="session")
def cloud(conf, user_session, admin_session):
    """The clients (user and admin) and tempest's helpers over them.

    At the end of the session it checks that the run left no server or
    volume of its own behind (names carry the run's id), so a cleanup
    that silently failed cannot go unnoticed.
    """
    found = base.Cloud(
        conf,
        clients.ComputeClient(user_session.compute_endpoint,
                              user_session.token),
        clients.VolumeClient(user_session.volume_endpoint,
                             user_session.token),
        clients.ComputeClient(admin_session.compute_endpoint,
                              admin_session.token),
        clients.VolumeClient(admin_session.volume_endpoint,
                             admin_session.token))
    yield found
    leaks = base.leftovers(found)
    assert not leaks, "the run left resources behind: %s" % leaks


@pytest.fixture
def cleanup():
    stack = Cleanups()
    yield stack
    stack.run()


@pytest.fixture(scope="session")
def session_cleanup():
    stack = Cleanups()
    yield stack
    stack.run()


@pytest.fixture(scope="session")
def servers(cloud, session_cleanup):
    """Two ACTIVE servers of the test user, booted together once."""
    made = [cloud.create_server(session_cleanup, wait=False,
                                name="shared%d" % i) for i in range(2)]
    for server in made:
        waiters.wait_for_server_status(
            cloud.compute, server["id"], "ACTIVE",
            timeout=cloud.conf.build_timeout)
    return [s["id"] for s in made]


NO_GUEST_AGENT = ("guest checks need the guest agent and libvirt access "
                  "([validation] guest_agent = false)")


@pytest.fixture
def guest_of(cloud):
    """``guest_of(server_id)``: its :class:`guest.Guest`, agent ready, or
    None when ``[validation] guest_agent = false`` (a test then makes only
    its API checks; tests that are nothing but guest checks use
    ``requires_guest`` and skip)."""
    def get(server_id):
        if not cloud.conf.guest_agent:
            return None
        found = guest_mod.Guest(cloud.conf, cloud.admin_compute, server_id)
        found.wait_for_agent()
        return found
    return get


@pytest.fixture
def requires_guest(cloud):
    if not cloud.conf.guest_agent:
        pytest.skip(NO_GUEST_AGENT)
