"""The attach handshakes against the real daemon, LVM and tgt.

Driven through python-cinderclient at 3.44 exactly as nova does, with
keystoneauth's ``noauth`` session and the endpoint given directly; iSCSI
access is checked from the outside with libiscsi's ``iscsi-inq``.
"""

import uuid

from cinderclient import client as cinder_client
from cinderclient import exceptions as cinder_exc
from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session
import pytest

from tests.support import daemons
from tests.support.minicinder_daemon import NOVA
from tests.support.minicinder_daemon import PROJECT
from tests.support.minicinder_daemon import iscsi_inq
from tests.support.minicinder_daemon import lv_names
from tests.support.minicinder_daemon import target_names

INITIATOR = "iqn.2024-01.org.ministack.ftest:%s" % uuid.uuid4().hex[:8]
STRANGER = "iqn.2024-01.org.ministack.ftest:stranger"


def connector(initiator=INITIATOR):
    return {"initiator": initiator, "ip": "127.0.0.1",
            "platform": "x86_64", "host": "ftest-compute",
            "os_type": "linux", "multipath": False,
            "mountpoint": "/dev/vdb"}


@pytest.fixture
def cinder(daemon):
    """cinderclient as nova's adapter drives it (with its service token)."""
    session = ks_session.Session(auth=noauth.NoAuth(),
                                 additional_headers=NOVA)
    return cinder_client.Client(
        "3.44", session=session,
        endpoint_override="%s/v3/%s" % (daemon.url, PROJECT))




def test_attachment_handshake_with_cinderclient(cinder, raw, make_volume,
                                                volume_group):
    """reserve -> update -> complete -> delete through cinderclient, with
    the LUN reachable only by the admitted initiator with CHAP."""
    volume_id = make_volume()
    instance = str(uuid.uuid4())
    iqn = "iqn.2010-10.org.openstack:volume-%s" % volume_id
    assert "volume-%s" % volume_id in lv_names(volume_group)

    # create returns a dict (cinderclient's own inconsistency), update an
    # object.
    attachment = cinder.attachments.create(volume_id, None, instance)
    assert attachment["status"] == "reserved"
    assert cinder.volumes.get(volume_id).status == "reserved"
    assert iqn not in target_names()

    attachment = cinder.attachments.update(attachment["id"], connector())
    info = attachment.connection_info
    assert attachment.status == "attaching"
    assert info["driver_volume_type"] == "iscsi"
    assert info["target_iqn"] == iqn
    assert info["target_portal"] == "%s:3260" % daemons.PORTAL_IP
    assert info["auth_method"] == "CHAP"
    assert cinder.volumes.get(volume_id).status == "attaching"
    assert iqn in target_names()

    assert iscsi_inq(info, INITIATOR)
    assert not iscsi_inq(info, INITIATOR, with_chap=False)
    assert not iscsi_inq(info, STRANGER)
    wrong = dict(info, auth_password="not-the-password")
    assert not iscsi_inq(wrong, INITIATOR)

    cinder.attachments.complete(attachment.id)
    volume = cinder.volumes.get(volume_id)
    assert volume.status == "in-use"
    assert volume.attachments[0]["attachment_id"] == attachment.id
    assert volume.attachments[0]["server_id"] == instance

    listed = cinder.attachments.list(search_opts={"volume_id": volume_id,
                                                  "all_tenants": 1})
    assert [a.id for a in listed] == [attachment.id]

    # OSSA-2023-003: a user (even an admin) may not pull the volume from
    # under Nova; Nova (service token) may. This daemon has no [nova]
    # endpoint, so the fallback rule applies (an instance's live attachment
    # is Nova's); asking the real Nova is test_nova_check.py.
    resp = raw("DELETE", "/attachments/%s" % attachment.id)
    assert resp.status_code == 409
    assert resp.json()["conflictingRequest"]["message"] == \
        "Detach volume from instance %s using the Compute API" % instance
    assert iscsi_inq(info, INITIATOR)
    cinder.attachments.delete(attachment.id)
    assert cinder.volumes.get(volume_id).status == "available"
    # The target stays until the volume goes, with nobody in its ACL.
    assert not iscsi_inq(info, INITIATOR)

    cinder.volumes.delete(volume_id)
    raw.wait_status(volume_id, "deleted")
    assert "volume-%s" % volume_id not in lv_names(volume_group)


def test_delete_leaves_no_lv_loop_or_target(raw, make_volume, volume_group):
    from minicinder.volume.drivers import lvm
    volume_id = make_volume()
    att = raw("POST", "/attachments", {"attachment": {
        "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4()),
        "connector": connector()}}).json()["attachment"]
    assert att["status"] == "attaching"
    # Where this volume lives on the VG's PV, to look for leftover loops
    # over exactly that range once it is gone (other volumes on the shared
    # VG may have loops of their own).
    vg = lvm.LVM(volume_group)
    [lv] = [name for name in lv_names(volume_group) if volume_id in name]
    extent = vg.extent_range(lv)
    assert raw("DELETE", "/volumes/%s" % volume_id).status_code == 400
    assert raw("DELETE", "/attachments/%s" % att["id"]).status_code == 409
    assert raw("DELETE", "/attachments/%s" % att["id"],
               headers=NOVA).status_code == 200
    assert raw("DELETE", "/volumes/%s" % volume_id).status_code == 202
    raw.wait_status(volume_id, "deleted")
    assert "volume-%s" % volume_id not in lv_names(volume_group)
    assert "iqn.2010-10.org.openstack:volume-%s" % volume_id \
        not in target_names()
    if not vg.device_mapper:
        assert vg.find_loops(*extent) == []


def test_legacy_flow(raw, make_volume):
    """reserve -> initialize_connection -> attach, then begin_detaching ->
    terminate_connection -> detach; codes and states as upstream."""
    volume_id = make_volume()
    act = "/volumes/%s/action" % volume_id
    instance = str(uuid.uuid4())

    assert raw("POST", act, {"os-reserve": {}}).status_code == 202
    assert raw.wait_status(volume_id, "attaching")
    assert raw("POST", act, {"os-reserve": {}}).status_code == 400

    resp = raw("POST", act, {"os-initialize_connection": {
        "connector": connector()}})
    assert resp.status_code == 200
    info = resp.json()["connection_info"]
    assert info["driver_volume_type"] == "iscsi"
    data = info["data"]
    assert iscsi_inq(data, INITIATOR)
    assert not iscsi_inq(data, STRANGER)

    assert raw("POST", act, {"os-attach": {
        "instance_uuid": instance, "mountpoint": "/dev/vdc",
        "mode": "rw"}}).status_code == 202
    volume = raw.wait_status(volume_id, "in-use")
    assert volume["attachments"][0]["device"] == "/dev/vdc"

    assert raw("POST", act, {"os-begin_detaching": {}}).status_code == 202
    raw.wait_status(volume_id, "detaching")
    assert raw("POST", act, {"os-roll_detaching": {}}).status_code == 202
    raw.wait_status(volume_id, "in-use")
    assert raw("POST", act, {"os-begin_detaching": {}}).status_code == 202

    detach = {"os-detach": {
        "attachment_id": volume["attachments"][0]["attachment_id"]}}
    terminate = {"os-terminate_connection": {"connector": connector()}}
    for body in (terminate, detach):            # only Nova may
        assert raw("POST", act, body).status_code == 409
    assert iscsi_inq(data, INITIATOR)
    assert raw("POST", act, terminate, headers=NOVA).status_code == 202
    assert not iscsi_inq(data, INITIATOR)
    assert raw("POST", act, detach, headers=NOVA).status_code == 202
    raw.wait_status(volume_id, "available")


def test_multiattach_two_initiators(raw, make_volume):
    """Two hosts on one multiattach volume; each loses access only when
    its own attachment goes."""
    type_name = "ftest-multiattach-%s" % uuid.uuid4().hex[:6]
    resp = raw("POST", "/types", {"volume_type": {
        "name": type_name, "extra_specs": {"multiattach": "<is> True"}}})
    assert resp.status_code == 200, resp.text
    volume_id = make_volume(volume_type=type_name)
    other = "iqn.2024-01.org.ministack.ftest:second"
    attachments = []
    for initiator in (INITIATOR, other):
        att = raw("POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id,
            "instance_uuid": str(uuid.uuid4())}}).json()["attachment"]
        resp = raw("PUT", "/attachments/%s" % att["id"], {"attachment": {
            "connector": connector(initiator)}})
        assert resp.status_code == 200, resp.text
        assert raw("POST", "/attachments/%s/action" % att["id"],
                   {"os-complete": {}}).status_code == 204
        attachments.append(resp.json()["attachment"])
    info = attachments[0]["connection_info"]
    assert len(raw.wait_status(volume_id, "in-use")["attachments"]) == 2
    assert iscsi_inq(info, INITIATOR) and iscsi_inq(info, other)

    resp = raw("DELETE", "/attachments/%s" % attachments[0]["id"],
               headers=NOVA)
    assert [a["id"] for a in resp.json()["attachments"]] == \
        [attachments[1]["id"]]
    raw.wait_status(volume_id, "in-use")
    assert not iscsi_inq(info, INITIATOR)
    assert iscsi_inq(info, other)
    raw("DELETE", "/attachments/%s" % attachments[1]["id"], headers=NOVA)
    raw.wait_status(volume_id, "available")


def test_concurrent_reserve_exactly_one_wins(raw, make_volume):
    import concurrent.futures
    volume_id = make_volume()
    body = {"attachment": {"volume_uuid": volume_id}}

    def reserve(_):
        body["attachment"]["instance_uuid"] = str(uuid.uuid4())
        return raw("POST", "/attachments", {"attachment": dict(
            body["attachment"])}).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = sorted(pool.map(reserve, range(8)))
    assert codes == [200] + [400] * 7
    listed = raw("GET", "/attachments?volume_id=%s" % volume_id).json()
    assert len(listed["attachments"]) == 1
    raw("DELETE", "/attachments/%s" % listed["attachments"][0]["id"])


def test_cinderclient_errors_map(cinder, make_volume):
    volume_id = make_volume()
    cinder.attachments.create(volume_id, None, str(uuid.uuid4()))
    with pytest.raises(cinder_exc.BadRequest):
        cinder.attachments.create(volume_id, None, str(uuid.uuid4()))
    with pytest.raises(cinder_exc.NotFound):
        cinder.attachments.show(str(uuid.uuid4()))
