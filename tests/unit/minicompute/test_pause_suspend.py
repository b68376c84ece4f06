"""pause/unpause and suspend/resume on the compute host: the endpoint
over fake:/ RPC with the fake driver, and the libvirt calls behind them.

A volume attached before stays attached through every step: its BDM,
its Cinder attachment (in-use) and the guest's device are untouched, and
Cinder is not called at all."""

import pytest

from minicompute import exception
from minicompute import power_state
from minicompute.db import api as db_api
from minicompute.virt.libvirt import pause_suspend as libvirt_pause_suspend
from tests.unit.minicompute.manager_flow import action_events
from tests.unit.minicompute.manager_flow import api_attach

# ``stack`` (a ComputeService on fake:/ with the fake driver) and
# ``server`` (one ACTIVE server on it) come from conftest.

STEPS = [  # (cast, action, task state the API set, vm_state, power)
    ("pause_instance", "pause", "pausing", "paused", power_state.PAUSED),
    ("unpause_instance", "unpause", "unpausing", "active",
     power_state.RUNNING),
    ("suspend_instance", "suspend", "suspending", "suspended",
     power_state.SHUTDOWN),
    ("resume_instance", "resume", "resuming", "active", power_state.RUNNING),
]


def _as_the_api(ctxt, server, action, task_state):
    db_api.instance_update(ctxt, server["uuid"], {"task_state": task_state})
    db_api.action_start(ctxt, server["uuid"], action)


def test_each_step_with_a_volume_attached(ctxt, stack, server):
    _svc, client, driver, volume_api = stack
    volume_id = volume_api.add_volume()
    bdm = api_attach(ctxt, client, volume_api, server, volume_id)
    device = bdm["device_name"].rpartition("/")[2]
    assert volume_api.status(volume_id) == "in-use"
    cinder_calls = list(volume_api.calls)
    for cast, action, task_state, vm_state, power in STEPS:
        _as_the_api(ctxt, server, action, task_state)
        getattr(client, cast)(ctxt, server)
        row = db_api.instance_get(ctxt, server["uuid"])
        assert (row.vm_state, row.task_state, row.power_state) == \
            (vm_state, None, power), cast
        assert (action, server["uuid"]) in driver.calls
        assert ("compute_%s_instance" % action, "Success") in [
            (e.event, e.result) for e in action_events(ctxt, server)]
        # the volume is left as it was
        assert device in driver.instances[server["uuid"]]["devices"]
        assert db_api.bdm_get(ctxt, bdm["id"]).connection_info
        assert volume_api.status(volume_id) == "in-use"
    assert volume_api.calls == cinder_calls


@pytest.mark.parametrize("cast,method,task_state,vm_state", [
    ("pause_instance", "pause", "pausing", "active"),
    ("unpause_instance", "unpause", "unpausing", "paused"),
])
def test_failed_pause_or_unpause_only_clears_the_task_state(
        ctxt, stack, server, monkeypatch, cast, method, task_state,
        vm_state):
    _svc, client, driver, _ = stack
    db_api.instance_update(ctxt, server["uuid"], {"vm_state": vm_state})
    _as_the_api(ctxt, server, method, task_state)

    def boom(instance):
        raise exception.InternalError(err="libvirt said no")
    monkeypatch.setattr(driver, method, boom)
    getattr(client, cast)(ctxt, server)     # a cast: the error stays here
    row = db_api.instance_get(ctxt, server["uuid"])
    assert (row.vm_state, row.task_state) == (vm_state, None)
    assert ("compute_%s_instance" % method, "Error") in [
        (e.event, e.result) for e in action_events(ctxt, server)]


@pytest.mark.parametrize("cast,method,task_state,vm_state", [
    ("suspend_instance", "suspend", "suspending", "active"),
    ("resume_instance", "resume", "resuming", "suspended"),
])
def test_failed_suspend_or_resume_is_error_with_the_reason(
        ctxt, stack, server, monkeypatch, cast, method, task_state,
        vm_state):
    _svc, client, driver, _ = stack
    db_api.instance_update(ctxt, server["uuid"], {"vm_state": vm_state})
    _as_the_api(ctxt, server, method, task_state)

    def boom(ctxt, instance):
        raise exception.InternalError(err="no room for the save image")
    monkeypatch.setattr(driver, method, boom)
    getattr(client, cast)(ctxt, server)     # a cast: the error stays here
    row = db_api.instance_get(ctxt, server["uuid"])
    assert (row.vm_state, row.task_state) == ("error", None)
    assert "no room for the save image" in row.fault


def test_a_server_without_domain_is_not_found(ctxt, stack, server):
    _svc, client, driver, _ = stack
    driver.instances.pop(server["uuid"])
    _as_the_api(ctxt, server, "pause", "pausing")
    client.pause_instance(ctxt, server)
    assert db_api.instance_get(ctxt, server["uuid"]).task_state is None


# -- the libvirt side ----------------------------------------------------


class _Guest:
    """What the mixin uses of ``guest.Guest``, recording the calls."""

    def __init__(self, active=True, saved=False):
        self.active, self.saved, self.calls = active, saved, []
        self.domain = object()

    def is_active(self):
        return self.active

    def has_managed_save(self):
        return self.saved

    def launch(self):
        self.calls.append("launch")
        self.active, self.saved = True, False

    def resume(self):
        self.calls.append("resume")

    def save_memory_state(self):
        self.calls.append("managed save")
        self.active, self.saved = False, True


class _Host:
    def __init__(self, guest):
        self.guest = guest

    def get_guest(self, name):
        assert name == "instance-00000001"
        return self.guest


class _Driver(libvirt_pause_suspend.PauseSuspendMixin):
    def __init__(self, guest, conf=None):
        self.host = _Host(guest)
        self.conf = conf


INSTANCE = {"uuid": "u", "name": "instance-00000001"}


def test_libvirt_suspend_is_a_managed_save_and_resume_restores_it(
        monkeypatch):
    guest = _Guest()
    drv = _Driver(guest)
    waited = []
    monkeypatch.setattr(libvirt_pause_suspend.guest_agent, "wait_for_agent",
                        lambda *a, **k: waited.append(a))
    drv.suspend(None, INSTANCE)
    drv.resume(None, INSTANCE)
    assert guest.calls == ["managed save", "launch"]
    assert waited == []     # restored, not booted: no agent to wait for
    drv.resume(None, INSTANCE)      # already running: nothing to do
    assert guest.calls == ["managed save", "launch"]
    drv.unpause(INSTANCE)
    assert guest.calls[-1] == "resume"


def test_libvirt_resume_without_a_saved_image_boots_and_waits(monkeypatch):
    class Conf:
        class compute:
            build_timeout = 7
    guest = _Guest(active=False, saved=False)
    waited = []
    monkeypatch.setattr(libvirt_pause_suspend.guest_agent, "wait_for_agent",
                        lambda domain, timeout: waited.append(timeout))
    _Driver(guest, Conf).resume(None, INSTANCE)
    assert guest.calls == ["launch"] and waited == [7]
