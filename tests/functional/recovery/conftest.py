"""The recovery tier's fixtures: a real stack tuned for fault tests
(``tests/support/fault_stack.py`` says how), one guest, volumes.

One guest for the whole module (2 cores): every test leaves it with only
its root disk. ``audit_clean`` runs ``ministack-audit --json`` on this
stack's configs and checks that nothing of ours leaked.
"""

import pytest

from tests.support import private_stack
from tests.support.fault_stack import fault_stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    private_stack.skip_unless_lab()
    with fault_stack(tmp_path_factory.mktemp("recovery"), "rc") as made:
        yield made


@pytest.fixture(scope="module")
def guest(stack):
    """One ACTIVE server on our compute host, deleted at module end."""
    with private_stack.servers(stack["nova"], stack["image"]["id"],
                               stack["tag"], 1) as [sid]:
        yield sid


@pytest.fixture
def volumes(stack):
    """Factory of volumes force-removed after the test."""
    with private_stack.volume_factory(stack["cinder_api"]) as make:
        yield make
