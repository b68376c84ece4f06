"""The compute host's locks (``minicompute.utils``): lifecycle operations
hold an instance exclusively, attaches and detaches hold it shared plus
their volume's lock, so two volumes of one server are wired at once while
a terminate still waits for both.

The manager tests drive ``ComputeManager`` on the ``stack`` fixture with
the fake driver's attach held open, so each asserts an overlap (or its
absence) that the old single instance lock could not give.
"""

import threading

import pytest

from minicompute import utils
from minicompute.db import api as db_api
from tests.unit.minicompute.manager_flow import api_attach

WAIT = 5   # seconds a thread may take to get where the test expects it


def _thread(target, *args):
    t = threading.Thread(target=target, args=args, daemon=True)
    t.start()
    return t


# --- SharedExclusiveLock -------------------------------------------------

def test_shared_holders_overlap():
    lock = utils.SharedExclusiveLock()
    both_in = threading.Barrier(2, timeout=WAIT)

    def hold():
        with lock.shared():
            both_in.wait()      # breaks (raises) unless both are inside

    threads = [_thread(hold), _thread(hold)]
    for t in threads:
        t.join(WAIT)
    assert not both_in.broken


def test_exclusive_waits_for_shared_and_blocks_new_shared():
    lock = utils.SharedExclusiveLock()
    order = []
    inside, release = threading.Event(), threading.Event()
    writer_waiting = threading.Event()

    def reader(name, gate=None):
        with lock.shared():
            order.append(name)
            if gate:
                inside.set()
                gate.wait(WAIT)

    def writer():
        writer_waiting.set()
        with lock.exclusive():
            order.append("writer")

    r1 = _thread(reader, "r1", release)
    assert inside.wait(WAIT)
    w = _thread(writer)
    assert writer_waiting.wait(WAIT)
    # Negative assertion: give the writer time to (wrongly) get in.
    w.join(0.1)
    assert w.is_alive() and order == ["r1"]
    r2 = _thread(reader, "r2")   # arrives while the writer waits
    r2.join(0.1)
    assert order == ["r1"], "a new shared holder overtook a waiting writer"
    release.set()
    for t in (r1, w, r2):
        t.join(WAIT)
    assert order == ["r1", "writer", "r2"]


def test_reentry():
    lock = utils.SharedExclusiveLock()
    with lock.exclusive(), lock.exclusive(), lock.shared():
        pass
    with lock.shared(), lock.shared():
        with pytest.raises(RuntimeError):
            with lock.exclusive():
                pass
    # Everything released: another thread gets it exclusively at once.
    got = threading.Event()

    def take():
        with lock.exclusive():
            got.set()

    _thread(take).join(WAIT)
    assert got.is_set()


def test_keyed_locks_are_dropped_after_use():
    before = (len(utils._INSTANCE_LOCKS), len(utils._VOLUME_LOCKS),
              len(utils._DEVICE_NAME_LOCKS))
    with utils.volume_lock("i-1", "v-1"), utils.device_name_lock("i-1",
                                                                 "v-2"):
        assert len(utils._VOLUME_LOCKS) == before[1] + 2
    with utils.instance_lock("i-2"):
        pass
    assert (len(utils._INSTANCE_LOCKS), len(utils._VOLUME_LOCKS),
            len(utils._DEVICE_NAME_LOCKS)) == before


# --- the manager ---------------------------------------------------------

@pytest.fixture
def held_attach(stack):
    """The fake driver's attach_volume blocks until ``release`` is set;
    ``entered`` counts the attaches inside it."""
    driver = stack[2]
    state = {"release": threading.Event(), "entered": threading.Semaphore(0)}
    real = driver.attach_volume

    def attach_volume(*args, **kwargs):
        state["entered"].release()
        assert state["release"].wait(WAIT), "the test never released it"
        return real(*args, **kwargs)

    driver.attach_volume = attach_volume
    yield state
    state["release"].set()


def test_two_volumes_of_one_server_attach_at_once(ctxt, stack, server,
                                                 held_attach):
    """Both attaches are inside the driver at the same time (with nova's
    single instance lock the second would wait for the first)."""
    _, client, driver, volume_api = stack
    vids = [volume_api.add_volume(), volume_api.add_volume()]
    threads = [_thread(api_attach, ctxt, client, volume_api, server, vid)
               for vid in vids]
    assert held_attach["entered"].acquire(timeout=WAIT)
    assert held_attach["entered"].acquire(timeout=WAIT), \
        "the second attach waited for the first"
    held_attach["release"].set()
    for t in threads:
        t.join(WAIT)
    assert driver.get_attached_devices(server) == ["vdb", "vdc"]
    assert {volume_api.status(v) for v in vids} == {"in-use"}


def test_reserve_does_not_wait_for_another_attach(ctxt, stack, server,
                                                  held_attach):
    svc, client, _, volume_api = stack
    vid = volume_api.add_volume()
    attach = _thread(api_attach, ctxt, client, volume_api, server, vid)
    assert held_attach["entered"].acquire(timeout=WAIT)
    names = []
    reserve = _thread(lambda: names.append(
        svc.manager.reserve_block_device_name(
            ctxt, server, None, "other-volume")["device_name"]))
    reserve.join(WAIT)
    assert names == ["/dev/vdc"]
    held_attach["release"].set()
    attach.join(WAIT)


def test_terminate_waits_for_an_attach_in_flight(ctxt, stack, server,
                                                held_attach):
    """A terminate arriving mid-attach runs after it and detaches the
    volume the attach wired, instead of destroying the guest under it."""
    svc, client, driver, volume_api = stack
    vid = volume_api.add_volume()
    attach = _thread(api_attach, ctxt, client, volume_api, server, vid)
    assert held_attach["entered"].acquire(timeout=WAIT)
    db_api.action_start(ctxt, server["uuid"], "delete")
    terminate = _thread(svc.manager.terminate_instance, ctxt, server)
    # Negative assertion: the terminate must still be waiting.
    terminate.join(0.2)
    assert terminate.is_alive()
    assert ("destroy", server["uuid"]) not in driver.calls
    held_attach["release"].set()
    attach.join(WAIT)
    terminate.join(WAIT)
    calls = [c[0] for c in driver.calls if c[0] != "spawn"]
    assert calls == ["attach_volume", "detach_volume", "destroy"]
    assert volume_api.status(vid) == "available"
    assert not db_api.bdm_get_all_by_instance(ctxt, server["uuid"])


def test_reserve_waits_for_a_detach_of_the_same_volume(ctxt, stack, server):
    """A detach destroys its BDM last, after Cinder already says
    ``available``: a reserve of that volume arriving then waits for the
    detach to finish instead of finding the BDM and answering "already
    attached" (the soak's re-attach right after ``available``)."""
    svc, _, _, volume_api = stack
    vid = volume_api.add_volume()
    bdm = svc.manager.reserve_block_device_name(ctxt, server, None, vid)
    detaching, release = threading.Event(), threading.Event()

    def detach_in_flight():
        with utils.volume_lock(server["uuid"], vid):
            detaching.set()
            release.wait(WAIT)
            db_api.bdm_destroy(ctxt, bdm["id"])   # the detach's last step

    detach = _thread(detach_in_flight)
    assert detaching.wait(WAIT)
    names = []
    reserve = _thread(lambda: names.append(
        svc.manager.reserve_block_device_name(ctxt, server, None,
                                              vid)["device_name"]))
    other = svc.manager.reserve_block_device_name(ctxt, server, None, "v2")
    assert other["device_name"] == "/dev/vdc"   # not held up
    # Negative assertion: the same volume's reserve must still wait.
    reserve.join(0.1)
    assert reserve.is_alive()
    assert names == []
    release.set()
    detach.join(WAIT)
    reserve.join(WAIT)
    assert names == ["/dev/vdb"]
