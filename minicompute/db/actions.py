"""Instance actions and their events (``openstack server event list``).

The API records one action per request (``action_start``, keyed by the
request id); the compute manager adds ``compute_<method>`` events to the
action of the same request id, as nova's ``EventReporter`` does. Part of
``minicompute.db.api``, which re-exports every public function here.
"""

import sqlalchemy as sa

from minicompute import exception
from minicompute.db import models
from minicompute.db.session import begin as _begin
from minicompute.db.session import scope as _scope
from ministack import db

_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__

# Prebuilt once, with bound parameters (b_*: a bound name may not be a
# column's name in an UPDATE).
_ACTION_ID_FOR_REQUEST = (
    sa.select(_ACTIONS.c.id)
    .where(_ACTIONS.c.instance_uuid == sa.bindparam("b_instance_uuid"),
           _ACTIONS.c.request_id == sa.bindparam("b_request_id"),
           _ACTIONS.c.deleted == 0)
    .order_by(_ACTIONS.c.id.desc()).limit(1))
_LATEST_EVENT = (
    sa.select(_EVENTS.c.id)
    .where(_EVENTS.c.action_id == sa.bindparam("b_action_id"),
           _EVENTS.c.event == sa.bindparam("b_event"),
           _EVENTS.c.deleted == 0)
    .order_by(_EVENTS.c.id.desc()).limit(1))
_TOUCH_ACTION = (
    _ACTIONS.update().where(_ACTIONS.c.id == sa.bindparam("b_action_id"))
    .values(updated_at=sa.bindparam("b_now")))
_TOUCH_ACTION_ERROR = _TOUCH_ACTION.values(message="Error")
_FINISH_EVENT = (
    _EVENTS.update().where(_EVENTS.c.id == sa.bindparam("b_event_id"),
                           _EVENTS.c.deleted == 0)
    .values(finish_time=sa.bindparam("b_now"),
            result=sa.bindparam("b_result"), host=sa.bindparam("b_host"),
            details=sa.bindparam("b_details"),
            traceback=sa.bindparam("b_traceback"),
            updated_at=sa.bindparam("b_now")))


def action_start(ctxt, instance_uuid, action):
    """Record that ``action`` started on the instance for this request.

    One Core INSERT (every attach and detach request records one).

    :returns: the new action (``id`` and the columns written here), not
        bound to a session.
    """
    now = db.utcnow()
    values = {"action": action, "instance_uuid": instance_uuid,
              "request_id": ctxt.request_id, "user_id": ctxt.user_id,
              "project_id": ctxt.project_id, "start_time": now,
              "created_at": now}
    with _begin() as conn:
        action_id = conn.execute(_ACTIONS.insert(),
                                 values).inserted_primary_key[0]
    return models.InstanceAction(id=action_id, deleted=0, **values)


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


def _action_id_for_request(conn, instance_uuid, request_id):
    action_id = conn.execute(_ACTION_ID_FOR_REQUEST, {
        "b_instance_uuid": instance_uuid,
        "b_request_id": request_id}).scalar()
    if action_id is None:
        raise exception.InstanceActionNotFound(request_id=request_id,
                                               instance_uuid=instance_uuid)
    return action_id


def action_event_start(ctxt, instance_uuid, event, host, details=None):
    """Add ``event`` (e.g. compute_attach_volume) to this request's action.

    Core statements (the action's id, the event's INSERT, the action's
    ``updated_at``) in one transaction: every attach and detach records
    an event, and the ORM's query, identity map and flush made this and
    :func:`action_event_finish` a large share of minicompute's CPU per
    attach.

    :param details: kept on the running event (what it works on, e.g.
        ``volume <id>``); finishing the event overwrites it.
    :returns: the new event (``id``, ``action_id`` and the columns
        written here), not bound to a session; hand it to
        :func:`action_event_finish` as ``started``.
    :raises InstanceActionNotFound: no action for ``ctxt.request_id``.
    """
    now = db.utcnow()
    values = {"event": event, "host": host, "start_time": now,
              "details": details, "created_at": now}
    with _begin() as conn:
        values["action_id"] = _action_id_for_request(
            conn, instance_uuid, ctxt.request_id)
        event_id = conn.execute(_EVENTS.insert(),
                                values).inserted_primary_key[0]
        conn.execute(_TOUCH_ACTION, {"b_action_id": values["action_id"],
                                     "b_now": now})
    return models.InstanceActionEvent(id=event_id, deleted=0, **values)


def action_event_finish(ctxt, instance_uuid, event, host, result="Success",
                        details=None, traceback=None, started=None):
    """Finish ``event``; an ``Error`` result also marks the action Error.

    :param started: the event :func:`action_event_start` returned, when
        the caller kept it: it is finished without looking up the
        request's action and its latest ``event`` again (the same row).
    :returns: the finished event (``id``, ``action_id`` and the columns
        written here), not bound to a session.
    :raises InstanceActionNotFound: no action for ``ctxt.request_id``.
    :raises InstanceActionEventNotFound: the event was never started (or
        ``started`` is gone).
    """
    now = db.utcnow()
    with _begin() as conn:
        if started is not None:
            action_id, event_id = started.action_id, started.id
        else:
            action_id = _action_id_for_request(conn, instance_uuid,
                                               ctxt.request_id)
            event_id = conn.execute(_LATEST_EVENT, {
                "b_action_id": action_id, "b_event": event}).scalar()
        updated = event_id is not None and conn.execute(_FINISH_EVENT, {
            "b_event_id": event_id, "b_now": now, "b_result": result,
            "b_host": host, "b_details": details,
            "b_traceback": traceback}).rowcount
        if not updated:
            raise exception.InstanceActionEventNotFound(event=event,
                                                        action_id=action_id)
        conn.execute(_TOUCH_ACTION_ERROR if result.lower() == "error"
                     else _TOUCH_ACTION,
                     {"b_action_id": action_id, "b_now": now})
    return models.InstanceActionEvent(
        id=event_id, action_id=action_id, event=event, host=host,
        finish_time=now, result=result, details=details,
        traceback=traceback, updated_at=now, deleted=0)


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
