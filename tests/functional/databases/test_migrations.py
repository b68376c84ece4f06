"""The "MariaDB/MySQL (PyMySQL) and PostgreSQL (psycopg) work by URL"
promise, the schema: on each backend (``conftest.backend``) both alembic
chains run to head twice, the models are compared with the migrated
schema, the tables of the old keystone subset are gone, and upstream
``keystone-manage db_sync`` builds keystone's own database.

Nothing is installed here: a missing server binary skips with the Debian
package to install (``devstack/lib/packages`` installs both for CI).
"""

import os
import subprocess

from alembic import autogenerate
from alembic.migration import MigrationContext
import pytest
import sqlalchemy as sa

from minicinder.db import MIGRATIONS_DIR as CINDER_MIGRATIONS
from minicinder.db import models as cinder_models
from minicompute.db import MIGRATIONS_DIR as NOVA_MIGRATIONS
from minicompute.db import models as nova_models
from ministack import db

NOVA_TABLES = {
    "services": {"host", "binary", "topic", "report_count", "deleted",
                 "last_seen_up", "forced_down"},
    "instances": {"uuid", "project_id", "vm_state", "task_state", "host",
                  "deleted"},
    "block_device_mapping": {"instance_uuid", "volume_id", "attachment_id",
                             "connection_info", "device_name", "deleted"},
    "instance_actions": {"action", "instance_uuid", "request_id",
                         "start_time", "finish_time", "message"},
    "instance_actions_events": {"event", "action_id", "result",
                                "traceback", "host", "details"},
    "flavors": {"flavorid", "name", "memory_mb", "vcpus", "disabled"},
}
# Upstream keystone's venv (devstack/lib/keystone).
KEYSTONE_VENV = os.environ.get("MINISTACK_KEYSTONE_VENV",
                               "/opt/stack/keystone-venv")
# Created by revision 0002 for the keystone subset miniapi used to serve,
# dropped by 0004 (upstream Keystone has its own database).
OLD_IDENTITY_TABLES = {"project", "user", "role", "assignment",
                       "application_credential",
                       "application_credential_role"}

CINDER_TABLES = {
    "volumes": {"id", "project_id", "status", "attach_status",
                "provider_location", "provider_auth", "volume_type_id",
                "multiattach", "deleted"},
    "volume_attachment": {"id", "volume_id", "instance_uuid", "attached_host",
                          "attach_status", "connector", "connection_info",
                          "attach_mode", "deleted"},
    "volume_types": {"id", "name", "is_public", "deleted"},
    "volume_type_extra_specs": {"key", "value", "volume_type_id"},
    "volume_metadata": {"key", "value", "volume_id"},
}


def _assert_schema(engine, migrations, expected, metadata):
    # Second run: already at head, must be a no-op, not an error.
    db.upgrade(engine, migrations)
    inspector = sa.inspect(engine)
    tables = set(inspector.get_table_names())
    assert set(expected) <= tables
    for table, columns in expected.items():
        have = {c["name"] for c in inspector.get_columns(table)}
        assert columns <= have, (table, columns - have)
    with engine.connect() as conn:
        heads = conn.execute(
            sa.text("SELECT version_num FROM alembic_version")).scalars()
        assert len(list(heads)) == 1
        # The models and the migrated schema agree on this backend: the
        # same comparison `alembic revision --autogenerate` makes.
        diff = autogenerate.compare_metadata(
            MigrationContext.configure(conn), metadata)
    assert diff == [], diff


def test_nova_migrations_to_head_twice(backend):
    _assert_schema(backend["engines"]["nova"], NOVA_MIGRATIONS,
                   NOVA_TABLES, nova_models.Base.metadata)


def test_cinder_migrations_to_head_twice(backend):
    _assert_schema(backend["engines"]["cinder"], CINDER_MIGRATIONS,
                   CINDER_TABLES, cinder_models.Base.metadata)


def test_old_identity_tables_are_dropped(backend):
    """0002 created them, 0004 dropped them, on every backend (``user``
    is a reserved word on PostgreSQL: quoted by alembic both ways)."""
    tables = set(sa.inspect(backend["engines"]["nova"]).get_table_names())
    assert not tables & OLD_IDENTITY_TABLES, tables & OLD_IDENTITY_TABLES


def test_keystone_db_sync(backend, tmp_path):
    """Upstream keystone-manage db_sync on the ``keystone`` database of
    the backend, as lib/keystone runs it (the URL, with its password, in
    a root-only config file, not in argv); twice: the second is a no-op."""
    manage = os.path.join(KEYSTONE_VENV, "bin", "keystone-manage")
    if not os.path.exists(manage):
        pytest.skip("keystone is not installed in %s (devstack/stack.sh)"
                    % KEYSTONE_VENV)
    conf = tmp_path / "keystone.conf"
    conf.write_text("[database]\nconnection = %s\n"
                    % backend["urls"]["keystone"])
    conf.chmod(0o600)
    for _ in range(2):
        proc = subprocess.run([manage, "--config-file", str(conf),
                               "db_sync"], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
    engine = sa.create_engine(backend["urls"]["keystone"])
    try:
        tables = set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert {"project", "user", "local_user", "password", "assignment",
            "revocation_event"} <= tables
