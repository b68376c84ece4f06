"""Fixtures of the security tier: attacks on the deployed lab.

Every test here plays an attacker against the real daemons that
``devstack/stack.sh`` deployed (described by the tempest-style suite's
``/etc/ministack/tempest.conf``): the demo user (a member of project
``demo``) attacks what belongs to the admin project, or a local user
without privileges reads files. The REST clients are the tempest-style
suite's raw ones, so a test can send any body, header or microversion.

Every resource a test creates is registered for deletion right away
(``cleanup``, LIFO, run even when the test fails).
"""

import pytest

from tests.tempest_style import auth
from tests.tempest_style import clients
from tests.tempest_style import config as suite_config
from tests.tempest_style.conftest import Cleanups


@pytest.fixture(scope="session")
def conf():
    return suite_config.load()


@pytest.fixture(scope="session")
def demo_session(conf):
    """The attacker: a member of project demo."""
    return auth.authenticate(conf, conf.user)


@pytest.fixture(scope="session")
def admin_session(conf):
    """The victim's side: the admin project's admin."""
    return auth.authenticate(conf, conf.admin, admin=True)


@pytest.fixture(scope="session")
def demo_volumes(demo_session):
    return clients.VolumeClient(demo_session.volume_endpoint,
                                demo_session.token)


@pytest.fixture(scope="session")
def demo_compute(demo_session):
    return clients.ComputeClient(demo_session.compute_endpoint,
                                 demo_session.token)


@pytest.fixture(scope="session")
def admin_volumes(admin_session):
    return clients.VolumeClient(admin_session.volume_endpoint,
                                admin_session.token)


@pytest.fixture(scope="session")
def admin_compute(admin_session):
    return clients.ComputeClient(admin_session.compute_endpoint,
                                 admin_session.token)


@pytest.fixture
def cleanup():
    stack = Cleanups()
    yield stack
    stack.run()
