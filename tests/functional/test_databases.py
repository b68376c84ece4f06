"""The "MariaDB/MySQL (PyMySQL) and PostgreSQL (psycopg) work by URL" promise.

For each backend a private, throwaway server is started
(``database_servers.py``: a temporary directory, a free port, never the
system instance), with the ``nova`` and ``cinder`` databases and a
password-authenticated ``ministack`` user, and then the real code runs
against it over TCP exactly as the daemons would with ``[database]
connection = postgresql+psycopg://...`` / ``mysql+pymysql://...``: both
alembic chains to head (twice), the models compared with the migrated
schema, and the nova and cinder data layers including their
compare-and-swap updates under a real concurrent writer. Last, a real
minicinder on each server rides out a restart of that server.

Nothing is installed here: a missing server binary skips with the Debian
package to install (``devstack/lib/packages`` installs both for CI).
"""

import os
import subprocess
import threading
import time
import uuid

import pytest
import sqlalchemy as sa
from alembic import autogenerate
from alembic.migration import MigrationContext

from minicinder import exception as cinder_exception
from minicinder.db import MIGRATIONS_DIR as CINDER_MIGRATIONS
from minicinder.db import api as cinder_api
from minicinder.db import models as cinder_models
from minicinder.db import reads as cinder_reads
from minicinder.db import session as cinder_session
from minicinder.db import types as cinder_types
from minicompute import exception as nova_exception
from ministack import context
from ministack import db
from minicompute.db import MIGRATIONS_DIR as NOVA_MIGRATIONS
from minicompute.db import api as nova_api
from minicompute.db import models as nova_models
from tests.functional import daemons
from tests.functional import private_stack
from tests.functional.database_servers import mariadb_urls  # noqa: F401
from tests.functional.database_servers import postgresql_urls  # noqa: F401
from tests.functional.database_servers import sqlite_urls  # noqa: F401
from tests.functional.minicompute import journey


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


# --- per-backend fixtures ------------------------------------------------


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


def _ctx(project_id, **kwargs):
    return context.RequestContext(
        user_id="u-" + project_id, project_id=project_id,
        request_id="req-" + str(uuid.uuid4()), **kwargs)


# --- migrations ---------------------------------------------------------


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


# --- nova data layer ----------------------------------------------------


def test_nova_data_layer(backend):
    nova_api.configure(backend["engines"]["nova"])
    project = "p-" + uuid.uuid4().hex[:8]
    ctxt = _ctx(project)
    host = "host-" + uuid.uuid4().hex[:6]

    # Heartbeats: `binary` is a reserved word on MySQL (quoted by SA).
    nova_api.service_heartbeat(ctxt, host, "nova-compute", "compute")
    service = nova_api.service_heartbeat(ctxt, host, "nova-compute",
                                         "compute")
    assert service.report_count == 2
    fetched = nova_api.service_get_by_host_and_binary(ctxt, host,
                                                      "nova-compute")
    assert fetched.report_count == 2 and nova_api.service_is_up(fetched)

    flavorid = uuid.uuid4().hex[:8]
    nova_api.flavor_create(ctxt, {"flavorid": flavorid, "name": flavorid,
                                  "memory_mb": 128, "vcpus": 1,
                                  "root_gb": 1})
    assert flavorid in [f.flavorid for f in nova_api.flavor_get_all(ctxt)]

    instance = nova_api.instance_create(ctxt, {
        "display_name": "vm1", "host": host, "vm_state": "active",
        "task_state": None, "power_state": 1})
    assert instance.id and instance.deleted == 0
    assert instance.name == "instance-%08x" % instance.id
    other = _ctx("p-other")
    with pytest.raises(nova_exception.InstanceNotFound):
        nova_api.instance_get(other, instance.uuid)

    # Compare-and-swap on task_state: the first wins, the second loses.
    nova_api.instance_update(ctxt, instance.uuid,
                             {"task_state": "attaching"},
                             expected_task_state=[None])
    with pytest.raises(nova_exception.UnexpectedTaskStateError):
        nova_api.instance_update(ctxt, instance.uuid,
                                 {"task_state": "attaching"},
                                 expected_task_state=[None])
    assert nova_api.instance_get(ctxt, instance.uuid).task_state == \
        "attaching"

    volume_id = str(uuid.uuid4())
    bdm = nova_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "volume_id": volume_id,
        "source_type": "volume", "destination_type": "volume",
        "device_name": "/dev/vdb", "delete_on_termination": False})
    bdm = nova_api.bdm_update(ctxt, bdm.id, {
        "attachment_id": str(uuid.uuid4()),
        "connection_info": {"driver_volume_type": "iscsi",
                            "data": {"target_lun": 1}}})
    assert '"target_lun": 1' in bdm.connection_info
    assert nova_api.bdm_get_by_volume_and_instance(
        ctxt, volume_id, instance.uuid).id == bdm.id
    nova_api.bdm_destroy(ctxt, bdm.id)
    with pytest.raises(nova_exception.BDMNotFound):
        nova_api.bdm_get(ctxt, bdm.id)
    nova_api.bdm_destroy(ctxt, bdm.id)  # already gone: not an error
    # Soft delete keeps the row (deleted = id) and frees the slot.
    again = nova_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                                       "volume_id": volume_id,
                                       "device_name": "/dev/vdb"})
    assert [b.id for b in nova_api.bdm_get_by_volume(ctxt, volume_id)] == \
        [again.id]
    with db.session_scope(db.make_sessionmaker(
            backend["engines"]["nova"])) as session:
        old = session.get(nova_models.BlockDeviceMapping, bdm.id)
        assert old.deleted == bdm.id and old.deleted_at is not None

    action = nova_api.action_start(ctxt, instance.uuid, "attach_volume")
    nova_api.action_event_start(ctxt, instance.uuid,
                                "compute_attach_volume", host)
    event = nova_api.action_event_finish(ctxt, instance.uuid,
                                         "compute_attach_volume", host,
                                         result="Error",
                                         traceback="Traceback...")
    assert event.finish_time is not None
    found = nova_api.action_get_by_request_id(ctxt, instance.uuid,
                                              ctxt.request_id)
    assert found.id == action.id and found.message == "Error"
    events = nova_api.action_events_get(ctxt, action.id)
    assert [(e.event, e.result) for e in events] == \
        [("compute_attach_volume", "Error")]

    nova_api.instance_destroy(ctxt, instance.uuid)
    with pytest.raises(nova_exception.InstanceNotFound):
        nova_api.instance_get(ctxt, instance.uuid)


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


# --- cinder data layer --------------------------------------------------


def test_cinder_data_layer(backend):
    database = cinder_session.Database(backend["urls"]["cinder"])
    try:
        _exercise_cinder(database)
    finally:
        database.dispose()


def _exercise_cinder(database):
    project = "p-" + uuid.uuid4().hex[:8]
    ctx = _ctx(project)
    volume_id = str(uuid.uuid4())
    with database.write() as session:
        vtype = cinder_types.volume_type_create(
            session, {"id": str(uuid.uuid4()),
                      "name": "lvm-" + uuid.uuid4().hex[:6]},
            {"volume_backend_name": "lvmdriver-1"})
        cinder_api.volume_create(session, {
            "id": volume_id, "project_id": project, "user_id": ctx.user_id,
            "size": 1, "status": "creating", "attach_status": "detached",
            "display_name": "v1", "volume_type_id": vtype.id,
            "host": "h@lvmdriver-1#lvmdriver-1"}, metadata={"k": "v"})
    with database.read() as session:
        assert cinder_types.volume_type_in_use(session, vtype.id)

    # CAS that succeeds, then one that fails (status no longer creating).
    with database.write() as session:
        volume = cinder_api.volume_get(session, ctx, volume_id,
                                       for_update=True)
        assert cinder_api.volume_transition(session, volume, "create_done")
    with database.write() as session:
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert volume.status == "available"
        assert not cinder_api.volume_transition(session, volume,
                                                "create_failed")
    with database.read() as session:
        assert cinder_api.volume_get(session, ctx, volume_id).status == \
            "available"

    # Attachment: reserve, connect, complete, then delete (detach).
    attachment_id = str(uuid.uuid4())
    with database.write() as session:
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert cinder_api.volume_transition(session, volume, "reserve")
        cinder_api.attachment_create(session, {
            "id": attachment_id, "volume_id": volume_id,
            "instance_uuid": str(uuid.uuid4()), "attach_status": "reserved",
            "attach_mode": "rw"})
    with database.write() as session:
        assert cinder_api.attachment_transition(
            session, attachment_id, "connect",
            {"connector": cinder_api.dump_json({"initiator": "iqn.x"}),
             "attached_host": "compute1"})
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert cinder_api.volume_transition(session, volume, "connect")
        assert cinder_api.attachment_transition(session, attachment_id,
                                                "complete")
        assert cinder_api.volume_transition(session, volume, "complete")
        # connect after attached is not in the table: the CAS refuses.
        assert not cinder_api.attachment_transition(session, attachment_id,
                                                    "connect")
    with database.read() as session:
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert (volume.status, volume.attach_status) == ("in-use",
                                                         "attached")
        assert [a.id for a in volume.volume_attachment] == [attachment_id]
        assert {m.key: m.value for m in volume.volume_metadata} == \
            {"k": "v"}
        listed = cinder_api.attachment_get_all(session, ctx,
                                               {"volume_id": volume_id})
        assert [a.id for a in listed] == [attachment_id]
        assert [v.id for v in cinder_api.volume_get_all(
            session, ctx, {"status": "in-use"})] == [volume_id]
    with database.read_connection() as conn:
        record = cinder_reads.volume_get(conn, ctx, volume_id)
        assert record.status == "in-use"
        assert [a.id for a in record.volume_attachment] == [attachment_id]
        with pytest.raises(cinder_exception.VolumeNotFound):
            cinder_reads.volume_get(conn, _ctx("p-other"), volume_id)

    with database.write() as session:
        assert cinder_api.volume_detached(session, volume_id,
                                          attachment_id) == "available"
    with database.read() as session:
        with pytest.raises(cinder_exception.VolumeAttachmentNotFound):
            cinder_api.attachment_get(session, ctx, attachment_id)
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert (volume.status, volume.attach_status) == ("available",
                                                         "detached")
        assert volume.volume_attachment == []

    _racing_cas(database, ctx, volume_id)

    with database.write() as session:
        cinder_api.volume_soft_delete(session, volume_id)
    with database.read() as session:
        with pytest.raises(cinder_exception.VolumeNotFound):
            cinder_api.volume_get(session, ctx, volume_id)


def _racing_cas(database, ctx, volume_id):
    """Two writers race the same transition: the second waits for the
    first to commit, and its compare-and-swap then no longer matches."""
    loser = {}
    started = threading.Event()

    def _second_writer():
        # SQLite serialises writers at BEGIN IMMEDIATE, the servers at the
        # row lock taken by the first UPDATE: either way this one waits.
        started.set()
        with database.write() as session:
            volume = cinder_api.volume_get(session, ctx, volume_id)
            loser["won"] = cinder_api.volume_transition(session, volume,
                                                        "reserve")

    with database.write() as session:
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert cinder_api.volume_transition(session, volume, "reserve")
        thread = threading.Thread(target=_second_writer, daemon=True)
        thread.start()
        assert started.wait(10)
        time.sleep(0.5)
        assert "won" not in loser, "second writer was not blocked"
    thread.join(30)
    assert loser == {"won": False}
    with database.write() as session:
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert volume.status == "reserved"
        cinder_api.volume_update(session, volume_id,
                                 {"status": "available"})


# --- a database restart under a running daemon -----------------------------


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_minicinder_rides_out_a_database_restart(kind, request, tmp_path):
    """The server goes away with every pooled connection; the daemon's
    next requests reconnect (``pool_pre_ping``) and nothing written
    before the restart is lost."""
    private_stack.skip_unless_lab()     # minicinder needs the lab's VG
    urls = request.getfixturevalue(kind + "_urls")
    daemon = daemons.start_daemon(
        "minicinder", {
            "DEFAULT": {"host": "dbrestart-%s" % uuid.uuid4().hex[:8],
                        "state_path": str(tmp_path), "my_ip": "127.0.0.1",
                        "osapi_volume_listen": "127.0.0.1",
                        "volume_group": private_stack.VG},
            "database": {"connection": urls["cinder"]}},
        tmp_path, ready=daemons.http_ready("/"),
        port_option=("DEFAULT", "osapi_volume_listen_port"))
    request.addfinalizer(daemon.stop)
    cinder = journey.Cinder(daemon.url)
    before = cinder.create_type(journey.unique("before-%s" % kind))
    urls["restart"]()
    after = cinder.create_type(journey.unique("after-%s" % kind))
    resp = cinder._req("GET", "/types")
    assert resp.status_code == 200, resp.text
    ids = {t["id"] for t in resp.json()["volume_types"]}
    assert {before, after} <= ids
    for type_id in (before, after):
        cinder.delete_type(type_id)
    assert daemon.alive()
