"""Fixtures of the tempest-style suite: config, clients, cleanups.

Every resource a test creates is registered for deletion right after it is
created (``cleanup``), and cleanups run last-in first-out even when the test
fails, as tempest's addCleanup does.
"""

import pytest

from tests.tempest_style import auth
from tests.tempest_style import clients
from tests.tempest_style import config as suite_config


def idempotent_id(uuid):
    """Give a test a stable id, as tempest's decorators.idempotent_id does.

    The id survives renames, so results can be tracked across runs.
    """
    def decorator(func):
        func.idempotent_id = uuid
        return pytest.mark.idempotent_id(uuid)(func)
    return decorator


def pytest_configure(config):
    config.addinivalue_line("markers",
                            "idempotent_id(uuid): a test's stable id")


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
def compute(conf, user_session):
    """The compute client for the test project."""
    return clients.ComputeClient(user_session.compute_endpoint,
                                 user_session.token,
                                 conf.compute_microversion)


@pytest.fixture(scope="session")
def volumes(conf, user_session):
    """The volume client for the test project."""
    return clients.VolumeClient(user_session.volume_endpoint,
                                user_session.token,
                                conf.volume_microversion)


@pytest.fixture(scope="session")
def admin_compute(conf, admin_session):
    return clients.ComputeClient(admin_session.compute_endpoint,
                                 admin_session.token,
                                 conf.compute_microversion)


@pytest.fixture(scope="session")
def admin_volumes(conf, admin_session):
    return clients.VolumeClient(admin_session.volume_endpoint,
                                admin_session.token,
                                conf.volume_microversion)


class Cleanups:
    """A LIFO stack of cleanup callables; failures are collected, not lost."""

    def __init__(self):
        self._stack = []

    def add(self, func, *args, **kwargs):
        self._stack.append((func, args, kwargs))

    def run(self):
        errors = []
        while self._stack:
            func, args, kwargs = self._stack.pop()
            try:
                func(*args, **kwargs)
            except Exception as exc:  # keep cleaning; report at the end
                errors.append("%s%s: %s" % (func.__name__, args, exc))
        if errors:
            raise AssertionError("cleanup failed:\n" + "\n".join(errors))


@pytest.fixture
def cleanup():
    stack = Cleanups()
    yield stack
    stack.run()
