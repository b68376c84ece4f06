"""What an attach and a detach cost the compute host, pinned structurally
(issue 16: minicompute's CPU per attach): the SQL statements each runs,
the guests' XML a detach does not need, and the environment the Cinder
client's HTTP session no longer scans per request.

Statement lists, never timings: each entry is the statement's verb and
table, in order.
"""

import re

import pytest
import requests
import sqlalchemy as sa

from minicompute import exception
from minicompute.db import api as db_api
from minicompute.volume import cinder
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


@pytest.mark.parametrize("env", [
    {}, {"REQUESTS_CA_BUNDLE": "/etc/a.pem"}, {"CURL_CA_BUNDLE": "/b.pem"},
    {"https_proxy": "http://proxy.invalid:3128"},
    {"no_proxy": "localhost", "HTTP_PROXY": "http://proxy.invalid:1"}])
def test_cinder_http_session_merges_the_environment_as_requests(
        monkeypatch, home, env):
    """The Cinder client's requests session reads the environment once,
    yet settles proxies and verify exactly as requests' own."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    ours, theirs = cinder.http_session(), requests.Session()
    for url in ("http://127.0.0.1:8776/v3/p", "https://cinder.invalid/v3"):
        for verify in (True, None, False, "/own.pem"):
            assert ours.merge_environment_settings(
                url, {}, None, verify, None) == \
                theirs.merge_environment_settings(url, {}, None, verify,
                                                  None)


def test_cinder_http_session_does_not_scan_the_environment(monkeypatch,
                                                          home):
    """Without proxy variables and netrc file, no request scans os.environ
    for proxies or looks for ~/.netrc (requests' get_environ_proxies and
    get_netrc_auth, per request, before)."""
    http = cinder.http_session()

    def scanned(*args, **kwargs):
        raise AssertionError("the environment was read per request")

    monkeypatch.setattr(requests.sessions, "get_environ_proxies", scanned)
    monkeypatch.setattr(requests.sessions, "get_netrc_auth", scanned)
    settings = http.merge_environment_settings(
        "http://127.0.0.1:8776/v3/p", {}, None, True, None)
    assert settings["proxies"] == {} and settings["verify"] is True
    prepared = http.prepare_request(requests.Request(
        "GET", "http://127.0.0.1:8776/v3/p"))
    assert "Authorization" not in prepared.headers


def test_cinder_http_session_keeps_requests_netrc_handling(home):
    """A netrc file in the home: requests' own handling stays on and
    its credentials are sent, as before."""
    (home / ".netrc").write_text(
        "machine 127.0.0.1 login nova password secret\n")
    (home / ".netrc").chmod(0o600)
    http = cinder.http_session()
    assert http.trust_env
    prepared = http.prepare_request(requests.Request(
        "GET", "http://127.0.0.1:8776/v3/p"))
    assert prepared.headers["Authorization"].startswith("Basic ")


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
