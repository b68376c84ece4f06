"""The unit tiers' one Cinder fake keeps the real adapter's contract.

Both miniapi's and the compute manager's tests stand on
``tests.support.fake_cinder.FakeCinder``; if the adapter
(``minicompute.volume.cinder.API``) grows or changes a method, the fake
must follow, or those tests would pass against an interface production
does not have.
"""

import inspect

import pytest

from minicompute import exception
from minicompute.volume import cinder
from ministack import context
from ministack import exception as ms_exception
from tests.support import fake_cinder


def _public_methods(cls):
    return {name: inspect.signature(member)
            for name, member in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")}


def test_every_adapter_method_with_its_signature():
    adapter = _public_methods(cinder.API)
    fake = _public_methods(fake_cinder.FakeCinder)
    for name, signature in adapter.items():
        assert name in fake, "FakeCinder lacks %s" % name
        assert fake[name] == signature, name


@pytest.fixture
def member():
    return context.RequestContext(user_id="u1", project_id="p1",
                                  roles=["member"])


def test_the_attachment_journey_moves_the_volume_status(member):
    fake = fake_cinder.FakeCinder()
    vid = fake.add_volume()
    att = fake.attachment_create(member, vid, "server-1")
    assert fake.status(vid) == "reserved"
    info = fake.attachment_update(member, att["id"], {"host": "h1"},
                                  mountpoint="/dev/vdb")
    assert info["connection_info"]["driver_volume_type"] == "iscsi"
    assert fake.status(vid) == "attaching"
    fake.attachment_complete(member, att["id"])
    assert fake.status(vid) == "in-use"
    volume = fake.get(member, vid)
    assert volume["attachments"]["server-1"]["mountpoint"] == "/dev/vdb"
    fake.begin_detaching(member, vid)
    assert fake.status(vid) == "detaching"
    fake.attachment_delete(member, att["id"])
    assert fake.status(vid) == "available"
    assert fake.attachment_ids() == []
    assert fake.calls == ["attachment_create", "attachment_update",
                          "attachment_complete", "get", "begin_detaching",
                          "attachment_delete"]


def test_faults_are_the_adapters(member):
    fake = fake_cinder.FakeCinder()
    vid = fake.add_volume(status="error")
    with pytest.raises(ms_exception.InvalidInput):
        fake.attachment_create(member, vid, "server-1")
    with pytest.raises(exception.VolumeAttachmentNotFound):
        fake.attachment_delete(member, "no-such-attachment")
    other = fake.add_volume(project_id="p2")
    with pytest.raises(exception.VolumeNotFound):
        fake.get(member, other)
    assert fake.get(context.get_admin_context(), other)["id"] == other
    fake.fail_next("get", ms_exception.Conflict(reason="injected"))
    with pytest.raises(ms_exception.Conflict):
        fake.get(member, vid)
    assert fake.get(member, vid)["status"] == "error"   # failed once
