"""Each fault armed over RPC fires at its point on the compute host, and
the flow's own undo leaves the seed's end state (minicompute/faults/).

The service runs on fake:/ with the fake driver and the fake Cinder, as
``service.build`` runs the real ones; faults are armed with the real
``ComputeAPI.arm_fault`` CALL, as miniapi arms them. What the recovery
tier and the lab tests assert for real (tests/functional/recovery,
tests/functional/faults) is asserted here on the fakes.
"""

import time

import oslo_messaging as messaging
import pytest

from minicompute import exception
from minicompute import power_state
from minicompute import rpcapi
from minicompute import service
from minicompute.db import api as db_api
from minicompute.faults import catalog
from minicompute.virt import fake
from ministack import rpc
from tests.support import fake_cinder
from tests.support import rpc as rpc_support
from tests.support import waiting
from tests.unit.minicompute.manager_flow import action_events
from tests.unit.minicompute.manager_flow import api_attach


def _record(name, fault_id="f-1", volume_id=None, server_id=None,
            seconds=None, **extra):
    return dict({"id": fault_id, "name": name, "volume_id": volume_id,
                 "server_id": server_id, "one_shot": seconds is None,
                 "seconds": seconds or catalog.ONE_SHOT_LIFETIME,
                 "armed_by": {"user_id": "admin"}, "armed_at": "t"},
                **extra)


def _arm(ctxt, client, host, *args, **kwargs):
    return client.arm_fault(ctxt, host, _record(*args, **kwargs))


def _api_detach(ctxt, client, volume_api, server, volume_id):
    """The API phase of a detach, as miniapi does it."""
    bdm = db_api.bdm_get_by_volume_and_instance(ctxt, volume_id,
                                                server["uuid"])
    volume_api.begin_detaching(ctxt, volume_id)
    db_api.action_start(ctxt, server["uuid"], "detach_volume")
    client.detach_volume(ctxt, server, volume_id=volume_id,
                         attachment_id=bdm.attachment_id)


def _error_details(ctxt, server, event):
    return [e.details or "" for e in action_events(ctxt, server)
            if e.event == event and e.result == "Error"]


@pytest.mark.parametrize("name", [catalog.DRIVER_ATTACH,
                                  catalog.ATTACHMENT_COMPLETE])
def test_attach_fault_fires_and_the_flow_undoes_everything(ctxt, stack,
                                                           server, name):
    """Paths 1 and 2: the volume ends available, no BDM, no disk."""
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume(name="plain")
    _arm(ctxt, client, "h1", name, volume_id=vid)
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "available"
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert volume_api.attachment_ids() == []
    # The disk reached the guest and the flow took it out again.
    assert ("attach_volume", server["uuid"], "/dev/vdb") in driver.calls
    assert ("detach_volume", server["uuid"], "/dev/vdb") in driver.calls
    assert driver.get_attached_devices(server) == []
    assert "attachment_complete" not in volume_api.calls
    [details] = _error_details(ctxt, server, "compute_attach_volume")
    assert "Injected fault at %s (ministack-fault f-1)" % name in details


def test_one_shot_is_consumed_the_next_attach_works(ctxt, stack, server):
    svc, client, driver, volume_api = stack
    first = volume_api.add_volume(name="first")
    second = volume_api.add_volume(name="second")
    _arm(ctxt, client, "h1", catalog.DRIVER_ATTACH)       # any volume
    api_attach(ctxt, client, volume_api, server, first)
    assert volume_api.status(first) == "available"
    api_attach(ctxt, client, volume_api, server, second)
    assert volume_api.status(second) == "in-use"
    assert driver.get_attached_devices(server) == ["vdb"]
    listing = client.list_faults(ctxt, "h1")
    assert listing["armed"] == []
    assert [f["volume_id"] for f in listing["fired"]] == [first]


def test_a_fault_for_another_volume_does_not_fire(ctxt, stack, server):
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume(name="plain")
    _arm(ctxt, client, "h1", catalog.DRIVER_ATTACH,
         volume_id="99999999-9999-9999-9999-999999999999")
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    assert len(client.list_faults(ctxt, "h1")["armed"]) == 1


def test_attachment_complete_reads_cinder_only_when_armed(ctxt, stack,
                                                          server):
    """No extra Cinder call per attach with nothing armed."""
    _, client, _, volume_api = stack
    vid = volume_api.add_volume(name="plain")
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    assert "attachment_get" not in volume_api.calls


def test_reserve_timeout_really_times_out_the_call(ctxt, conf, stack,
                                                   server):
    """Path 3: the host creates the BDM and answers too late."""
    svc, client, _, volume_api = stack
    vid = volume_api.add_volume(name="plain")
    _arm(ctxt, client, "h1", catalog.RESERVE_TIMEOUT, volume_id=vid,
         hold_seconds=4)
    caller = rpcapi.ComputeAPI(svc.transport, timeout=1)
    started = time.monotonic()
    with pytest.raises(messaging.MessagingTimeout):
        caller.reserve_block_device_name(ctxt, server, None, vid)
    assert time.monotonic() - started < 3
    # The host did reserve: the BDM the API must destroy exists.
    bdm = db_api.bdm_get_by_volume_and_instance(ctxt, vid, server["uuid"])
    assert bdm.device_name == "/dev/vdb" and bdm.attachment_id is None
    assert volume_api.attachment_ids() == []
    # One shot: the next reservation (another volume) answers at once.
    other = volume_api.add_volume(name="other")
    assert caller.reserve_block_device_name(
        ctxt, server, None, other)["device_name"] == "/dev/vdc"


def test_held_answer_ends_when_the_service_stops(ctxt, conf, nova_db):
    transport = messaging.get_rpc_transport(
        conf, url="fake:/", allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    svc = service.ComputeService(conf, transport, fake.FakeDriver(),
                                 fake_cinder.FakeCinder())
    svc.start()
    try:
        inst = db_api.instance_create(ctxt, {
            "display_name": "vm", "host": "h1", "vm_state": "active"})
        client = rpcapi.ComputeAPI(transport, timeout=1)
        client.arm_fault(ctxt, "h1", _record(catalog.RESERVE_TIMEOUT,
                                             hold_seconds=600))
        with pytest.raises(messaging.MessagingTimeout):
            client.reserve_block_device_name(ctxt, db_api.to_dict(inst),
                                             None, "vol-1")
    finally:
        started = time.monotonic()
        svc.stop()
        transport.cleanup()
    assert time.monotonic() - started < 30


def _attached(ctxt, client, volume_api, server):
    vid = volume_api.add_volume(name="plain")
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    return vid


def test_detach_refused_pauses_the_guest_rolls_back_and_resumes(
        ctxt, conf, stack, server):
    """Path 4: in-use again, the BDM kept, the guest running, retry ok."""
    conf.set_override("device_detach_timeout", 1, group="libvirt")
    _, client, driver, volume_api = stack
    vid = _attached(ctxt, client, volume_api, server)
    _arm(ctxt, client, "h1", catalog.DETACH_REFUSED, server_id=server[
        "uuid"])
    _api_detach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    bdm = db_api.bdm_get_by_volume_and_instance(ctxt, vid, server["uuid"])
    assert bdm.connection_info
    assert driver.get_attached_devices(server) == ["vdb"]
    assert driver.get_power_state(server) == power_state.RUNNING
    calls = [c[0] for c in driver.calls]
    assert calls.index("pause") < calls.index("power_on")   # resumed
    [details] = _error_details(ctxt, server, "compute_detach_volume")
    assert "Device detach failed" in details
    # One shot: the retry detaches.
    _api_detach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "available"
    assert driver.get_attached_devices(server) == []


class EjectingDriver(fake.FakeDriver):
    """A guest that acts, once resumed, on the unplug it was sent while
    paused (QEMU keeps the request)."""

    def __init__(self):
        super().__init__()
        self.pending = None

    def detach_volume(self, ctxt, connection_info, instance, mountpoint):
        if self._get(instance)["power"] == power_state.PAUSED:
            self.pending = mountpoint.rpartition("/")[2]
        return super().detach_volume(ctxt, connection_info, instance,
                                     mountpoint)

    def power_on(self, ctxt, instance):
        super().power_on(ctxt, instance)
        if self.pending:
            del self._get(instance)["devices"][self.pending]


def test_detach_refused_plugs_back_a_disk_the_resumed_guest_ejected(
        ctxt, conf, nova_db):
    conf.set_override("device_detach_timeout", 5, group="libvirt")
    transport = messaging.get_rpc_transport(
        conf, url="fake:/", allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    driver, volume_api = EjectingDriver(), fake_cinder.FakeCinder()
    svc = service.ComputeService(conf, transport, driver, volume_api)
    svc.start()
    try:
        client = rpc_support.cast_as_call(rpcapi.ComputeAPI(transport,
                                                            timeout=10))
        inst = db_api.instance_create(ctxt, {
            "display_name": "vm", "host": "h1", "vm_state": "active",
            "root_device_name": "/dev/vda"})
        server = db_api.to_dict(inst)
        driver.spawn(ctxt, server, {}, {})
        vid = _attached(ctxt, client, volume_api, server)
        _arm(ctxt, client, "h1", catalog.DETACH_REFUSED, volume_id=vid)
        _api_detach(ctxt, client, volume_api, server, vid)
        assert volume_api.status(vid) == "in-use"
        assert ("replug_volume", server["uuid"], "/dev/vdb") in driver.calls
        assert driver.get_attached_devices(server) == ["vdb"]
    finally:
        svc.stop()
        transport.cleanup()


def test_a_paused_guest_is_resumed_at_start_up(ctxt, stack, server):
    """A host that died during a detach-refused leaves its guest paused;
    the next start resumes it."""
    svc, _, driver, _ = stack
    driver.pause(server)
    svc.manager.resume_guests_state(ctxt, "h1")
    assert driver.get_power_state(server) == power_state.RUNNING


def test_unknown_fault_is_refused_by_the_host(ctxt, stack):
    _, client, _, _ = stack
    with pytest.raises(ValueError):
        client.arm_fault(ctxt, "h1", _record("no-such-fault"))


def test_disarm_over_rpc(ctxt, stack):
    _, client, _, _ = stack
    _arm(ctxt, client, "h1", catalog.DRIVER_ATTACH, fault_id="a")
    _arm(ctxt, client, "h1", catalog.DETACH_REFUSED, fault_id="b")
    gone = client.disarm_faults(ctxt, "h1", name=catalog.DETACH_REFUSED)
    assert [g["id"] for g in gone] == ["b"]
    assert [f["id"] for f in client.list_faults(ctxt, "h1")["armed"]] == \
        ["a"]


def test_a_host_that_does_not_answer_is_unavailable(ctxt, stack,
                                                    monkeypatch):
    monkeypatch.setattr(rpcapi, "FAULT_CALL_TIMEOUT", 1)
    _, client, _, _ = stack
    with pytest.raises(exception.ComputeServiceUnavailable):
        client.list_faults(ctxt, "no-such-host")


def test_two_hosts_one_shot_fires_once_then_both_forget_it(ctxt, conf,
                                                            stack, server):
    """Armed on both hosts (a volume's next attach may go to either):
    the host that fires it tells the other to drop its copy."""
    svc, client, _, volume_api = stack
    conf2 = type(conf)()
    from minicompute import conf as compute_conf
    from ministack import config
    config.register_common_opts(conf2)
    compute_conf.register_opts(conf2)
    conf2([], project="minicompute")
    conf2.set_override("host", "h2")
    svc2 = service.ComputeService(conf2, svc.transport, fake.FakeDriver(),
                                  volume_api)
    svc2.start()
    try:
        vid = volume_api.add_volume(name="plain")
        for host in ("h1", "h2"):
            _arm(ctxt, client, host, catalog.DRIVER_ATTACH, volume_id=vid)
        api_attach(ctxt, client, volume_api, server, vid)   # on h1
        assert volume_api.status(vid) == "available"
        waiting.wait_for("h2 dropped the fault", lambda: client.list_faults(
            ctxt, "h2")["armed"] == [], timeout=10)
        assert client.list_faults(ctxt, "h1")["armed"] == []
        assert client.list_faults(ctxt, "h2")["fired"] == []
    finally:
        svc2.stop()
