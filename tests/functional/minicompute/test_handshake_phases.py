"""The handshake phase by phase, the legacy flow, and server delete.

miniapi always takes the 3.44 attachment flow and does its phase in one
request, so two things cannot be seen through its REST API: the state
between the API phase and the compute phase, and the legacy flow (a BDM
without attachment_id). For those, ``ApiPhase`` performs the API phase
itself exactly as miniapi does it (the reserve_block_device_name CALL,
Cinder's attachment_create or os-reserve, the action record, the
attach_volume CAST) against the same real daemons, broker and databases.
"""

import json

from oslo_config import cfg
import pytest

from minicompute import conf as compute_conf
from minicompute import rpcapi
from minicompute.db import api as db_api
from minicompute.volume import cinder as cinder_api
from ministack import config
from ministack import db
from ministack import rpc
from tests.support import journey
from tests.support import waiting

pytestmark = pytest.mark.slow


class ApiPhase:
    """What miniapi does before the cast, done from the test process."""

    def __init__(self, stack, tmp_path):
        conf_file = tmp_path / "phase.conf"
        conf_file.write_text(
            "[DEFAULT]\ntransport_url = %s\ncontrol_exchange = %s\n"
            "[cinder]\nendpoint_template = %s\n"
            % (stack["transport_url"], stack["control_exchange"],
               stack["endpoint"]))
        self.conf = cfg.ConfigOpts()
        config.register_common_opts(self.conf)
        compute_conf.register_opts(self.conf)
        self.conf(["--config-file", str(conf_file)], project="phase")
        self.transport = rpc.get_transport(self.conf)
        self.compute = rpcapi.ComputeAPI(self.transport, timeout=60)
        self.volume_api = cinder_api.API(self.conf)
        self.engine = db.make_engine(stack["nova_db"])
        db_api.configure(self.engine)

    def instance(self, ctxt, uuid):
        return db_api.to_dict(db_api.instance_get(ctxt, uuid))

    def close(self):
        self.transport.cleanup()
        self.engine.dispose()


@pytest.fixture
def phase(stack, tmp_path):
    api = ApiPhase(stack, tmp_path)
    yield api
    api.close()


def test_api_phase_leaves_volume_reserved_and_bdm_unwired(
        stack, guests, volumes, phase, admin_ctxt):
    """After the API phase: reserved, BDM without connection_info."""
    probe, cinder = stack["probe"], stack["cinder"]
    server = guests[0]
    vid = volumes("phase")
    instance = phase.instance(admin_ctxt, server)

    bdm = phase.compute.reserve_block_device_name(
        admin_ctxt, instance, None, vid, multiattach=False)
    attachment = phase.volume_api.attachment_create(admin_ctxt, vid, server)
    db_api.bdm_update(admin_ctxt, bdm["id"],
                      {"attachment_id": attachment["id"]})
    row = probe.bdm(server, vid)
    assert row["device_name"] == "/dev/vdb"
    assert row["connection_info"] is None
    assert cinder.status(vid) == "reserved"

    db_api.action_start(admin_ctxt, server, "attach_volume")
    phase.compute.attach_volume(admin_ctxt, instance,
                                db_api.bdm_get(admin_ctxt, bdm["id"]))
    cinder.wait_status(vid, "in-use")
    row = probe.bdm(server, vid)
    assert json.loads(row["connection_info"])["serial"] == vid
    action = db_api.action_get_by_request_id(admin_ctxt, server,
                                             admin_ctxt.request_id)

    def events():
        return [(e.event, e.result)
                for e in db_api.action_events_get(admin_ctxt, action.id)]
    # The event ends just after attachment_complete made the volume in-use.
    waiting.wait_for("attach event ended", lambda: events()[0][1],
                     timeout=30)
    assert events() == [("compute_attach_volume", "Success")]

    resp = stack["nova"].detach(server, vid)
    assert resp.status_code == 202, resp.text
    cinder.wait_status(vid, "available")
    waiting.wait_for("BDM gone", lambda: probe.bdm(server, vid) is None)


def test_legacy_flow_without_attachment_id(stack, guests, volumes, phase,
                                           admin_ctxt):
    """os-reserve / initialize_connection / os-attach, then the reverse."""
    probe, cinder = stack["probe"], stack["cinder"]
    server = guests[1]
    dom = probe.domain_name(server)
    vid = volumes("legacy")
    instance = phase.instance(admin_ctxt, server)

    bdm = phase.compute.reserve_block_device_name(admin_ctxt, instance,
                                                  None, vid)
    phase.volume_api.reserve_volume(admin_ctxt, vid)
    assert cinder.status(vid) == "attaching"
    db_api.action_start(admin_ctxt, server, "attach_volume")
    phase.compute.attach_volume(admin_ctxt, instance, bdm)
    cinder.wait_status(vid, "in-use")
    row = probe.bdm(server, vid)
    assert row["attachment_id"] is None and row["connection_info"]
    waiting.wait_for("legacy volume in guest",
                     lambda: probe.guest_dev_for(dom, vid))
    assert [a["server_id"] for a in cinder.show(vid)["attachments"]] == \
        [server]

    phase.volume_api.begin_detaching(admin_ctxt, vid)
    phase.compute.detach_volume(admin_ctxt, instance, vid)
    cinder.wait_status(vid, "available")
    waiting.wait_for("BDM gone", lambda: probe.bdm(server, vid) is None)
    assert probe.guest_dev_for(dom, vid) is None
    assert list(probe.domblklist(dom)) == ["vda"]


def test_delete_server_releases_or_deletes_volumes(stack, volumes):
    """Server delete: plain volume → available; delete_on_termination →
    deleted; the domain is gone."""
    nova, cinder, probe = stack["nova"], stack["cinder"], stack["probe"]
    flavor = sorted(nova.req("GET", "/flavors/detail").json()["flavors"],
                    key=lambda f: f["ram"])[0]["id"]
    server = nova.create_server(journey.unique("fc%s-del" % stack["run"]),
                                stack["image"]["id"], flavor)
    try:
        dom = probe.domain_name(server)
        keep, drop = volumes("keep"), volumes("drop")
        for vid, dot in ((keep, False), (drop, True)):
            resp = nova.attach(server, vid, delete_on_termination=dot)
            assert resp.status_code == 200, resp.text
            cinder.wait_status(vid, "in-use")
    finally:
        nova.delete_server(server)
    nova.wait_server(server, "DELETED", timeout=120)
    cinder.wait_status(keep, "available")
    cinder.wait_status(drop, "deleted")
    out, _ = journey.executor.execute("virsh", "-c", "qemu:///system",
                                      "list", "--all", "--name")
    assert dom not in out.split()
