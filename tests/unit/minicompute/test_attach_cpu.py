"""What an attach and a detach cost the compute host, pinned structurally
(issue 16: minicompute's CPU per attach): the SQL statements each runs,
the guests' XML a detach does not need, and the environment the Cinder
client's HTTP session no longer scans per request.

Statement lists, never timings: each entry is the statement's verb and
table, in order.
"""

import re
import ssl

import pytest
import sqlalchemy as sa

from minicompute import exception
from minicompute.db import api as db_api
from minicompute.db import models
from minicompute.volume import cinder_http
from minicompute.virt.libvirt import driver as libvirt_driver
from ministack import context
from tests.support import sql_statements
from tests.unit.minicompute.manager_flow import action_events

_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE)\s+(\w+)", re.IGNORECASE)


# The host's statements for an attach, and the same for a detach: the
# instance, the event's start (the request's action, the event, the
# action's updated_at), the BDM, its write, the event's finish.
HOST_STATEMENTS = [
    ("SELECT", "instances"),
    ("SELECT", "instance_actions"),
    ("INSERT", "instance_actions_events"),
    ("UPDATE", "instance_actions"),
    ("SELECT", "block_device_mapping"),
    ("UPDATE", "block_device_mapping"),
    ("UPDATE", "instance_actions_events"),
    ("UPDATE", "instance_actions"),
]


def verbs_and_tables(seen):
    """``[(verb, table)]`` of recorded statements."""
    return [(statement.split(None, 1)[0].upper(),
             _TABLE.search(statement).group(1)) for statement in seen]


def test_attach_and_detach_statements(ctxt, stack, server, nova_db):
    """The attach: the instance, the event's start (the request's action,
    the event, the action's updated_at), the BDM, its connection_info,
    the event's finish by the row its start returned (no second look-up
    of the action and the event). The detach likewise, its BDM
    soft-deleted in one UPDATE (no load first). Before: 11 each."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    vol = volume_api.get(ctxt, vid)
    bdm = client.reserve_block_device_name(
        ctxt, server, None, vid, multiattach=vol["multiattach"])
    att = volume_api.attachment_create(ctxt, vid, server["uuid"])
    bdm = db_api.to_dict(db_api.bdm_update(ctxt, bdm["id"], {
        "attachment_id": att["id"]}))
    db_api.action_start(ctxt, server["uuid"], "attach_volume")
    with sql_statements.recorded_on([nova_db]) as attach:
        client.attach_volume(ctxt, server, bdm)
    assert volume_api.status(vid) == "in-use"
    assert verbs_and_tables(attach) == HOST_STATEMENTS

    volume_api.begin_detaching(ctxt, vid)
    dctxt = context.RequestContext(user_id="u1", project_id="p1")
    db_api.action_start(dctxt, server["uuid"], "detach_volume")
    with sql_statements.recorded_on([nova_db]) as detach:
        client.detach_volume(dctxt, server, vid, bdm["attachment_id"])
    assert volume_api.status(vid) == "available"
    assert verbs_and_tables(detach) == HOST_STATEMENTS
    # What the statements wrote reads back as before.
    events = {e.event: e for e in action_events(ctxt, server)}
    for name in ("compute_attach_volume", "compute_detach_volume"):
        assert events[name].result == "Success"
        assert events[name].finish_time >= events[name].start_time
        assert events[name].details is None
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert connection_info_written(nova_db, bdm["id"])


def connection_info_written(engine, bdm_id):
    with engine.connect() as conn:
        row = conn.execute(sa.text(
            "SELECT connection_info, deleted, deleted_at FROM "
            "block_device_mapping WHERE id = :id"), {"id": bdm_id}).one()
    return row.connection_info and row.deleted == bdm_id and \
        row.deleted_at is not None


def test_event_finish_without_the_started_row_looks_it_up(ctxt, instance):
    """The reconciler finishes an event it did not start: by request id
    and name, as before; an Error also marks the action."""
    db_api.action_start(ctxt, instance.uuid, "attach_volume")
    started = db_api.action_event_start(ctxt, instance.uuid,
                                        "compute_attach_volume", "h1",
                                        details="volume v1")
    finished = db_api.action_event_finish(
        ctxt, instance.uuid, "compute_attach_volume", "h1", result="Error",
        details="volume v1: interrupted")
    assert (finished.id, finished.action_id) == (started.id,
                                                 started.action_id)
    action = db_api.action_get_by_request_id(ctxt, instance.uuid,
                                             ctxt.request_id)
    assert action.message == "Error" and action.updated_at is not None
    [event] = db_api.action_events_get(ctxt, action.id)
    assert (event.result, event.details, event.host) == (
        "Error", "volume v1: interrupted", "h1")


class _NoScanHost:
    def list_guests(self):
        raise AssertionError("a detach of a volume that is not "
                             "multiattach fetched every guest's XML")


class _Guest:
    def __init__(self, uuid, xml):
        self.uuid = uuid
        self._xml = xml

    def get_disks(self, inactive=False):
        import xml.etree.ElementTree as ET
        root = ET.fromstring(self._xml)
        return {d.find("target").get("dev"): d
                for d in root.findall("./devices/disk")}


class _VolDriver:
    def source_key(self, connection_info):
        return "iqn.t/0"


_SHARED = ("<domain><devices><disk><source name='iqn.t/0'/>"
           "<target dev='vdb'/></disk></devices></domain>")


def test_still_used_scans_guests_only_for_multiattach(conf):
    """A volume that is not multiattach has a target of its own: no
    other guest's XML is read (before: every guest's, every detach)."""
    drv = libvirt_driver.LibvirtDriver(conf, host=_NoScanHost())
    me = _Guest("me", "<domain/>")
    info = {"driver_volume_type": "iscsi", "data": {}}
    assert drv._still_used(_VolDriver(), info, me) is False

    class Host:
        def list_guests(self):
            return [me, _Guest("other", _SHARED)]

    drv = libvirt_driver.LibvirtDriver(conf, host=Host())
    assert drv._still_used(_VolDriver(), dict(info, multiattach=True),
                           me) is True


_ENV_KEYS = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "http_proxy",
             "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy",
             "NO_PROXY", "all_proxy", "ALL_PROXY", "NETRC")


@pytest.fixture
def home(monkeypatch, tmp_path):
    """An empty home (no netrc file) and no proxy or CA variables."""
    for key in _ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("env,cafile", [
    ({}, None), ({"REQUESTS_CA_BUNDLE": "/etc/a.pem"}, "/etc/a.pem"),
    ({"CURL_CA_BUNDLE": "/b.pem"}, "/b.pem"),
    ({"REQUESTS_CA_BUNDLE": "/etc/a.pem", "CURL_CA_BUNDLE": "/b.pem"},
     "/etc/a.pem")])
def test_cinder_http_transport_reads_the_ca_bundle_once(monkeypatch, home,
                                                        env, cafile):
    """The Cinder transport takes the CA bundle from the variables
    requests read (REQUESTS_CA_BUNDLE first), once, when it is made; a
    later change of the environment is not looked at."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    transport = cinder_http.Transport()
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/changed.pem")
    assert transport.cafile == cafile


def test_cinder_http_transport_verifies_https_with_one_context(monkeypatch,
                                                               home):
    """https to Cinder verifies the certificate and the host name, with
    one SSL context made for the process' first https connection (not
    one per request)."""
    made = []
    real = ssl.create_default_context

    def create_default_context(cafile=None):
        made.append(cafile)
        return real()

    monkeypatch.setattr(ssl, "create_default_context",
                        create_default_context)
    transport = cinder_http.Transport(environ={"CURL_CA_BUNDLE": "/b.pem"})
    first = transport._connect("https", "cinder.invalid", 8776, 5)
    second = transport._connect("https", "cinder.invalid", 8776, 5)
    assert made == ["/b.pem"]
    assert first._context is second._context
    assert first._context.verify_mode == ssl.CERT_REQUIRED
    assert first._context.check_hostname


def test_cinder_http_transport_ignores_proxies_netrc_and_environ(
        monkeypatch, home):
    """Proxy variables and a netrc file change nothing (the transport
    connects directly and sends no netrc credentials), and a request does
    not read the environment at all."""
    import http.server
    import os
    import threading

    seen = []

    class Cinder(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            seen.append((self.requestline, dict(self.headers)))
            self.send_response(200)
            self.send_header("Connection", "close")    # one request
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Cinder)
    thread = threading.Thread(target=server.handle_request, daemon=True)
    thread.start()
    (home / ".netrc").write_text(
        "machine 127.0.0.1 login nova password secret\n")
    (home / ".netrc").chmod(0o600)
    for key in ("http_proxy", "HTTP_PROXY", "all_proxy"):
        monkeypatch.setenv(key, "http://proxy.invalid:3128")
    transport = cinder_http.Transport()

    class Unread(dict):
        def __getitem__(self, key):
            raise AssertionError("the environment was read per request")
        get = __contains__ = keys = items = __iter__ = __getitem__

    monkeypatch.setattr(os, "environ", Unread())
    url = "http://127.0.0.1:%d/v3/p/volumes/v1" % server.server_port
    resp = transport.request("GET", url, {"Accept": "application/json"},
                             timeout=10)
    monkeypatch.undo()
    thread.join(10)
    server.server_close()
    assert resp.status == 200 and resp.json() == {}
    (line, headers), = seen
    assert line == "GET /v3/p/volumes/v1 HTTP/1.1"
    assert "Authorization" not in headers


def test_core_reads_match_the_orm_reads(ctxt, admin_ctxt, instance):
    """The compute host's Core reads give what the ORM reads gave: the
    instance's dict as it crosses RPC, the BDM's columns; the same
    project scoping and not-found errors."""
    assert db_api.instance_get_dict(ctxt, instance.uuid) == \
        db_api.to_dict(db_api.instance_get(ctxt, instance.uuid))
    assert db_api.instance_get_dict(admin_ctxt, instance.uuid)["name"] == \
        "instance-%08x" % instance.id
    other = context.RequestContext(user_id="u2", project_id="p2")
    with pytest.raises(exception.InstanceNotFound):
        db_api.instance_get_dict(other, instance.uuid)
    bdm = db_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "volume_id": "v1",
        "device_name": "/dev/vdb", "connection_info": {"serial": "v1"}})
    orm = db_api.bdm_get(ctxt, bdm.id)
    for row in (db_api.bdm_read(ctxt, bdm.id),
                db_api.bdm_read_by_volume_and_instance(ctxt, "v1",
                                                       instance.uuid)):
        assert {c.name: getattr(row, c.name)
                for c in orm.__table__.columns} == \
            {c.name: getattr(orm, c.name) for c in orm.__table__.columns}
    db_api.bdm_destroy(ctxt, bdm.id)
    with pytest.raises(exception.BDMNotFound):
        db_api.bdm_read(ctxt, bdm.id)
    with pytest.raises(exception.VolumeBDMNotFound):
        db_api.bdm_read_by_volume_and_instance(ctxt, "v1", instance.uuid)


def _columns(row):
    return {c.name: getattr(row, c.name)
            for c in models.BlockDeviceMapping.__table__.columns}


def test_core_writes_match_the_orm_reads(ctxt, instance):
    """The BDM a Core INSERT creates (the model's defaults filled in
    without reading it back), the BDMs of an instance and the BDM an
    update reloads, all by Core statements, are what the ORM's query
    (bdm_get) loads; an update that does not reload returns the columns
    it wrote, which complete the row the caller holds."""
    bdm = db_api.bdm_create(ctxt, {
        "instance_uuid": instance.uuid, "volume_id": "v1",
        "device_name": "/dev/vdb", "tag": "t"})
    assert _columns(bdm) == _columns(db_api.bdm_get(ctxt, bdm.id))
    assert bdm.deleted == 0 and bdm.delete_on_termination is False
    assert bdm.created_at is not None and bdm.updated_at is None
    second = db_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                                      "volume_id": "v2"})
    assert [_columns(b) for b in db_api.bdm_get_all_by_instance(
        ctxt, instance.uuid)] == [_columns(db_api.bdm_get(ctxt, b.id))
                                  for b in (bdm, second)]
    held = db_api.to_dict(bdm)
    written = db_api.bdm_update(ctxt, bdm.id, {"attachment_id": "a1"},
                                reload=False)
    assert dict(held, **written) == db_api.to_dict(
        db_api.bdm_get(ctxt, bdm.id))
    reloaded = db_api.bdm_update(ctxt, second.id,
                                 {"delete_on_termination": True})
    assert _columns(reloaded) == _columns(db_api.bdm_get(ctxt, second.id))
    assert reloaded.delete_on_termination is True
    assert db_api.to_dict(db_api.instance_get(ctxt, instance.uuid))[
        "name"] == "instance-%08x" % instance.id
    with pytest.raises(exception.BDMNotFound):
        db_api.bdm_update(ctxt, 999999, {"tag": "x"}, reload=False)


def test_instances_of_volume_match_its_bdms(ctxt, instance):
    """The API's already-attached check reads the instance uuids of the
    volume's live BDMs, as bdm_get_by_volume lists them."""
    assert db_api.bdm_instances_of_volume(ctxt, "v1") == []
    other, third = (db_api.instance_create(ctxt, {"display_name": name})
                    for name in ("other", "third"))
    first = db_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                                     "volume_id": "v1"})
    db_api.bdm_create(ctxt, {"instance_uuid": other.uuid,
                             "volume_id": "v1"})
    db_api.bdm_create(ctxt, {"instance_uuid": third.uuid,
                             "volume_id": "v2"})
    db_api.bdm_destroy(ctxt, first.id)
    db_api.bdm_create(ctxt, {"instance_uuid": instance.uuid,
                             "volume_id": "v1"})
    assert db_api.bdm_instances_of_volume(ctxt, "v1") == [
        b.instance_uuid for b in db_api.bdm_get_by_volume(ctxt, "v1")] == [
        other.uuid, instance.uuid]
