"""Live migration between two compute hosts (h1, h2) over one fake:/
transport, each a ComputeService with its own fake driver: the RPC
sequence of ``minicompute.live_migration`` and its volume bookkeeping.

While the guest moves, the volume has two attachments (the source's and
the destination's, made with h2's connector); after a success only the
destination's, on the BDM; after a failure only the source's, with the
BDM as it was."""

import json

from oslo_config import cfg
import oslo_messaging as messaging
import pytest

from minicompute import conf as compute_conf
from minicompute import exception
from minicompute import rpcapi
from minicompute import service
from minicompute.db import api as db_api
from minicompute.virt import fake
from ministack import config
from ministack import rpc
from tests.support import fake_cinder
from tests.support import rpc as rpc_support
from tests.unit.minicompute.manager_flow import api_attach


def _conf(host):
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    compute_conf.register_opts(conf)
    conf([], project="minicompute")
    conf.set_override("host", host)
    return conf


@pytest.fixture
def hosts(nova_db):
    """``(client, {host: (service, driver)}, volume_api)``."""
    conf1 = _conf("h1")
    transport = messaging.get_rpc_transport(
        conf1, url="fake:/", allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    volume_api = fake_cinder.FakeCinder()
    services = {}
    for name, conf in (("h1", conf1), ("h2", _conf("h2"))):
        driver = fake.FakeDriver()
        svc = service.ComputeService(conf, transport, driver, volume_api)
        svc.start()
        services[name] = (svc, driver)
    client = rpc_support.cast_as_call(rpcapi.ComputeAPI(transport,
                                                        timeout=20))
    yield client, services, volume_api
    for svc, _driver in services.values():
        svc.stop()
    transport.cleanup()


@pytest.fixture
def attached(ctxt, hosts):
    """An ACTIVE server on h1 with one volume attached: (server, bdm,
    volume_id)."""
    client, services, volume_api = hosts
    svc = services["h1"][0]
    inst = db_api.instance_create(ctxt, {
        "display_name": "vm", "host": "h1", "vm_state": "building",
        "memory_mb": 128, "vcpus": 1})
    db_api.action_start(ctxt, inst.uuid, "create")
    svc.manager.build_and_run_instance(
        ctxt, db_api.to_dict(inst), {"id": "img"},
        {"memory_mb": 128, "vcpus": 1})
    server = db_api.to_dict(db_api.instance_get(ctxt, inst.uuid))
    volume_id = volume_api.add_volume()
    bdm = api_attach(ctxt, client, volume_api, server, volume_id)
    assert volume_api.status(volume_id) == "in-use"
    return server, db_api.to_dict(db_api.bdm_get(ctxt, bdm["id"])), \
        volume_id


def _as_the_api(ctxt, client, server, dest="h2", block_migration=None):
    db_api.instance_update(ctxt, server["uuid"],
                           {"task_state": "migrating"})
    db_api.action_start(ctxt, server["uuid"], "live-migration")
    migration = db_api.migration_create(ctxt, {
        "instance_uuid": server["uuid"], "migration_type": "live-migration",
        "status": "accepted", "source_compute": server["host"],
        "dest_compute": dest})
    data = client.check_can_live_migrate_destination(
        ctxt, server, dest, block_migration)
    return migration, data


def test_volume_follows_the_guest(ctxt, hosts, attached):
    client, services, volume_api = hosts
    server, bdm, volume_id = attached
    migration, data = _as_the_api(ctxt, client, server)
    assert data["block_migration"] is True      # the fake has a root disk
    assert data["dest_host"] == "h2"
    client.live_migration(ctxt, server, "h2", data, migration=migration)

    row = db_api.instance_get(ctxt, server["uuid"])
    assert (row.host, row.task_state, row.vm_state) == \
        ("h2", None, "active")
    assert db_api.migration_get(ctxt, migration["id"])["status"] == \
        "completed"
    after = db_api.bdm_get(ctxt, bdm["id"])
    assert after.attachment_id != bdm["attachment_id"]
    # exactly one attachment left: the destination's, exported to h2
    assert volume_api.attachment_ids(volume_id) == [after.attachment_id]
    assert volume_api._attachments[after.attachment_id]["connector"][
        "host"] == "h2"
    assert volume_api.attachment_status(after.attachment_id) == "attached"
    assert volume_api.status(volume_id) == "in-use"
    assert json.loads(after.connection_info)["serial"] == volume_id
    # the guest and its disk moved; the source let go of its connection
    drivers = {h: d for h, (_s, d) in services.items()}
    assert server["uuid"] not in drivers["h1"].instances
    assert "vdb" in drivers["h2"].instances[server["uuid"]]["devices"]
    assert ("post_live_migration_at_source", server["uuid"],
            [volume_id]) in drivers["h1"].calls


def test_failed_pre_live_migration_leaves_the_source_as_it_was(
        ctxt, hosts, attached):
    client, services, volume_api = hosts
    server, bdm, volume_id = attached
    migration, data = _as_the_api(ctxt, client, server)
    services["h2"][1].fail_pre_live_migration = \
        exception.DestinationDiskExists(path="/x")
    client.live_migration(ctxt, server, "h2", data, migration=migration)
    _assert_rolled_back(ctxt, services, volume_api, server, bdm, volume_id,
                        migration)


def test_failed_migration_is_rolled_back(ctxt, hosts, attached):
    client, services, volume_api = hosts
    server, bdm, volume_id = attached
    migration, data = _as_the_api(ctxt, client, server)
    services["h1"][1].fail_live_migration = exception.LiveMigrationFailed(
        instance_uuid=server["uuid"], reason="the job failed")
    client.live_migration(ctxt, server, "h2", data, migration=migration)
    _assert_rolled_back(ctxt, services, volume_api, server, bdm, volume_id,
                        migration)
    # the destination disconnected with its own connection_info
    assert ("remove_volume_connection", server["uuid"], volume_id) in \
        services["h2"][1].calls


def _assert_rolled_back(ctxt, services, volume_api, server, bdm, volume_id,
                        migration):
    row = db_api.instance_get(ctxt, server["uuid"])
    assert (row.host, row.task_state, row.vm_state) == \
        ("h1", None, "active")
    assert db_api.migration_get(ctxt, migration["id"])["status"] == "failed"
    after = db_api.bdm_get(ctxt, bdm["id"])
    assert after.attachment_id == bdm["attachment_id"]
    assert after.connection_info == bdm["connection_info"]
    assert volume_api.attachment_ids(volume_id) == [bdm["attachment_id"]]
    assert volume_api.status(volume_id) == "in-use"
    assert server["uuid"] in services["h1"][1].instances


def test_precheck_refuses_the_same_host(ctxt, hosts, attached):
    client, _services, _volume_api = hosts
    server, _bdm, _volume_id = attached
    with pytest.raises(exception.UnableToMigrateToSelf):
        client.check_can_live_migrate_destination(ctxt, server, "h1")


@pytest.mark.parametrize("block_migration,local,error", [
    (False, ["vda"], exception.InvalidSharedStorage),
    (True, [], exception.InvalidLocalStorage),
])
def test_precheck_storage(ctxt, hosts, attached, block_migration, local,
                          error):
    client, services, _volume_api = hosts
    server, _bdm, _volume_id = attached
    services["h1"][1].local_disks = local
    with pytest.raises(error):
        client.check_can_live_migrate_destination(ctxt, server, "h2",
                                                  block_migration)


def test_volume_backed_auto_is_not_a_block_migration(ctxt, hosts,
                                                     attached):
    client, services, _volume_api = hosts
    server, _bdm, _volume_id = attached
    services["h1"][1].local_disks = []
    data = client.check_can_live_migrate_destination(ctxt, server, "h2")
    assert data["block_migration"] is False


def test_abort_before_the_job_cancels_it(ctxt, hosts, attached):
    client, services, volume_api = hosts
    server, bdm, volume_id = attached
    migration, data = _as_the_api(ctxt, client, server)
    db_api.migration_update(ctxt, migration["id"], {"status": "queued"})
    client.live_migration_abort(ctxt, server, migration["id"])
    client.live_migration(ctxt, server, "h2", data, migration=migration)
    row = db_api.instance_get(ctxt, server["uuid"])
    assert (row.host, row.task_state) == ("h1", None)
    assert db_api.migration_get(ctxt, migration["id"])["status"] == \
        "cancelled"
    assert not [c for c in services["h2"][1].calls
                if c[0] == "pre_live_migration"]
    assert volume_api.attachment_ids(volume_id) == [bdm["attachment_id"]]
    # a running job is aborted in the driver
    db_api.migration_update(ctxt, migration["id"], {"status": "running"})
    client.live_migration_abort(ctxt, server, migration["id"])
    assert ("live_migration_abort", server["uuid"]) in \
        services["h1"][1].calls


def test_force_complete_pauses_on_the_source(ctxt, hosts, attached):
    client, services, _volume_api = hosts
    server, _bdm, _volume_id = attached
    client.live_migration_force_complete(ctxt, server)
    assert ("live_migration_force_complete", server["uuid"]) in \
        services["h1"][1].calls
