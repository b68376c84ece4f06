"""Small helpers of the compute manager: instance locks and action events.

* :func:`instance_lock` is nova's ``@utils.synchronized(instance.uuid)``:
  every volume operation on one instance (reserve a device name, attach,
  detach, terminate) runs under the same lock, so two of them never
  interleave and two racing attaches cannot pick the same /dev/vdX.
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

_LOCKS = {}
_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def instance_lock(instance_uuid):
    """Hold the per-instance lock (re-entrant within a thread).

    Locks are kept for the life of the process: a few bytes per instance
    this host has seen, in exchange for never racing on lock removal.
    """
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(instance_uuid, threading.RLock())
    with lock:
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
        self._started = False

    def __enter__(self):
        try:
            row = db_api.action_event_start(self.ctxt, self.instance_uuid,
                                            self.event, self.host)
            self._started = True
            if self.subject:
                _set_event_details(row.id, self.subject)
        except exception.InstanceActionNotFound:
            LOG.debug("No action for request %s on %s; event %s not "
                      "recorded", self.ctxt.request_id, self.instance_uuid,
                      self.event)
        return self

    def __exit__(self, exc_type, exc, exc_tb):
        if not self._started:
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
                result=result, details=details, traceback=trace)
        except Exception:  # never mask the operation's own outcome
            LOG.exception("Could not finish event %s", self.event)
        return False


def _set_event_details(event_id, details):
    """Write ``details`` on a running event (action_event_start has no
    such argument; finishing the event overwrites it)."""
    from minicompute.db import models
    from minicompute.db.session import scope
    with scope() as session:
        session.query(models.InstanceActionEvent).filter_by(
            id=event_id).update({"details": details},
                                synchronize_session=False)


def tail_lines(data, count):
    """The last ``count`` newline-separated pieces of ``data`` (bytes), as
    nova's ``_tail_log``: 0 gives nothing; the output always splits into
    exactly ``count`` pieces when the log has that many (the empty piece
    after a trailing newline counts, as upstream)."""
    if count <= 0:
        return b""
    return b"\n".join(data.split(b"\n")[-count:])
