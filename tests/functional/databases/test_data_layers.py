"""The "MariaDB/MySQL (PyMySQL) and PostgreSQL (psycopg) work by URL"
promise, the data: on each backend (``conftest.backend``) the real nova
and cinder data layers run over TCP exactly as the daemons would with
``[database] connection = postgresql+psycopg://...`` /
``mysql+pymysql://...``, including their compare-and-swap updates under a
real concurrent writer. Last, a real minicinder on each server rides out
a restart of that server.

Nothing is installed here: a missing server binary skips with the Debian
package to install (``devstack/lib/packages`` installs both for CI).
"""

import threading
import time
import uuid

import pytest

from minicinder import exception as cinder_exception
from minicinder.db import api as cinder_api
from minicinder.db import attachment_reads
from minicinder.db import session as cinder_session
from minicinder.db import types as cinder_types
from minicinder.db import volume_reads as cinder_reads
from minicompute import exception as nova_exception
from minicompute.db import api as nova_api
from minicompute.db import models as nova_models
from ministack import context
from ministack import db
from tests.support import daemons
from tests.support import journey
from tests.support import private_stack


def _ctx(project_id, **kwargs):
    return context.RequestContext(
        user_id="u-" + project_id, project_id=project_id,
        request_id="req-" + str(uuid.uuid4()), **kwargs)


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
        # reserving an in-use volume is not in the table: the CAS
        # refuses.
        assert not cinder_api.volume_transition(session, volume, "reserve")
    with database.read() as session:
        volume = cinder_api.volume_get(session, ctx, volume_id)
        assert (volume.status, volume.attach_status) == ("in-use",
                                                         "attached")
        assert [a.id for a in volume.volume_attachment] == [attachment_id]
        assert {m.key: m.value for m in volume.volume_metadata} == \
            {"k": "v"}
        listed = attachment_reads.attachment_list(
            session, ctx, {"volume_id": volume_id})
        assert [a.id for a in listed] == [attachment_id]
        assert [v.id for v in cinder_reads.volume_list(
            session.connection(), cinder_api.volume_list_select(
                session, ctx, {"status": "in-use"}))] == [volume_id]
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
            attachment_reads.attachment_get(session, ctx, attachment_id)
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
        # The subject: the second writer stays blocked while this one
        # holds the row; nothing to poll for (it must not happen).
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
    next requests reconnect (the checkout's socket check,
    ``ministack.db.watch_server_connections``) and nothing written
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
