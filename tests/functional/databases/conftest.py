"""The database backends the tests of this folder run on.

``backend``: both databases migrated to head on one backend, for each of
SQLite, PostgreSQL and MariaDB: a private, throwaway server
(``tests/support/database_servers.py``: a temporary directory, a free
port, never the system instance; one per test module), with the
``keystone``, ``nova`` and ``cinder`` databases and a
password-authenticated ``ministack`` user. A missing server binary skips
with the Debian package to install.
"""

import pytest

from minicinder.db import MIGRATIONS_DIR as CINDER_MIGRATIONS
from minicompute.db import MIGRATIONS_DIR as NOVA_MIGRATIONS
from ministack import db
from tests.support.database_servers import mariadb_urls  # noqa: F401
from tests.support.database_servers import postgresql_urls  # noqa: F401
from tests.support.database_servers import sqlite_urls  # noqa: F401


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mariadb"])
def backend(request):
    """Both databases migrated to head on one backend (engines open)."""
    urls = request.getfixturevalue(request.param + "_urls")
    engines = {}
    for name, migrations in (("nova", NOVA_MIGRATIONS),
                             ("cinder", CINDER_MIGRATIONS)):
        engine = db.make_engine(urls[name])
        request.addfinalizer(engine.dispose)
        db.upgrade(engine, migrations)
        engines[name] = engine
    return {"name": request.param, "urls": urls, "engines": engines}
