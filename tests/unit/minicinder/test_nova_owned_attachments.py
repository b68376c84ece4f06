"""OSSA-2023-003 (bug 2004555): only Nova tears down what Nova uses.

Before a caller that is not a service deletes or detaches an instance's
attachment, minicinder asks Nova (here the ``nova`` fixture, a fake of
``minicinder.compute.nova.API``) which attachment the server uses for the
volume. Only when Nova names that very attachment is the call refused with
409 ``ConflictNovaUsingAttachment`` (admins included); the same call
through Nova (a service token, or the ``service`` role) succeeds without
asking, and attachments Nova does not know (a user's legacy ``os-attach``,
a reservation, no instance) stay free to remove. When Nova cannot be asked
the call is refused (fail closed). Both auth strategies are covered:
noauth here, keystone (keystonemiddleware's auth_token, with keystone's
answers from ``tests/unit/fake_keystone.py``) at the end.
"""

import pytest

from minicinder import service
from minicinder.compute import nova as nova_api
from minicinder.db import session as db_session
from minicinder.volume import manager as volume_manager
from minicinder.volume.drivers import fake
from tests.support.minicinder_inprocess import PROJECT
from tests.support.minicinder_inprocess import CinderClient
from tests.support.minicinder_inprocess import FakeNova
from tests.support.minicinder_inprocess import connector
from tests.support.minicinder_inprocess import make_conf
from tests.unit import fake_keystone

INSTANCE = "51c7b6f4-1d2b-4b5f-9f51-5d6a3a4c8b33"
NOVA_MESSAGE = "Detach volume from instance %s using the Compute API" \
    % INSTANCE


def _attached(cinder, complete=True, instance=INSTANCE, nova=None):
    """A connected (and completed) attachment; with ``nova``, Nova records
    it in a BDM as its compute API does."""
    vol = cinder.create_volume()
    att = cinder.reserve(vol, instance) if instance else cinder.post(
        "/attachments", {"attachment": {"volume_uuid": vol}}).body[
            "attachment"]
    resp = cinder.put("/attachments/%s" % att["id"],
                      {"attachment": {"connector": connector()}})
    assert resp.status_code == 200, resp.body
    if complete:
        assert cinder.post("/attachments/%s/action" % att["id"],
                           {"os-complete": {}}).status_code == 204
    if nova is not None and instance:
        nova.attach(instance, vol, att["id"])
    return vol, att["id"]


def _is_nova_conflict(resp):
    assert resp.status_code == 409, resp.body
    assert resp.body == {"conflictingRequest": {
        "code": 409, "message": NOVA_MESSAGE}}
    return True


@pytest.mark.parametrize("complete", [True, False], ids=["attached",
                                                         "attaching"])
def test_delete_by_user_or_admin_is_409_when_nova_uses_it(
        cinder, driver, nova, complete):
    vol, att = _attached(cinder, complete, nova=nova)
    owner = cinder.as_user("alice")
    for caller in (owner, cinder):          # the owner, then an admin
        assert _is_nova_conflict(caller.delete("/attachments/%s" % att))
    assert nova.asked == [(INSTANCE, vol)] * 2
    assert cinder.get("/attachments/%s" % att).status_code == 200
    assert driver.exports[vol] == {connector()["initiator"]}
    assert cinder.volume(vol)["status"] == ("in-use" if complete
                                            else "attaching")


@pytest.mark.parametrize("headers", [{"X-Service-Token": "nova"},
                                     {"X-Roles": "admin,service"}],
                         ids=["service-token", "service-role"])
def test_delete_through_nova_succeeds_without_asking(cinder, driver, nova,
                                                     headers):
    vol, att = _attached(cinder, nova=nova)
    resp = cinder.delete("/attachments/%s" % att, headers=headers)
    assert resp.status_code == 200, resp.body
    assert nova.asked == []
    assert cinder.volume(vol)["status"] == "available"
    assert not driver.exports[vol]


def test_attachments_nova_does_not_use_can_be_deleted(cinder, driver, nova):
    alice = cinder.as_user("alice")
    vol = cinder.create_volume()
    reserved = cinder.reserve(vol, INSTANCE)        # never connected
    assert alice.delete("/attachments/%s" % reserved["id"]).status_code \
        == 200
    _, hostless = _attached(cinder, instance=None)  # no instance at all
    assert cinder.delete("/attachments/%s" % hostless).status_code == 200
    assert nova.asked == [(INSTANCE, vol)]          # only the instance's
    # Connected and complete, but Nova has no BDM for it (404).
    vol2, att = _attached(cinder)
    assert alice.delete("/attachments/%s" % att).status_code == 200
    assert cinder.volume(vol2)["status"] == "available"
    assert not driver.exports[vol2]


def test_an_attachment_nova_replaced_can_be_deleted(cinder, nova,
                                                    multiattach_type):
    """Nova's BDM names another attachment (e.g. the new one a live
    migration made): the old one is not what the guest uses."""
    vol = cinder.create_volume(volume_type=multiattach_type)
    old = cinder.reserve(vol, INSTANCE)["id"]
    new = cinder.reserve(vol, INSTANCE)["id"]
    nova.attach(INSTANCE, vol, new)
    assert _is_nova_conflict(cinder.delete("/attachments/%s" % new))
    assert cinder.delete("/attachments/%s" % old).status_code == 200


def test_user_may_detach_what_they_attached_with_os_attach(cinder, driver,
                                                           nova):
    """tempest's VolumesActionsTest: legacy attach and detach by a user
    (Nova never heard of it, so it answers 404)."""
    demo = cinder.as_user("demo")
    vol = demo.create_volume()
    act = "/volumes/%s/action" % vol
    assert demo.post(act, {"os-reserve": {}}).status_code == 202
    assert demo.post(act, {"os-initialize_connection": {
        "connector": connector()}}).status_code == 200
    assert demo.post(act, {"os-attach": {
        "instance_uuid": INSTANCE, "mountpoint": "/dev/vdc",
        "mode": "rw"}}).status_code == 202
    assert demo.volume(vol)["status"] == "in-use"
    assert demo.post(act, {"os-begin_detaching": {}}).status_code == 202
    assert demo.post(act, {"os-terminate_connection": {
        "connector": connector()}}).status_code == 202
    assert demo.post(act, {"os-detach": {}}).status_code == 202
    assert demo.volume(vol)["status"] == "available"
    assert not driver.exports[vol]
    assert nova.asked == [(INSTANCE, vol)] * 2


def test_legacy_detach_verbs_are_409_for_users(cinder, driver, nova):
    vol, att = _attached(cinder, nova=nova)
    act = "/volumes/%s/action" % vol
    for body in ({"os-detach": {"attachment_id": att}}, {"os-detach": {}},
                 {"os-terminate_connection": {"connector": connector()}},
                 {"os-force_detach": {"attachment_id": att}},
                 {"os-force_detach": {}}):
        assert _is_nova_conflict(cinder.post(act, body)), body
    assert driver.exports[vol] == {connector()["initiator"]}
    # A connector without an initiator concerns every attachment.
    for empty in ({}, {"host": "h1"}):
        assert _is_nova_conflict(cinder.post(act, {
            "os-terminate_connection": {"connector": empty}})), empty
    assert cinder.volume(vol)["status"] == "in-use"
    # Another initiator's connection is not Nova's attachment: allowed.
    other = connector("iqn.2024-01.test:someone-else")
    assert cinder.post(act, {"os-terminate_connection": {
        "connector": other}}).status_code == 202
    assert cinder.as_nova().post(act, {"os-force_detach": {
        "attachment_id": att}}).status_code == 202
    assert cinder.volume(vol)["status"] == "available"


def test_nova_unreachable_fails_closed(cinder, driver, nova):
    vol, att = _attached(cinder)            # Nova would say 404 ...
    nova.down = True                        # ... but cannot be asked
    for resp in (cinder.delete("/attachments/%s" % att),
                 cinder.post("/volumes/%s/action" % vol,
                             {"os-detach": {"attachment_id": att}})):
        assert resp.status_code == 409, resp.body
        message = resp.body["conflictingRequest"]["message"]
        assert "Nova could not be asked" in message
        assert INSTANCE in message and att in message
    assert cinder.volume(vol)["status"] == "in-use"
    assert driver.exports[vol] == {connector()["initiator"]}
    # A service still may; so may a user once Nova answers again.
    nova.down = False
    assert cinder.delete("/attachments/%s" % att).status_code == 200


def test_without_nova_an_instances_live_attachment_is_novas(tmp_path):
    """``[nova] endpoint`` empty: nothing to ask, so the stricter rule:
    attaching/attached with an instance is Nova's; a reservation is not."""
    conf = make_conf()
    compute = nova_api.API(conf)
    assert not compute.configured
    database = db_session.Database("sqlite:///%s" % (tmp_path / "c.sqlite"))
    database.upgrade()
    svc = service.CinderService(conf, database, fake.FakeDriver(),
                                executor=volume_manager.InlineExecutor(),
                                compute=compute)
    try:
        cinder = CinderClient(svc.app)
        vol, att = _attached(cinder)
        act = "/volumes/%s/action" % vol
        assert _is_nova_conflict(cinder.delete("/attachments/%s" % att))
        assert _is_nova_conflict(cinder.post(act, {"os-detach": {}}))
        assert cinder.as_nova().delete(
            "/attachments/%s" % att).status_code == 200
        reserved = cinder.reserve(vol, INSTANCE)
        assert cinder.delete(
            "/attachments/%s" % reserved["id"]).status_code == 200
    finally:
        svc.stop()


def test_mode_null_is_the_default(cinder):
    """The openstack CLI sends ``"mode": null`` at 3.54 without --mode."""
    vol = cinder.create_volume()
    resp = cinder.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": INSTANCE, "mode": None,
        "connector": connector()}}, version="3.54")
    assert resp.status_code == 200, resp.body
    assert resp.body["attachment"]["attach_mode"] == "rw"
    assert resp.body["attachment"]["connection_info"]["access_mode"] == "rw"
    bad = cinder.post("/attachments", {"attachment": {
        "volume_uuid": vol, "mode": "rx"}}, version="3.54")
    assert bad.status_code == 400


# --- auth_strategy = keystone ----------------------------------------------

@pytest.fixture
def keystone(tmp_path, monkeypatch):
    """minicinder behind keystonemiddleware, and the tokens keystone
    knows."""
    conf = make_conf(auth_strategy="keystone")
    fake_keystone.configure(conf)
    database = db_session.Database("sqlite:///%s" % (tmp_path / "c.sqlite"))
    database.upgrade()
    nova = FakeNova()
    svc = service.CinderService(
        conf, database, fake.FakeDriver(),
        executor=volume_manager.InlineExecutor(), compute=nova)
    issuer = fake_keystone.FakeKeystone(monkeypatch)

    def token(user, roles, project=PROJECT):
        return issuer.issue(user, project, roles)
    yield CinderClient(svc.app), token, nova
    svc.stop()


def test_keystone_needs_a_service_token_with_the_service_role(keystone):
    client, token, nova = keystone
    demo = {"X-Auth-Token": token("demo", ["member"])}
    assert client.get("/volumes", headers={
        "X-Auth-Token": "admin:" + PROJECT}).status_code == 401
    vol = client.post("/volumes", {"volume": {"size": 1}},
                      headers=demo).body["volume"]["id"]
    att = client.post("/attachments", {"attachment": {
        "volume_uuid": vol, "instance_uuid": INSTANCE,
        "connector": connector()}}, headers=demo).body["attachment"]["id"]
    assert client.post("/attachments/%s/action" % att, {"os-complete": {}},
                       headers=demo).status_code == 204
    nova.attach(INSTANCE, vol, att)
    url = "/attachments/%s" % att
    # The user alone.
    assert _is_nova_conflict(client.delete(url, headers=demo))
    # A service token lacking the service role is no service token
    # (keystonemiddleware, service_token_roles_required): 401, as a
    # forged one (noauth's "any X-Service-Token" does not apply).
    not_service = token("nova", ["admin"], project="service")
    for forged in (not_service, "nova"):
        assert client.delete(url, headers=dict(
            demo, **{"X-Service-Token": forged})).status_code == 401
    assert _is_nova_conflict(client.delete(url, headers=demo))
    service_token = token("nova", ["admin", "service"], project="service")
    resp = client.delete(url, headers=dict(
        demo, **{"X-Service-Token": service_token}))
    assert resp.status_code == 200, resp.body
