"""Migration 0006 (access IPs, ``instance_metadata``) and the data
access of a server's metadata."""

from alembic import autogenerate
from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
import pytest
import sqlalchemy as sa

from minicompute import exception
from minicompute.db import MIGRATIONS_DIR
from minicompute.db import api as db_api
from minicompute.db import models
from ministack import db


def _downgrade(engine, revision):
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_DIR)
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, revision)


def _instance_columns(engine):
    return {c["name"] for c in sa.inspect(engine).get_columns("instances")}


def test_migration_matches_the_models_up_and_down(tmp_path):
    """0005 -> 0006 adds the two columns and the table, 0007 the
    migration records; the migrated schema is the models' (autogenerate's
    comparison); the downgrade takes them away again."""
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    try:
        db.upgrade(engine, MIGRATIONS_DIR, "0005_compute_nodes")
        tables = set(sa.inspect(engine).get_table_names())
        columns = _instance_columns(engine)
        db.upgrade(engine, MIGRATIONS_DIR, "0006_server_metadata")
        assert set(sa.inspect(engine).get_table_names()) == \
            tables | {"instance_metadata"}
        assert _instance_columns(engine) == \
            columns | {"access_ip_v4", "access_ip_v6"}
        db.upgrade(engine, MIGRATIONS_DIR)
        assert set(sa.inspect(engine).get_table_names()) == \
            tables | {"instance_metadata", "migrations"}
        with engine.connect() as conn:
            diff = autogenerate.compare_metadata(
                MigrationContext.configure(conn), models.Base.metadata)
        assert diff == [], diff
        _downgrade(engine, "0005_compute_nodes")
        assert set(sa.inspect(engine).get_table_names()) == tables
        assert _instance_columns(engine) == columns
    finally:
        engine.dispose()


def _server(ctxt):
    return db_api.instance_create(ctxt, {"display_name": "vm",
                                         "vm_state": "active"}).uuid


def test_merge_replace_and_delete(nova_db, admin_ctxt):
    uuid = _server(admin_ctxt)
    assert db_api.instance_metadata_get(admin_ctxt, uuid) == {}
    assert db_api.instance_metadata_update(
        admin_ctxt, uuid, {"a": "1", "b": "2"}) == {"a": "1", "b": "2"}
    assert db_api.instance_metadata_update(
        admin_ctxt, uuid, {"b": "3", "c": "4"}) == \
        {"a": "1", "b": "3", "c": "4"}
    assert db_api.instance_metadata_update(
        admin_ctxt, uuid, {"c": "5"}, delete=True) == {"c": "5"}
    db_api.instance_metadata_delete(admin_ctxt, uuid, "c")
    assert db_api.instance_metadata_get(admin_ctxt, uuid) == {}
    with pytest.raises(exception.MetadataItemNotFound):
        db_api.instance_metadata_delete(admin_ctxt, uuid, "c")
    # a deleted key may be set again
    assert db_api.instance_metadata_update(admin_ctxt, uuid,
                                           {"c": "6"}) == {"c": "6"}


def test_servers_do_not_share_items(nova_db, admin_ctxt):
    one, two = _server(admin_ctxt), _server(admin_ctxt)
    db_api.instance_metadata_update(admin_ctxt, one, {"k": "1"})
    db_api.instance_metadata_update(admin_ctxt, two, {"k": "2"})
    db_api.instance_destroy(admin_ctxt, one)
    assert db_api.instance_metadata_get(admin_ctxt, one) == {}
    assert db_api.instance_metadata_get(admin_ctxt, two) == {"k": "2"}


def test_keys_differing_in_case_are_two_items(nova_db, admin_ctxt):
    """As upstream (a case-sensitive dict); the delete takes the exact
    key whatever the database's collation."""
    uuid = _server(admin_ctxt)
    db_api.instance_metadata_update(admin_ctxt, uuid, {"k": "1", "K": "2"})
    db_api.instance_metadata_delete(admin_ctxt, uuid, "K")
    assert db_api.instance_metadata_get(admin_ctxt, uuid) == {"k": "1"}
