"""The database server restarted under the whole stack.

The recovery stack again, but with both databases on a private PostgreSQL
server (``database_servers.py``) instead of SQLite files. With a volume
attached, the server is restarted: every pooled connection of the three
daemons dies. Their next use of the database reconnects (the checkout
sees the closed socket: ``ministack.db.watch_server_connections``),
so the detach that follows works, a new attach and detach work, the compute
host keeps its heartbeat (still "up" for the API), and the test ends, like
every fault test, with a clean audit and nothing leaked.
"""

import datetime

import pytest
import sqlalchemy as sa

from tests.functional.recovery import checks
from tests.support import private_stack
from tests.support import waiting
from tests.support.database_servers import postgresql_urls  # noqa: F401
from tests.support.fault_stack import fault_stack

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stack(tmp_path_factory, postgresql_urls):  # noqa: F811
    """This module's stack: the recovery stack on PostgreSQL."""
    private_stack.skip_unless_lab()
    with fault_stack(tmp_path_factory.mktemp("dbrestart"), "dr",
                     databases=postgresql_urls) as made:
        yield made


def _heartbeat(stack):
    services = sa.table("services", sa.column("last_seen_up", sa.DateTime),
                        sa.column("host"), sa.column("binary"))
    with stack["probe"].engine.connect() as conn:
        return conn.execute(sa.select(services.c.last_seen_up).where(
            services.c.host == stack["host"],
            services.c.binary == "nova-compute")).scalar()


def test_postgresql_restarted_under_the_stack(stack, guest, volumes,
                                              postgresql_urls):  # noqa: F811
    cinder, probe, nova = stack["cinder_api"], stack["probe"], stack["nova"]
    assert stack["nova_db"].startswith("postgresql")
    vid = volumes("db-restart")
    checks.attach_ok(stack, guest, vid)
    restarted = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    postgresql_urls["restart"]()
    # The first requests after the restart find dead connections in every
    # daemon's pool; the checkout replaces them instead of failing.
    assert nova.detach(guest, vid).status_code == 202
    cinder.wait_status(vid, "available", timeout=60)
    waiting.wait_for("BDM gone", lambda: probe.bdm(guest, vid) is None)
    other = volumes("db-restart2")
    checks.attach_ok(stack, guest, other)
    assert nova.detach(guest, other).status_code == 202
    cinder.wait_status(other, "available", timeout=60)
    # The host's periodic heartbeat reconnected too.
    waiting.wait_for("a heartbeat after the restart",
                     lambda: (_heartbeat(stack) or restarted) > restarted,
                     timeout=30)
    checks.assert_clean(stack, guest, [vid, other])
