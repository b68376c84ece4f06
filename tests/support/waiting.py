"""The one waiter of every test tier: poll a condition, never sleep a
fixed time and hope.

``wait_for`` polls ``get()`` until ``done(value)``, fails fast on
``failed(value)`` and says what it saw last when time runs out; the
waiters of the tempest-style suite (``tests/tempest_style/waiters.py``)
are built on it, and so are the functional tier's waits for daemons,
database servers and guests.
"""

import time


class WaitTimeout(AssertionError):
    """Time ran out; ``value`` is the last value seen (None if every poll
    raised one of the ignored exceptions, then in ``error``)."""

    def __init__(self, message, value=None, error=None):
        super().__init__(message)
        self.value = value
        self.error = error


class ErrorState(AssertionError):
    pass


def wait_for(describe, get, done=bool, failed=None, timeout=60,
             interval=0.25, ignoring=()):
    """Poll ``get()`` until ``done(value)``; fail fast on ``failed(value)``.

    :param describe: a phrase like "volume 1234 to become available"; it
        starts every failure message.
    :param done: by default, the value is true.
    :param ignoring: exception types ``get()`` may raise while the thing
        is not there yet (a port not listening): polled again; the last
        one is named if time runs out.
    :returns: the last value.
    :raises WaitTimeout: after ``timeout`` seconds.
    :raises ErrorState: ``failed(value)`` was true.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            value, error = get(), None
        except ignoring as exc:
            value, error = None, exc
        if error is None:
            if done(value):
                return value
            if failed is not None and failed(value):
                raise ErrorState("waiting for %s: reached an error state: "
                                 "%s" % (describe, value))
        if time.monotonic() > deadline:
            raise WaitTimeout("waiting for %s: still %s after %ss" % (
                describe, value if error is None else repr(error),
                timeout), value, error)
        time.sleep(interval)
