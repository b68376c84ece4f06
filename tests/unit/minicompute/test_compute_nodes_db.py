"""``compute_nodes``: migration 0005 and the data access around it."""

import pytest
import sqlalchemy as sa

from minicompute import exception
from minicompute.db import MIGRATIONS_DIR
from minicompute.db import api as db_api
from minicompute.virt import fake
from ministack import db


def _facts(**overrides):
    return dict(fake.FAKE_RESOURCES, host_ip="192.0.2.1", **overrides)


def _downgrade(engine, revision):
    from alembic import command
    from alembic.config import Config
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_DIR)
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, revision)


def test_migration_creates_the_table_the_model_describes(tmp_path):
    """0004 -> 0005 adds compute_nodes (nothing else changes); the
    downgrade drops it again. (Head against the models:
    test_server_metadata_db.py.)"""
    engine = db.make_engine("sqlite:///%s" % (tmp_path / "nova.sqlite"))
    try:
        db.upgrade(engine, MIGRATIONS_DIR, "0004_drop_identity")
        before = set(sa.inspect(engine).get_table_names())
        assert "compute_nodes" not in before
        db.upgrade(engine, MIGRATIONS_DIR, "0005_compute_nodes")
        assert set(sa.inspect(engine).get_table_names()) == \
            before | {"compute_nodes"}
        _downgrade(engine, "0004_drop_identity")
        assert set(sa.inspect(engine).get_table_names()) == before
    finally:
        engine.dispose()


def test_report_creates_then_updates_one_row(nova_db, admin_ctxt):
    db_api.service_heartbeat(admin_ctxt, "h1", "nova-compute", "compute")
    first = db_api.compute_node_report(admin_ctxt, "h1", "h1", _facts())
    again = db_api.compute_node_report(admin_ctxt, "h1", "h1",
                                       _facts(vcpus=2))
    (row,) = db_api.compute_node_get_all(admin_ctxt)
    assert row.id == first.id == again.id and row.uuid == first.uuid
    assert row.vcpus == 2 and row.host_ip == "192.0.2.1"
    assert row.service_id == db_api.service_get_by_host_and_binary(
        admin_ctxt, "h1", "nova-compute").id


def test_report_before_the_service_row_links_it_later(nova_db, admin_ctxt):
    db_api.compute_node_report(admin_ctxt, "h1", "h1", _facts())
    assert db_api.compute_node_get_all(admin_ctxt)[0].service_id is None
    db_api.service_heartbeat(admin_ctxt, "h1", "nova-compute", "compute")
    db_api.compute_node_report(admin_ctxt, "h1", "h1", _facts())
    assert db_api.compute_node_get_all(admin_ctxt)[0].service_id is not None


def test_get_by_id_or_uuid_and_filters(nova_db, admin_ctxt):
    one = db_api.compute_node_report(admin_ctxt, "h1", "h1", _facts())
    two = db_api.compute_node_report(admin_ctxt, "h2", "h2", _facts())
    assert db_api.compute_node_get(admin_ctxt, node_id=two.id).host == "h2"
    assert db_api.compute_node_get(admin_ctxt,
                                   uuid=one.uuid.upper()).host == "h1"
    assert [n.host for n in db_api.compute_node_get_all(admin_ctxt)] == \
        ["h1", "h2"]
    assert [n.host for n in db_api.compute_node_get_all(
        admin_ctxt, hypervisor_hostname="h2")] == ["h2"]
    assert db_api.compute_node_get_all(admin_ctxt, host="h1",
                                       hypervisor_hostname="h2") == []
    with pytest.raises(exception.ComputeHostNotFound):
        db_api.compute_node_get(admin_ctxt, node_id=999)
