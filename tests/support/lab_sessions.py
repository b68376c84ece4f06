"""Fixtures of the tiers that attack the deployed lab (security, fuzz):
the tempest-style suite's config, an attacker's and a victim's session,
and raw REST clients for each.

The lab is the one ``devstack/stack.sh`` deployed, described by
``/etc/ministack/tempest.conf``. The demo user (a member of project
``demo``) plays the attacker; the admin project's admin owns what is
attacked. The clients are the tempest-style suite's raw ones, so a test
can send any body, header or microversion. A tier's conftest imports
these fixtures by name; ``cleanup`` is a LIFO :class:`Cleanups` run even
when the test fails.
"""

import pytest

from tests.support.cleanups import Cleanups
from tests.tempest_style import auth
from tests.tempest_style import clients
from tests.tempest_style import config as suite_config


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
