"""The offload of shelved servers after ``shelved_offload_time`` (nova's
``_poll_shelved_instances`` periodic task).

With ``[DEFAULT] shelved_offload_time`` > 0 a shelve leaves the server
SHELVED on its host (the guest defined, powered off, its volumes still
connected). Every ``shelved_poll_interval`` seconds the host offloads
those of its servers that have been SHELVED, with no task, for longer
than that: it claims each one (task ``shelving_offloading``, compared
and swapped, so an unshelve or an admin's offload that won the race is
left alone) and runs the same offload as ``shelveOffload``
(:meth:`minicompute.shelve.ShelveEndpoint.shelve_offload_instance`).

How long a server has been shelved: nova keeps ``shelved_at`` in its
system_metadata; ministack reads the end of the host's
``compute_shelve_instance`` event of the server's latest shelve action.
Each offload is recorded as a ``shelveOffload`` action of its own, so
``openstack server event list`` tells why the server left its host.
"""

import datetime

from oslo_log import log as logging

from minicompute import exception
from minicompute import instance_actions
from minicompute import task_states
from minicompute import vm_states
from minicompute.db import api as db_api
from ministack import context as ms_context
from ministack import db

LOG = logging.getLogger(__name__)

SHELVE_EVENT = "compute_shelve_instance"


def shelved_at(ctxt, instance_uuid):
    """When the server's latest shelve finished on its host, or None."""
    for action in db_api.action_get_all(ctxt, instance_uuid):
        if action.action != instance_actions.SHELVE:
            continue
        for event in db_api.action_events_get(ctxt, action.id):
            if event.event == SHELVE_EVENT and event.finish_time:
                return event.finish_time
        return action.updated_at or action.created_at
    return None


class ShelvedOffloader:
    """Offloads this host's servers shelved for too long.

    :param conf: the host's config (``shelved_offload_time``).
    :param host: this host's name.
    :param offload: ``offload(ctxt, instance_dict)``, the RPC endpoint's
        ``shelve_offload_instance``.
    """

    def __init__(self, conf, host, offload):
        self.conf = conf
        self.host = host
        self.offload = offload

    def due(self, ctxt, now=None):
        """The SHELVED servers of this host, with no task, shelved for
        more than ``shelved_offload_time`` seconds."""
        limit = self.conf.shelved_offload_time
        if limit <= 0:
            return []
        now = now or db.utcnow()
        due = []
        for row in db_api.instance_get_all(ctxt, {"host": self.host,
                                                  "all_tenants": True}):
            if row.vm_state != vm_states.SHELVED or row.task_state:
                continue
            since = shelved_at(ctxt, row.uuid)
            if since is None:
                continue
            if now - since >= datetime.timedelta(seconds=limit):
                due.append(row)
        return due

    def run(self, now=None):
        """One poll: offload every server that is due. Returns their
        uuids; a failure is logged and the next server is tried."""
        ctxt = ms_context.get_admin_context()
        done = []
        for row in self.due(ctxt, now):
            try:
                db_api.instance_update(
                    ctxt, row.uuid,
                    {"task_state": task_states.SHELVING_OFFLOADING},
                    expected_task_state=[None],
                    expected_vm_state=[vm_states.SHELVED])
            except (exception.UnexpectedTaskStateError,
                    exception.UnexpectedVMStateError,
                    exception.InstanceNotFound):
                continue    # unshelved, offloaded or deleted meanwhile
            LOG.info("Offloading %s: shelved for more than %d s",
                     row.uuid, self.conf.shelved_offload_time)
            try:
                db_api.action_start(ctxt, row.uuid,
                                    instance_actions.SHELVE_OFFLOAD)
                self.offload(ctxt, db_api.to_dict(
                    db_api.instance_get(ctxt, row.uuid)))
            except Exception:
                LOG.exception("Periodic offload of %s failed", row.uuid)
                self._release(ctxt, row.uuid)
                continue
            done.append(row.uuid)
        return done

    @staticmethod
    def _release(ctxt, instance_uuid):
        """Undo the claim of a failed offload (no task, still SHELVED),
        unless the offload got further and set its own states."""
        try:
            db_api.instance_update(
                ctxt, instance_uuid, {"task_state": None},
                expected_task_state=[task_states.SHELVING_OFFLOADING])
        except (exception.UnexpectedTaskStateError,
                exception.InstanceNotFound):
            pass
