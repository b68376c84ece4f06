"""The real miniapi daemon (and minicinder) as subprocesses.

miniapi runs from its console script with a generated config, its own
SQLite nova DB in the test's temp dir, a free port, and the real RabbitMQ
broker (``tests/support/miniapi_daemon.py``). No compute host heartbeats
into that DB, so every server these tests create is scheduled nowhere (ERROR,
"No valid host"), and every server marked ACTIVE by a test is on a host
that is down: exactly the API-only paths, including 409 for a down
compute service. The attach journey through live guests is the compute
engineer's suite (tests/functional/minicompute), which drives this API.

minicinder, when used, runs with its ``fake`` volume driver: these tests
exercise miniapi <-> minicinder REST (volume lookup, project isolation,
reservation and its rollback), not the storage backend.
"""

import pytest

from tests.support.miniapi_daemon import Raw
from tests.support.miniapi_daemon import broker_up
from tests.support.miniapi_daemon import start_api


@pytest.fixture(scope="module")
def api_daemon(tmp_path_factory):
    if not broker_up():
        pytest.skip("RabbitMQ (devstack/stack.sh) is not running")
    daemon = start_api(tmp_path_factory.mktemp("miniapi"))
    yield daemon
    daemon.stop()


@pytest.fixture
def raw(api_daemon):
    return Raw(api_daemon.url)
