"""The host's periodic offload of servers shelved for longer than
``shelved_offload_time`` (minicompute.shelved_offload), on the fake:/
stack with the fake driver and the fake Cinder."""

import datetime

import pytest

from minicompute.db import api as db_api
from ministack import db
from tests.unit.minicompute import test_shelve as shelve_tests


@pytest.fixture
def conf(conf, tmp_path):
    """The snapshot images in a temporary state path."""
    conf.set_override("state_path", str(tmp_path))
    return conf


def _shelved(ctxt, stack, conf):
    """An image-backed server shelved (and not offloaded) through the
    host's endpoint, with its shelve action as the API records it."""
    _, client, _, _ = stack
    inst, volumes = shelve_tests._server(ctxt, stack, volume_backed=False)
    db_api.action_start(ctxt, inst.uuid, "shelve")
    client.shelve_instance(ctxt, db_api.to_dict(inst),
                           image=shelve_tests._snapshot_record(inst, conf))
    assert shelve_tests._state(ctxt, inst) == ("shelved", None, "h1")
    return inst, volumes


def test_offloads_only_once_shelved_long_enough(ctxt, stack, conf):
    conf.set_override("shelved_offload_time", 600)
    svc, _, driver, volume_api = stack
    inst, volumes = _shelved(ctxt, stack, conf)
    offloader = svc.shelved_offloader
    assert offloader.run(now=db.utcnow()) == []
    assert shelve_tests._state(ctxt, inst) == ("shelved", None, "h1")

    later = db.utcnow() + datetime.timedelta(seconds=601)
    assert offloader.run(now=later) == [inst.uuid]
    assert shelve_tests._state(ctxt, inst) == ("shelved_offloaded", None,
                                               None)
    shelve_tests._parked(ctxt, volume_api, inst.uuid, volumes)
    assert inst.uuid not in driver.instances
    actions = [a.action for a in db_api.action_get_all(ctxt, inst.uuid)]
    assert actions[0] == "shelveOffload"
    # Nothing more to do on the next poll.
    assert offloader.run(now=later) == []


def test_disabled_or_busy_servers_are_left_alone(ctxt, stack, conf):
    conf.set_override("shelved_offload_time", -1)
    svc, _, _, _ = stack
    inst, _ = _shelved(ctxt, stack, conf)
    later = db.utcnow() + datetime.timedelta(days=30)
    assert svc.shelved_offloader.run(now=later) == []
    conf.set_override("shelved_offload_time", 1)
    # An unshelve (or an admin's offload) holds the task: not claimed.
    db_api.instance_update(ctxt, inst.uuid, {"task_state": "unshelving"})
    assert svc.shelved_offloader.run(now=later) == []
    assert shelve_tests._state(ctxt, inst) == ("shelved", "unshelving",
                                               "h1")


def test_a_failed_offload_releases_its_claim(ctxt, stack, conf,
                                             monkeypatch):
    conf.set_override("shelved_offload_time", 1)
    svc, _, driver, _ = stack
    inst, _ = _shelved(ctxt, stack, conf)

    def broken(*args, **kwargs):
        raise RuntimeError("libvirtd went away")
    monkeypatch.setattr(driver, "power_off", broken)
    monkeypatch.setattr(driver, "get_power_state", lambda instance: 1)
    later = db.utcnow() + datetime.timedelta(seconds=5)
    assert svc.shelved_offloader.run(now=later) == []
    assert shelve_tests._state(ctxt, inst) == ("shelved", None, "h1")
