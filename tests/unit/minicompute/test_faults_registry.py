"""The armed faults of one compute host (minicompute/faults/registry.py):
arming, one shot, a window of N seconds, expiry, targets, disarming, and
a take that costs nothing when nothing is armed. The clock is injected,
so nothing sleeps."""

import logging

import pytest

from minicompute.faults import catalog
from minicompute.faults import registry

V1 = "11111111-1111-1111-1111-111111111111"
V2 = "22222222-2222-2222-2222-222222222222"
S1 = "33333333-3333-3333-3333-333333333333"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _record(name=catalog.DRIVER_ATTACH, fault_id="f1", volume_id=None,
            server_id=None, seconds=None):
    return {"id": fault_id, "name": name, "volume_id": volume_id,
            "server_id": server_id, "one_shot": seconds is None,
            "seconds": seconds or catalog.ONE_SHOT_LIFETIME,
            "armed_by": {"user_id": "admin"}, "armed_at": "t"}


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def faults(clock):
    return registry.ArmedFaults("h1", clock=clock)


def test_nothing_armed_take_reads_no_clock_and_no_lock():
    """The attach path's cost with nothing armed: no clock, no lock."""
    def no_clock():
        raise AssertionError("the clock was read")

    faults = registry.ArmedFaults("h1", clock=no_clock)
    faults._lock = None      # a take that locked would fail here
    assert faults.take(catalog.DRIVER_ATTACH, V1, S1) is None
    assert faults.armed(catalog.ATTACHMENT_COMPLETE) is False


def test_one_shot_fires_once_and_calls_on_shot(faults):
    shots = []
    faults.on_shot = shots.append
    faults.arm(_record(volume_id=V1))
    armed = faults.take(catalog.DRIVER_ATTACH, V1, S1, request_id="req-1")
    assert armed is not None and armed.id == "f1"
    assert faults.take(catalog.DRIVER_ATTACH, V1, S1) is None
    assert [a.id for a in shots] == ["f1"]
    assert faults.listing()["armed"] == []
    [fired] = faults.listing()["fired"]
    assert fired["id"] == "f1" and fired["host"] == "h1"
    assert fired["volume_id"] == V1 and fired["server_id"] == S1
    assert fired["request_id"] == "req-1" and fired["fired_at"]


def test_window_fires_every_time_until_it_expires(faults, clock, caplog):
    shots = []
    faults.on_shot = shots.append
    faults.arm(_record(seconds=30))
    assert faults.take(catalog.DRIVER_ATTACH, V1, S1) is not None
    assert faults.take(catalog.DRIVER_ATTACH, V2, S1) is not None
    assert shots == []        # not a one shot: nothing to drop elsewhere
    clock.now += 29
    assert faults.listing()["armed"][0]["seconds_left"] == 1
    assert faults.listing()["armed"][0]["fired"] == 2
    clock.now += 1
    with caplog.at_level(logging.WARNING):
        assert faults.take(catalog.DRIVER_ATTACH, V1, S1) is None
    assert "expired" in caplog.text and "f1" in caplog.text
    assert len(faults.listing()["fired"]) == 2


def test_unused_one_shot_expires_after_its_lifetime(faults, clock, caplog):
    faults.arm(_record())
    clock.now += catalog.ONE_SHOT_LIFETIME - 1
    assert faults.listing()["armed"]
    clock.now += 1
    with caplog.at_level(logging.WARNING):
        assert faults.listing()["armed"] == []
    assert "expired unused" in caplog.text


@pytest.mark.parametrize("volume_id, server_id, fires", [
    (V1, None, {(V1, S1), (V1, "other")}),
    (None, S1, {(V1, S1), (V2, S1)}),
    (None, None, {(V1, S1), (V2, S1), (V1, "other")}),
])
def test_targets(faults, volume_id, server_id, fires):
    faults.arm(_record(volume_id=volume_id, server_id=server_id,
                       seconds=60))
    for op in ((V1, S1), (V2, S1), (V1, "other")):
        fired = faults.take(catalog.DRIVER_ATTACH, *op) is not None
        assert fired == (op in fires), op


def test_only_its_own_point_fires_it(faults):
    faults.arm(_record(name=catalog.DETACH_REFUSED))
    assert faults.take(catalog.DRIVER_ATTACH, V1, S1) is None
    assert faults.armed(catalog.DETACH_REFUSED)
    assert not faults.armed(catalog.DRIVER_ATTACH)
    assert faults.take(catalog.DETACH_REFUSED, V1, S1) is not None


def test_disarm_by_name_by_id_and_all(faults, caplog):
    faults.arm(_record(fault_id="a"))
    faults.arm(_record(name=catalog.RESERVE_TIMEOUT, fault_id="b"))
    faults.arm(_record(name=catalog.RESERVE_TIMEOUT, fault_id="c"))
    with caplog.at_level(logging.WARNING):
        gone = faults.disarm(name=catalog.RESERVE_TIMEOUT, by="admin")
    assert sorted(g["id"] for g in gone) == ["b", "c"]
    assert "disarmed by admin" in caplog.text
    assert [g["id"] for g in faults.disarm(fault_id="zzz")] == []
    assert [g["id"] for g in faults.disarm()] == ["a"]
    assert faults.listing()["armed"] == []


def test_arming_is_logged_with_who_and_what(faults, caplog):
    with caplog.at_level(logging.WARNING):
        listing = faults.arm(_record(volume_id=V1), by="user admin")
    assert listing["host"] == "h1" and listing["seconds_left"] == \
        catalog.ONE_SHOT_LIFETIME
    assert "armed (f1) by user admin" in caplog.text
    assert "volume %s" % V1 in caplog.text and "one shot" in caplog.text


def test_unknown_name_is_refused(faults):
    with pytest.raises(ValueError):
        faults.arm(_record(name="no-such-fault"))


def test_history_is_bounded(faults):
    faults.arm(_record(seconds=60))
    for _ in range(registry.HISTORY + 5):
        faults.take(catalog.DRIVER_ATTACH, V1, S1)
    assert len(faults.listing()["fired"]) == registry.HISTORY


def test_on_shot_failure_does_not_break_the_fault(faults):
    def broken(armed):
        raise RuntimeError("broker down")

    faults.on_shot = broken
    faults.arm(_record())
    assert faults.take(catalog.DRIVER_ATTACH, V1, S1) is not None
