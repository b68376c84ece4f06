"""Test-only fault injection is built around the driver and Cinder adapter.

The attach flow has no hooks; :func:`minicompute.fault_injection.wrap`
wraps the fake driver and the fake Cinder here as ``service.build`` wraps
the real ones when ``[fault_injection] enabled`` is true. What the
recovery tier asserts for real (tests/functional/recovery) is asserted
here on the fakes: the flow undoes everything.
"""

import oslo_messaging as messaging
import pytest

from minicompute import fault_injection
from minicompute import rpcapi
from minicompute import service
from minicompute.db import api as db_api
from minicompute.virt import fake
from ministack import rpc
from tests.support import fake_cinder
from tests.support import rpc as rpc_support
from tests.unit.minicompute.manager_flow import action_events
from tests.unit.minicompute.manager_flow import api_attach


@pytest.fixture
def stack(conf, nova_db):
    conf.set_override("enabled", True, group="fault_injection")
    transport = messaging.get_rpc_transport(
        conf, url="fake:/", allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    driver, volume_api = fake.FakeDriver(), fake_cinder.FakeCinder()
    wrapped_driver, wrapped_api = fault_injection.wrap(conf, driver,
                                                       volume_api)
    svc = service.ComputeService(conf, transport, wrapped_driver,
                                 wrapped_api)
    svc.start()
    # Casts as calls: each returns once the manager has handled it.
    client = rpc_support.cast_as_call(rpcapi.ComputeAPI(transport,
                                                        timeout=10))
    yield svc, client, driver, volume_api
    svc.stop()
    transport.cleanup()


def test_disabled_wraps_nothing(conf):
    driver, volume_api = object(), object()
    assert fault_injection.wrap(conf, driver, volume_api) == (driver,
                                                              volume_api)


@pytest.mark.parametrize("point", fault_injection.POINTS)
def test_point_fires_and_the_flow_undoes_everything(ctxt, stack, server,
                                                    point):
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume(name="inject-fault-%s" % point)
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "available"
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])
    assert volume_api.attachment_ids() == []
    # The disk reached the guest and the flow took it out again.
    assert ("attach_volume", server["uuid"], "/dev/vdb") in driver.calls
    assert ("detach_volume", server["uuid"], "/dev/vdb") in driver.calls
    assert driver.get_attached_devices(server) == []
    assert "attachment_complete" not in volume_api.calls
    assert any(e.result == "Error" for e in action_events(ctxt, server))
    events = action_events(ctxt, server)
    assert any("Injected fault at %s" % point in (e.details or "")
               for e in events)


def test_unmarked_volume_attaches_normally(ctxt, stack, server):
    _, client, driver, volume_api = stack
    vid = volume_api.add_volume(name="plain")
    api_attach(ctxt, client, volume_api, server, vid)
    assert volume_api.status(vid) == "in-use"
    assert driver.get_attached_devices(server) == ["vdb"]
