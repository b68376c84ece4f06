"""Small helpers of the compute manager: instance locks and action events.

* :func:`instance_lock` is nova's ``@utils.synchronized(instance.uuid)``
  for what changes the whole instance (build, reboot, stop, start,
  terminate, the reconciler): one at a time, and none while a volume
  operation on the instance is in flight.
* :func:`volume_lock` is what an attach or a detach holds: the instance's
  lock *shared* (so terminate or a reboot waits for it, and it waits for
  them) and that one volume's lock. Nova holds the instance lock for the
  whole attach, so the eight attaches of one server run one after the
  other, each waiting on the previous one's Cinder calls; here two
  volumes of one server are wired at once, as by hand (libvirt serialises
  the domain's own device changes).
* :func:`device_name_lock` is what reserving a device name holds: the
  instance's lock shared, the volume's lock (so a reserve right after a
  detach of the same volume, whose BDM is destroyed last, waits for it
  rather than finding the BDM still there) and the instance's device-name
  lock, so two racing reserves cannot pick the same /dev/vdX; a reserve
  does not wait for another volume's attach to finish.
* :class:`EventReporter` is nova's ``wrap_instance_event``: it records a
  ``compute_<method>`` event in the request's instance action, finishing it
  with ``Success`` or ``Error`` plus the reason, so ``openstack server event
  list`` shows what the host did.
"""

import contextlib
import threading
import traceback as tb

from oslo_log import log as logging

from minicompute import exception
from minicompute.db import api as db_api

LOG = logging.getLogger(__name__)


class SharedExclusiveLock:
    """A lock held either by one thread (exclusive, re-entrant) or by
    any number of threads at once (shared, re-entrant per thread).

    Exclusive waiters go first: once one waits, no new shared holder gets
    in, so a terminate is not starved by a stream of attaches. A thread
    that holds it exclusively may take it shared too (counted as exclusive
    re-entry); a shared holder asking for it exclusively is a bug that
    would deadlock, and raises instead.
    """

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._owner = None        # thread ident of the exclusive holder
        self._depth = 0           # its re-entry count
        self._shared = {}         # thread ident -> shared re-entry count
        self._writers_waiting = 0

    @contextlib.contextmanager
    def exclusive(self):
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
            else:
                if me in self._shared:
                    raise RuntimeError("shared holder asked for the "
                                       "instance lock exclusively")
                self._writers_waiting += 1
                try:
                    while self._owner is not None or self._shared:
                        self._cond.wait()
                finally:
                    self._writers_waiting -= 1
                self._owner, self._depth = me, 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._owner = None
                    self._cond.notify_all()

    @contextlib.contextmanager
    def shared(self):
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                nested_in_exclusive = True
            else:
                nested_in_exclusive = False
                if me not in self._shared:
                    while (self._owner is not None
                           or self._writers_waiting):
                        self._cond.wait()
                self._shared[me] = self._shared.get(me, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                if nested_in_exclusive:
                    self._depth -= 1
                else:
                    self._shared[me] -= 1
                    if not self._shared[me]:
                        del self._shared[me]
                        if not self._shared:
                            self._cond.notify_all()


class _KeyedLocks:
    """One lock object per key, made on first use and dropped when no
    thread holds or waits for it any more (so per-volume locks do not
    pile up over a long-running host's life)."""

    def __init__(self, factory):
        self._factory = factory
        self._guard = threading.Lock()
        self._locks = {}          # key -> [lock, users]

    @contextlib.contextmanager
    def get(self, key):
        with self._guard:
            entry = self._locks.setdefault(key, [self._factory(), 0])
            entry[1] += 1
        try:
            yield entry[0]
        finally:
            with self._guard:
                entry[1] -= 1
                if not entry[1]:
                    del self._locks[key]

    def __len__(self):
        with self._guard:
            return len(self._locks)


_INSTANCE_LOCKS = _KeyedLocks(SharedExclusiveLock)
_VOLUME_LOCKS = _KeyedLocks(threading.Lock)
_DEVICE_NAME_LOCKS = _KeyedLocks(threading.Lock)


@contextlib.contextmanager
def instance_lock(instance_uuid):
    """Hold the instance's lock exclusively (re-entrant within a thread):
    no other lifecycle operation and no volume operation on it runs."""
    with _INSTANCE_LOCKS.get(instance_uuid) as lock, lock.exclusive():
        yield


@contextlib.contextmanager
def volume_lock(instance_uuid, volume_id):
    """Hold the instance's lock shared and the lock of ``volume_id`` on
    it: the attach or detach of that volume, beside other volumes'."""
    with _INSTANCE_LOCKS.get(instance_uuid) as lock, lock.shared(), \
            _VOLUME_LOCKS.get((instance_uuid, volume_id)) as vlock, vlock:
        yield


@contextlib.contextmanager
def device_name_lock(instance_uuid, volume_id):
    """Hold the instance's lock shared, ``volume_id``'s lock on it, then
    the instance's device-name lock (always the innermost, so no cycle
    with :func:`volume_lock`): picking a free /dev/vdX and recording it
    in a BDM."""
    with _INSTANCE_LOCKS.get(instance_uuid) as lock, lock.shared(), \
            _VOLUME_LOCKS.get((instance_uuid, volume_id)) as vlock, vlock, \
            _DEVICE_NAME_LOCKS.get(instance_uuid) as nlock, nlock:
        yield


class EventReporter:
    """Record ``event`` on the request's instance action around a block.

    A missing action (a request that did not record one, e.g. a test
    driving RPC directly) is logged, never fatal: event bookkeeping must
    not break the operation it describes.
    """

    def __init__(self, ctxt, event, host, instance_uuid, subject=None):
        """:param subject: what the event works on (``volume <id>``),
        kept in the running event's details so that a restart can tell
        which volume an interrupted event was handling."""
        self.ctxt = ctxt
        self.event = event
        self.host = host
        self.instance_uuid = instance_uuid
        self.subject = subject
        self._started = None      # the event row, once recorded

    def __enter__(self):
        try:
            self._started = db_api.action_event_start(
                self.ctxt, self.instance_uuid, self.event, self.host,
                details=self.subject)
        except exception.InstanceActionNotFound:
            LOG.debug("No action for request %s on %s; event %s not "
                      "recorded", self.ctxt.request_id, self.instance_uuid,
                      self.event)
        return self

    def __exit__(self, exc_type, exc, exc_tb):
        if self._started is None:
            return False
        if exc is None:
            result, details, trace = "Success", None, None
        else:
            result = "Error"
            details = (exc.format_message() if hasattr(exc, "format_message")
                       else str(exc)) or exc_type.__name__
            if self.subject:
                details = "%s: %s" % (self.subject, details)
            trace = "".join(tb.format_exception(exc_type, exc, exc_tb))
        try:
            db_api.action_event_finish(
                self.ctxt, self.instance_uuid, self.event, self.host,
                result=result, details=details, traceback=trace,
                started=self._started)
        except Exception:  # never mask the operation's own outcome
            LOG.exception("Could not finish event %s", self.event)
        return False


def tail_lines(data, count):
    """The last ``count`` newline-separated pieces of ``data`` (bytes), as
    nova's ``_tail_log``: 0 gives nothing; the output always splits into
    exactly ``count`` pieces when the log has that many (the empty piece
    after a trailing newline counts, as upstream)."""
    if count <= 0:
        return b""
    return b"\n".join(data.split(b"\n")[-count:])
