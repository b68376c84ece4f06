"""Bad or hostile input to the volume API: always the upstream 4xx fault,
never a 500 and never a change to someone else's resources (issue 11).

The real app in-process (conftest: fake driver, SQLite); the same attacks
run against the deployed lab in tests/security/ (test_attachment_pairs,
test_project_boundaries, test_never_a_500, test_request_body_limit).
"""

import uuid

import pytest
from werkzeug.test import Client

from minicinder import service
from minicinder.db import session as db_session
from minicinder.volume import manager as volume_manager
from minicinder.volume.drivers import fake
from tests.support.minicinder_inprocess import OTHER_PROJECT
from tests.support.minicinder_inprocess import PROJECT
from tests.support.minicinder_inprocess import make_conf
from tests.unit import fake_keystone

MISMATCH = "Invalid input received: Mismatched volume and attachment"


def _attachment(cinder, volume_id):
    return cinder.post("/attachments", {"attachment": {
        "volume_uuid": volume_id}}).body["attachment"]["id"]


def test_os_detach_with_another_projects_attachment_is_400(cinder):
    """The attack: detach your own volume naming the victim's attachment
    id; upstream's attachment_deletion_allowed answers 400."""
    victim_volume = cinder.create_volume(name="victim")
    victim_att = _attachment(cinder, victim_volume)
    eve = cinder.as_user("eve", project=OTHER_PROJECT)
    own = eve.create_volume(name="eve's")
    resp = eve.post("/volumes/%s/action" % own,
                    {"os-detach": {"attachment_id": victim_att}})
    assert resp.status_code == 400, resp.body
    assert resp.body == {"badRequest": {"code": 400, "message": MISMATCH}}
    assert cinder.get("/attachments/%s" % victim_att).status_code == 200
    assert cinder.volume(victim_volume)["status"] == "reserved"


def test_os_detach_pairs_within_a_project_too(cinder):
    one, two = cinder.create_volume(), cinder.create_volume()
    att = _attachment(cinder, two)
    resp = cinder.as_nova().post("/volumes/%s/action" % one,
                                 {"os-detach": {"attachment_id": att}})
    assert resp.status_code == 400 and \
        resp.body["badRequest"]["message"] == MISMATCH
    assert cinder.get("/attachments/%s" % att).status_code == 200
    # An id no live attachment has detaches nothing, as upstream (202).
    resp = cinder.post("/volumes/%s/action" % one, {"os-detach": {
        "attachment_id": str(uuid.uuid4())}})
    assert resp.status_code == 202
    assert cinder.get("/attachments/%s" % att).status_code == 200
    # The right pair still works.
    assert cinder.post("/volumes/%s/action" % two, {"os-detach": {
        "attachment_id": att}}).status_code == 202
    assert cinder.get("/attachments/%s" % att).status_code == 404


def test_force_detach_refuses_a_mismatched_pair(cinder):
    one, two = cinder.create_volume(), cinder.create_volume()
    att = _attachment(cinder, two)
    resp = cinder.post("/volumes/%s/action" % one,
                       {"os-force_detach": {"attachment_id": att}})
    assert resp.status_code == 400 and \
        resp.body["badRequest"]["message"] == MISMATCH
    assert cinder.get("/attachments/%s" % att).status_code == 200
    resp = cinder.post("/volumes/%s/action" % one, {"os-force_detach": {
        "attachment_id": str(uuid.uuid4())}})
    assert resp.status_code == 404


def test_attachments_api_is_project_scoped(cinder):
    victim_att = _attachment(cinder, cinder.create_volume())
    eve = cinder.as_user("eve", project=OTHER_PROJECT)
    path = "/attachments/%s" % victim_att
    assert eve.get(path).status_code == 404
    assert eve.delete(path).status_code == 404
    assert eve.post(path + "/action", {"os-complete": {}}).status_code \
        == 404
    assert cinder.get(path).status_code == 200


@pytest.fixture
def private_type(cinder):
    resp = cinder.post("/types", {"volume_type": {
        "name": "private-%s" % uuid.uuid4().hex[:8],
        "os-volume-type-access:is_public": False}})
    assert resp.status_code == 200, resp.body
    return resp.body["volume_type"]


def test_private_type_is_absent_for_others_creation_included(cinder,
                                                             private_type):
    bob = cinder.as_user("bob")
    name, type_id = private_type["name"], private_type["id"]
    assert bob.get("/types/%s" % type_id).status_code == 404
    resp = bob.post("/volumes", {"volume": {"size": 1,
                                            "volume_type": name}})
    assert resp.status_code == 404
    assert resp.body == {"itemNotFound": {"code": 404, "message": (
        "Volume type with name %s could not be found." % name)}}
    resp = bob.post("/volumes", {"volume": {"size": 1,
                                            "volume_type": type_id}})
    assert resp.status_code == 404
    assert resp.body["itemNotFound"]["message"] == \
        "Volume type %s could not be found." % type_id
    assert bob.get("/volumes").body["volumes"] == []
    # The admin may, and everyone still gets the (public) default.
    assert cinder.create_volume(volume_type=name)
    assert bob.create_volume()


@pytest.mark.parametrize("size", ["9" * 5000, "0" * 5000, "2147483648",
                                  "0"])
def test_absurd_sizes_are_400(cinder, size):
    resp = cinder.post("/volumes", {"volume": {"size": size}})
    assert resp.status_code == 400, resp.body
    message = resp.body["badRequest"]["message"]
    assert message.startswith(
        "Invalid input received: Invalid volume size provided for create "
        "request:")
    assert len(message) < 400


def test_size_as_a_padded_string_is_accepted(cinder):
    resp = cinder.post("/volumes", {"volume": {"size": "0001"}})
    assert resp.status_code == 202 and resp.body["volume"]["size"] == 1


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\u0000b"])
def test_unstorable_text_is_400_on_create_and_update(cinder, escape):
    raw = '{"volume": {"size": 1, "name": "%s"}}' % escape
    resp = cinder.post("/volumes", raw=raw)
    assert resp.status_code == 400, resp.body
    assert "volume/name" in resp.body["badRequest"]["message"]
    vol = cinder.create_volume(name="kept")
    resp = cinder.put("/volumes/%s" % vol,
                      raw='{"volume": {"name": "%s"}}' % escape)
    assert resp.status_code == 400
    assert cinder.volume(vol)["name"] == "kept"


@pytest.mark.parametrize("header", ["volume 3." + "1" * 5000,
                                    "volume " + "3" * 5000 + ".0"])
def test_huge_microversion_is_406(cinder, header):
    resp = cinder.get("/volumes", version=None,
                      headers={"OpenStack-API-Version": header})
    assert resp.status_code == 406
    assert resp.body["notAcceptable"]["message"].startswith("Version 3")


def test_body_limit_is_oslo_middlewares(cinder):
    limit = 114688
    padding = '{"volume": {"size": 1, "name": "%s"}}'
    body = padding % ("n" * (limit - len(padding) + 2))
    assert len(body) == limit
    resp = cinder.post("/volumes", raw=body)
    assert resp.status_code == 400   # too long a name, but read
    resp = cinder.post("/volumes", raw=body + " ")
    assert resp.status_code == 413
    assert resp.body == {"overLimit": {"code": 413, "message": (
        "Request is too large. Larger than max_request_body_size "
        "(114688).")}}


def test_old_option_name_still_sets_the_limit(tmp_path):
    conf_file = tmp_path / "minicinder.conf"
    conf_file.write_text("[DEFAULT]\nosapi_max_request_body_size = 2048\n")
    conf = make_conf()
    conf(["--config-file", str(conf_file)], project="minicinder")
    assert conf.oslo_middleware.max_request_body_size == 2048


@pytest.fixture
def keystone_cinder(tmp_path, monkeypatch):
    """The app behind keystonemiddleware, and the tokens keystone knows."""
    conf = make_conf(auth_strategy="keystone")
    fake_keystone.configure(conf)
    database = db_session.Database("sqlite:///%s" % (tmp_path / "k.sqlite"))
    database.upgrade()
    svc = service.CinderService(
        conf, database, fake.FakeDriver(),
        executor=volume_manager.InlineExecutor(), compute=None)
    yield Client(svc.app), fake_keystone.FakeKeystone(monkeypatch)
    svc.stop()


@pytest.mark.parametrize("roles", [["member"], ["admin", "member"]])
def test_url_naming_another_project_is_malformed(keystone_cinder, roles):
    """cinder's Resource: any mismatch is 400 "Malformed request url",
    admins included; the caller's own project works."""
    client, keystone = keystone_cinder
    token = keystone.issue("u1", PROJECT, roles)
    headers = {"X-Auth-Token": token}
    resp = client.get("/v3/%s/volumes" % OTHER_PROJECT, headers=headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"badRequest": {
        "code": 400, "message": "Malformed request url"}}
    resp = client.post("/v3/%s/volumes" % OTHER_PROJECT, headers=headers,
                       json={"volume": {"size": 1}})
    assert resp.status_code == 400
    assert client.get("/v3/%s/volumes" % PROJECT,
                      headers=headers).status_code == 200
    # Unknown routes stay 404, as upstream's router answers first.
    assert client.get("/v3/%s/nothing" % OTHER_PROJECT,
                      headers=headers).status_code == 404
