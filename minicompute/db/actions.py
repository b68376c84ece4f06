"""Instance actions and their events (``openstack server event list``).

The API records one action per request (``action_start``, keyed by the
request id); the compute manager adds ``compute_<method>`` events to the
action of the same request id, as nova's ``EventReporter`` does. Part of
``minicompute.db.api``, which re-exports every public function here.
"""

from minicompute import exception
from ministack import db
from minicompute.db import models
from minicompute.db.session import scope as _scope


def action_start(ctxt, instance_uuid, action):
    """Record that ``action`` started on the instance for this request."""
    with _scope() as session:
        row = models.InstanceAction(
            action=action, instance_uuid=instance_uuid,
            request_id=ctxt.request_id, user_id=ctxt.user_id,
            project_id=ctxt.project_id, start_time=db.utcnow())
        session.add(row)
    return row


def _action_for_request(session, instance_uuid, request_id):
    action = session.query(models.InstanceAction).filter_by(
        instance_uuid=instance_uuid, request_id=request_id,
        deleted=0).order_by(models.InstanceAction.id.desc()).first()
    if action is None:
        raise exception.InstanceActionNotFound(request_id=request_id,
                                               instance_uuid=instance_uuid)
    return action


def action_finish(ctxt, instance_uuid, message=None):
    """Stamp the finish time on this request's action.

    :raises InstanceActionNotFound:
    """
    with _scope() as session:
        action = _action_for_request(session, instance_uuid,
                                     ctxt.request_id)
        action.finish_time = db.utcnow()
        if message is not None:
            action.message = message
    return action


def action_event_start(ctxt, instance_uuid, event, host, details=None):
    """Add ``event`` (e.g. compute_attach_volume) to this request's action.

    :param details: kept on the running event (what it works on, e.g.
        ``volume <id>``); finishing the event overwrites it.
    :raises InstanceActionNotFound: no action for ``ctxt.request_id``.
    """
    with _scope() as session:
        action = _action_for_request(session, instance_uuid,
                                     ctxt.request_id)
        row = models.InstanceActionEvent(
            event=event, action_id=action.id, host=host,
            start_time=db.utcnow(), details=details)
        session.add(row)
        action.updated_at = db.utcnow()
    return row


def action_event_finish(ctxt, instance_uuid, event, host, result="Success",
                        details=None, traceback=None):
    """Finish ``event``; an ``Error`` result also marks the action Error.

    :raises InstanceActionNotFound: no action for ``ctxt.request_id``.
    :raises InstanceActionEventNotFound: the event was never started.
    """
    with _scope() as session:
        action = _action_for_request(session, instance_uuid,
                                     ctxt.request_id)
        row = session.query(models.InstanceActionEvent).filter_by(
            action_id=action.id, event=event, deleted=0).order_by(
            models.InstanceActionEvent.id.desc()).first()
        if row is None:
            raise exception.InstanceActionEventNotFound(event=event,
                                                        action_id=action.id)
        now = db.utcnow()
        row.finish_time = now
        row.result = result
        row.host = host
        row.details = details
        row.traceback = traceback
        action.updated_at = now
        if result.lower() == "error":
            action.message = "Error"
    return row


def action_get_all(ctxt, instance_uuid):
    """The instance's actions, newest first (as nova's API lists them)."""
    with _scope() as session:
        return session.query(models.InstanceAction).filter_by(
            instance_uuid=instance_uuid, deleted=0).order_by(
            models.InstanceAction.created_at.desc(),
            models.InstanceAction.id.desc()).all()


def action_get_by_request_id(ctxt, instance_uuid, request_id):
    """The instance's action for ``request_id``.

    :raises InstanceActionNotFound:
    """
    with _scope() as session:
        return _action_for_request(session, instance_uuid, request_id)


def action_events_get(ctxt, action_id):
    """The events of action ``action_id``, newest first."""
    with _scope() as session:
        return session.query(models.InstanceActionEvent).filter_by(
            action_id=action_id, deleted=0).order_by(
            models.InstanceActionEvent.created_at.desc(),
            models.InstanceActionEvent.id.desc()).all()


def action_events_running(ctxt, events=None, host=None):
    """``(event, action)`` rows of the events not finished yet: an
    operation in flight, or one its compute host died during.

    :param events: only these event names (``compute_attach_volume``...).
    :param host: only events of this compute host.
    """
    with _scope() as session:
        query = session.query(models.InstanceActionEvent,
                              models.InstanceAction).join(
            models.InstanceAction,
            models.InstanceAction.id ==
            models.InstanceActionEvent.action_id).filter(
            models.InstanceActionEvent.finish_time.is_(None),
            models.InstanceActionEvent.deleted == 0)
        if events is not None:
            query = query.filter(
                models.InstanceActionEvent.event.in_(list(events)))
        if host is not None:
            query = query.filter(models.InstanceActionEvent.host == host)
        return query.all()
