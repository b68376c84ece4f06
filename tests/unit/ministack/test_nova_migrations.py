"""Nova database migrations on a lab that ran the old ones.

Revision 0002 created the identity tables of the keystone subset miniapi
used to serve; 0004 drops them now that upstream Keystone has its own
database. A lab deployed before keeps its servers and flavors through the
upgrade, loses the old accounts (password hashes included), and the
downgrade gives the (empty) tables back.
"""

import sqlalchemy as sa

from minicompute.db import MIGRATIONS_DIR
from ministack import db

IDENTITY_TABLES = {"project", "user", "role", "assignment",
                   "application_credential", "application_credential_role"}


def _tables(engine):
    return set(sa.inspect(engine).get_table_names())


def _downgrade(engine, revision):
    from alembic import command
    from alembic.config import Config
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_DIR)
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, revision)


def test_identity_tables_dropped_with_their_rows_and_back(tmp_path):
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    try:
        db.upgrade(engine, MIGRATIONS_DIR, "0003_flavor_access_specs")
        assert IDENTITY_TABLES <= _tables(engine)
        with engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO project (id, name, domain_id, enabled) "
                "VALUES ('p1', 'demo', 'default', 1)"))
            conn.execute(sa.text(
                'INSERT INTO "user" (id, name, domain_id, password, '
                "enabled) VALUES ('u1', 'demo', 'default', 'scrypt$x', 1)"))
            conn.execute(sa.text(
                "INSERT INTO role (id, name) VALUES ('r1', 'member')"))
            conn.execute(sa.text(
                "INSERT INTO assignment (type, actor_id, target_id, role_id)"
                " VALUES ('UserProject', 'u1', 'p1', 'r1')"))
            flavors = conn.execute(sa.text(
                "SELECT count(*) FROM flavors")).scalar()
        db.upgrade(engine, MIGRATIONS_DIR)
        assert not _tables(engine) & IDENTITY_TABLES
        with engine.connect() as conn:
            assert conn.execute(sa.text(
                "SELECT count(*) FROM flavors")).scalar() == flavors
        _downgrade(engine, "0003_flavor_access_specs")
        assert IDENTITY_TABLES <= _tables(engine)
        db.upgrade(engine, MIGRATIONS_DIR)
        assert not _tables(engine) & IDENTITY_TABLES
    finally:
        engine.dispose()
