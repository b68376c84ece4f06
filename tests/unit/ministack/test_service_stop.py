"""A daemon told to stop stops (ministack/service.py).

A miniapi whose broker had moved away (the lab's controller address
changed under it) hung for good in its stop(), in oslo.messaging's
cleanup retrying the old address; its supervisor was killed after 30 s
and the daemon ran on without it. run() now gives stop() STOP_TIMEOUT
seconds, then exits without it.
"""

import threading

from oslo_config import cfg

from ministack import service


class _Service(service.Service):
    def __init__(self, stop_blocks):
        self.stop_blocks = stop_blocks
        self.stop_called = threading.Event()

    def start(self, stop_event):
        stop_event.set()            # as if SIGTERM came at once

    def stop(self):
        self.stop_called.set()
        if self.stop_blocks:
            threading.Event().wait()        # forever, as the hung cleanup


def _run(svc, exits):
    return service.run("ministack-test", lambda conf: svc, argv=[],
                       conf=cfg.ConfigOpts(), stop_timeout=0.5,
                       _exit=exits.append)


def test_a_stop_that_returns_is_a_clean_exit():
    exits = []
    svc = _Service(stop_blocks=False)
    assert _run(svc, exits) == 0
    assert svc.stop_called.is_set()
    assert exits == []


def test_a_stop_that_hangs_exits_1_after_the_timeout(monkeypatch):
    errors = []
    monkeypatch.setattr(service.LOG, "error",
                        lambda fmt, *args: errors.append(fmt % args))
    exits = []
    svc = _Service(stop_blocks=True)
    assert _run(svc, exits) == 1
    assert svc.stop_called.is_set()
    assert exits == [1]         # os._exit: the hung threads end with it
    assert errors == ["ministack-test: stop not done after 0.5s; exiting "
                      "without it"]


def test_a_stop_that_raises_is_logged_and_the_daemon_exits():
    class Raising(_Service):
        def stop(self):
            raise RuntimeError("the broker is gone")
    exits = []
    assert _run(Raising(stop_blocks=False), exits) == 0
    assert exits == []
