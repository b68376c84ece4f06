"""ministack-audit reads nova's and Cinder's ledgers through their owners'
data APIs (minicompute.db.api, minicinder.db.api) on real SQLite
databases built by each service's own schema, and the VG's loop devices
through minicinder's LVM adapter (a recording fake runs the commands);
``--fix`` changes guests through minicompute's libvirt driver."""

import json
import types

import pytest
import sqlalchemy as sa

from minicinder.db import api as cinder_db
from minicinder.db import models as cinder_models
from minicinder.db import session as cinder_session
from minicinder.volume.drivers import lvm
from minicompute import exception as nova_exception
from minicompute.db import api as nova_db
from minicompute.db import models as nova_models
from ministack import context
from ministack import db
from ministack.ledgers import snapshot
from ministack_audit import fixes
from ministack_audit import ledgers
from tests.support.fake_storage import FakeExecute

VOL_A = "11111111-1111-4111-8111-111111111111"
VOL_B = "22222222-2222-4222-8222-222222222222"
VOL_GONE = "33333333-3333-4333-8333-333333333333"


@pytest.fixture
def nova_url(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "nova.sqlite")
    engine = db.make_engine(url)
    nova_models.Base.metadata.create_all(engine)
    nova_db.configure(engine)
    yield url
    engine.dispose()


def _settings(**kw):
    return types.SimpleNamespace(name_template="instance-%08x", **kw)


def test_read_nova(nova_url):
    user = context.RequestContext(user_id="u1", project_id="p1")
    live = nova_db.instance_create(user, {"display_name": "a", "host": "h"})
    gone = nova_db.instance_create(user, {"display_name": "b", "host": "h"})
    info = {"driver_volume_type": "iscsi", "data": {"target_lun": 1}}
    wired = nova_db.bdm_create(user, {
        "instance_uuid": live.uuid, "volume_id": VOL_A,
        "device_name": "/dev/vdb", "source_type": "volume",
        "destination_type": "volume", "attachment_id": "att-a",
        "connection_info": info})
    nova_db.bdm_create(user, {  # the root disk: not a volume
        "instance_uuid": live.uuid, "source_type": "image",
        "destination_type": "local"})
    dropped = nova_db.bdm_create(user, {
        "instance_uuid": live.uuid, "volume_id": VOL_B,
        "source_type": "volume", "destination_type": "volume"})
    nova_db.bdm_destroy(user, dropped.id)
    nova_db.action_start(user, live.uuid, "attach_volume")
    nova_db.action_event_start(user, live.uuid, "compute_attach_volume", "h")
    other = context.RequestContext(user_id="u1", project_id="p1")
    nova_db.action_start(other, gone.uuid, "reboot")
    nova_db.action_event_start(other, gone.uuid, "compute_reboot_instance",
                               "h")
    nova_db.instance_destroy(user, gone.uuid)

    snap = snapshot.Snapshot()
    ledgers.read_nova(_settings(nova_db=nova_url), snap)

    assert snap.instances == {
        live.uuid: {"uuid": live.uuid, "host": "h",
                    "domain": "instance-%08x" % live.id, "deleted": False},
        gone.uuid: {"uuid": gone.uuid, "host": "h",
                    "domain": "instance-%08x" % gone.id, "deleted": True}}
    [bdm] = snap.bdms
    assert {k: v for k, v in bdm.items() if k != "updated_at"} == {
        "id": wired.id, "instance_uuid": live.uuid, "volume_id": VOL_A,
        "attachment_id": "att-a", "connection_info": info,
        "device_name": "/dev/vdb"}
    assert bdm["updated_at"] is not None
    # only volume events count as in flight
    assert snap.in_flight == {live.uuid}
    nova_db.action_event_finish(user, live.uuid, "compute_attach_volume",
                                "h")
    ledgers.read_nova(_settings(nova_db=nova_url), snap)
    assert snap.in_flight == set()


def test_instance_rows_including_deleted_need_an_admin(nova_url):
    with pytest.raises(nova_exception.Forbidden):
        nova_db.instance_get_all_including_deleted(
            context.RequestContext(user_id="u1", project_id="p1"))


def test_running_events_of_one_host(nova_url):
    user = context.RequestContext(user_id="u1", project_id="p1")
    inst = nova_db.instance_create(user, {"display_name": "a", "host": "h"})
    nova_db.action_start(user, inst.uuid, "attach_volume")
    nova_db.action_event_start(user, inst.uuid, "compute_attach_volume",
                               "h1")
    assert [(e.event, a.instance_uuid) for e, a in
            nova_db.action_events_running(user, host="h1")] == [
        ("compute_attach_volume", inst.uuid)]
    assert nova_db.action_events_running(user, host="h2") == []
    assert nova_db.action_events_running(
        user, events=["compute_detach_volume"]) == []


def test_read_cinder(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "cinder.sqlite")
    database = cinder_session.Database(url)
    database.upgrade()
    connector = {"initiator": "iqn.2004-10.org.x:h", "host": "h"}
    with database.write() as session:
        type_id = session.scalars(sa.select(cinder_models.VolumeType.id).where(
            cinder_models.VolumeType.name == "__DEFAULT__")).one()
        for vid, project in ((VOL_A, "p1"), (VOL_B, "p2"),
                             (VOL_GONE, "p1")):
            cinder_db.volume_create(session, {
                "id": vid, "project_id": project, "user_id": "u",
                "size": 1, "volume_type_id": type_id,
                "status": "in-use" if vid == VOL_A else "available"})
        cinder_db.attachment_create(session, {
            "id": "att-a", "volume_id": VOL_A, "instance_uuid": "i-1",
            "attach_status": "attached",
            "connector": json.dumps(connector)})
        cinder_db.attachment_create(session, {
            "id": "att-r", "volume_id": VOL_B, "instance_uuid": "i-2",
            "attach_status": "reserved"})
        cinder_db.volume_soft_delete(session, VOL_GONE)
    database.dispose()

    snap = snapshot.Snapshot()
    ledgers.read_cinder(types.SimpleNamespace(cinder_db=url), snap)

    assert {vid: (v["status"], v["deleted"]) for vid, v in
            snap.volumes.items()} == {VOL_A: ("in-use", False),
                                      VOL_B: ("available", False),
                                      VOL_GONE: ("deleted", True)}
    assert all(v["updated_at"] is not None for v in snap.volumes.values())
    by_id = {a["id"]: a for a in snap.attachments}
    # every project's live attachments, with the connector's initiator
    assert {k: v for k, v in by_id["att-a"].items() if k != "updated_at"} \
        == {"id": "att-a", "volume_id": VOL_A, "instance_uuid": "i-1",
            "attach_status": "attached", "initiator": connector["initiator"]}
    assert by_id["att-r"]["initiator"] is None
    assert set(by_id) == {"att-a", "att-r"}


def test_a_database_without_the_schema_is_a_config_error(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "empty.sqlite")
    with pytest.raises(ledgers.exception.ConfigError) as raised:
        ledgers.read_cinder(types.SimpleNamespace(cinder_db=url),
                            snapshot.Snapshot())
    assert "cannot read" in raised.value.format_message()
    assert "no such table" in raised.value.format_message()


LOSETUP = ("/dev/loop3 0 4194304 /var/lib/ministack/vg.img\n"
           "/dev/loop4 1048576 4194304 /var/lib/ministack/vg.img\n"
           "/dev/loop9 0 0 /srv/other-vg.img\n")


def _vg():
    fake = FakeExecute({
        ("pvs",): "  /var/lib/ministack/vg.img stack-volumes\n"
                  "  /srv/other-vg.img other\n",
        ("losetup", "--list", "--noheadings", "--raw"): LOSETUP,
        ("losetup", "--list", "--noheadings", "--output", "NAME"):
            "/dev/loop3\n/dev/loop4\n/dev/loop9\n"})
    return lvm.LVM("stack-volumes", execute=fake, device_mapper=False), fake


def test_loop_devices_of_the_group_only():
    vg, fake = _vg()
    assert vg.physical_volumes() == {"/var/lib/ministack/vg.img"}
    assert vg.loop_devices() == [
        {"name": "/dev/loop3", "backing": "/var/lib/ministack/vg.img",
         "offset": 0, "size": 4194304},
        {"name": "/dev/loop4", "backing": "/var/lib/ministack/vg.img",
         "offset": 1048576, "size": 4194304}]
    # pvs without activation, as every lvm command without device-mapper
    assert fake.commands("pvs")[0][:3] == ("pvs", "--config",
                                           "global{activation=0}")


def test_detach_loop_is_idempotent():
    vg, fake = _vg()
    vg.detach_loop("/dev/loop4")
    vg.detach_loop("/dev/loop5")    # gone already: nothing run
    assert [c for c in fake.commands("losetup") if "-d" in c] == [
        ("losetup", "-d", "/dev/loop4")]


# --- the fixer's hands on guests: minicompute's driver and host ---

class _Guest:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def poweroff(self):
        self.log.append(("poweroff", self.name))

    def undefine(self):
        self.log.append(("undefine", self.name))


class _Host:
    def __init__(self, log, names):
        self.log, self.names = log, names

    def get_guest(self, name):
        if name not in self.names:
            raise nova_exception.InstanceNotFound(instance_id=name)
        return _Guest(self.log, name)


class _Driver:
    """What Fixer asks of minicompute's LibvirtDriver."""

    def __init__(self, names=("instance-00000001",), disks=("vdb",)):
        self.log = []
        self.host = _Host(self.log, names)
        self.disks = set(disks)

    def unplug_disk(self, ctxt, instance, dev):
        self.host.get_guest(instance["name"])
        if dev not in self.disks:
            raise nova_exception.DiskNotFound(location=dev)
        self.disks.discard(dev)
        self.log.append(("unplug", instance["name"], dev))

    def cleanup_host(self):
        self.log.append(("cleanup",))


def _fixer(drv):
    fixer = fixes.Fixer(types.SimpleNamespace(), snapshot.Snapshot())
    fixer._virt = drv
    return fixer


def test_fixer_unplugs_and_destroys_through_the_driver_idempotently():
    drv = _Driver()
    fixer = _fixer(drv)
    fixer.unplug_disk("uuid-1", "instance-00000001", "vdb")
    fixer.unplug_disk("uuid-1", "instance-00000001", "vdb")   # gone: done
    fixer.unplug_disk("uuid-9", "instance-00000009", "vdb")   # no guest
    fixer.destroy_domain("instance-00000001")
    fixer.destroy_domain("instance-00000009")                 # no guest
    assert drv.log == [("unplug", "instance-00000001", "vdb"),
                       ("poweroff", "instance-00000001"),
                       ("undefine", "instance-00000001")]
    # apply() closes the libvirt connection whatever happened
    fixer.apply([])
    assert drv.log[-1] == ("cleanup",)
