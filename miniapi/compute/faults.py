"""The API phase of ``ministack-fault``: arm, list and disarm the seed's
failures on the compute hosts (``/v2.1/os-ministack-faults``).

miniapi holds no fault itself: it checks the request, builds the fault's
record (an id, who armed it, its lifetime, and for ``reserve-timeout``
how long the host holds its answer: this API's ``rpc_call_timeout`` plus
``catalog.HOLD_MARGIN``, so the CALL really times out), and CALLs
``arm_fault`` on the hosts that may run the operation:

* ``server_id``: that server's host (409 when it is down, as an attach);
* ``volume_id`` or nothing: every compute host that is up, since the
  next attach may go to any of them; when a one-shot fault fires on one
  host, that host tells the others to drop their copy (a fanout cast).

A host that does not answer stops the arming and the hosts already armed
are disarmed again (409): a fault is armed where it was asked for, or
nowhere. Listing and disarming ask every host that is up and say which
did not answer.
"""

import logging

from oslo_utils import excutils
from oslo_utils import uuidutils

from miniapi.compute import checks
from minicompute import exception
from minicompute.db import api as db_api
from minicompute.faults import catalog
from ministack import db as ms_db
from ministack import exception as ms_exception

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = "nova-compute"


def _who(ctxt):
    return {"user_id": ctxt.user_id, "project_id": ctxt.project_id,
            "user_name": getattr(ctxt, "user_name", None) or ctxt.user_id,
            "request_id": ctxt.request_id}


class FaultOperations:
    """Arm, list and disarm faults through ``compute_rpcapi``.

    :param rpc_call_timeout: the CALL timeout of this API, which a held
        ``reserve_block_device_name`` answer must outlast.
    """

    def __init__(self, volume_api, compute_rpcapi, down_time,
                 rpc_call_timeout):
        self.volume_api = volume_api
        self.compute_rpcapi = compute_rpcapi
        self.down_time = down_time
        self.rpc_call_timeout = rpc_call_timeout

    def up_hosts(self, ctxt):
        """The compute hosts whose service is up, in id order."""
        return [s.host for s in db_api.service_get_all(
            ctxt.elevated(), binary=COMPUTE_BINARY)
            if db_api.service_is_up(s, self.down_time)]

    def _hosts_for(self, ctxt, volume_id, server_id):
        if server_id:
            instance = db_api.instance_get(ctxt, server_id)
            if not instance.host:
                raise exception.InstanceInvalidState(
                    attr="host", state=None, method="arm a fault",
                    instance_uuid=server_id)
            checks.check_host_up(ctxt, instance, self.down_time)
            return [instance.host]
        if volume_id:
            self.volume_api.get(ctxt, volume_id)   # 404 when there is none
        hosts = self.up_hosts(ctxt)
        if not hosts:
            raise ms_exception.Conflict(
                reason="no compute host is up to arm the fault on")
        return hosts

    def arm(self, ctxt, name, volume_id=None, server_id=None, seconds=None):
        """Arm fault ``name`` on the hosts that may run its operation.

        :param seconds: fire on every matching operation for that long;
            None: one shot (expiring unused after an hour).
        :returns: the record, with ``hosts`` (where it is armed) and
            ``seconds_left``.
        :raises InstanceNotFound: no such server (404).
        :raises VolumeNotFound: no such volume (404).
        :raises ComputeServiceUnavailable: the server's host is down, or
            a host did not answer (409); nothing stays armed then.
        """
        fault = catalog.get(name)
        hosts = self._hosts_for(ctxt, volume_id, server_id)
        record = {
            "id": uuidutils.generate_uuid(), "name": fault.name,
            "operation": fault.operation, "volume_id": volume_id,
            "server_id": server_id, "one_shot": seconds is None,
            "seconds": seconds or catalog.ONE_SHOT_LIFETIME,
            "armed_by": _who(ctxt),
            "armed_at": ms_db.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")}
        if fault.name == catalog.RESERVE_TIMEOUT:
            record["hold_seconds"] = (self.rpc_call_timeout +
                                      catalog.HOLD_MARGIN)
        armed = []
        try:
            for host in hosts:
                self.compute_rpcapi.arm_fault(ctxt, host, record)
                armed.append(host)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._undo_arm(ctxt, record["id"], armed)
        LOG.warning("Fault %s armed (%s) by user %s of project %s on hosts "
                    "%s: %s, %s", fault.name, record["id"], ctxt.user_id,
                    ctxt.project_id, ", ".join(armed),
                    "volume %s" % volume_id if volume_id else
                    "server %s" % server_id if server_id else "any volume",
                    "one shot" if seconds is None else "for %ss" % seconds)
        return dict(record, hosts=armed, seconds_left=record["seconds"])

    def _undo_arm(self, ctxt, fault_id, hosts):
        for host in hosts:
            try:
                self.compute_rpcapi.disarm_faults(
                    ctxt, host, fault_id=fault_id,
                    reason="rolled back: another host did not answer")
            except Exception:
                LOG.exception("Could not disarm fault %s on %s during "
                              "rollback; it expires on its own", fault_id,
                              host)

    def _each_host(self, ctxt, call):
        """``(answers by host, {host: why it did not answer})``."""
        answers, unreachable = {}, {}
        for host in self.up_hosts(ctxt):
            try:
                answers[host] = call(host)
            except exception.ComputeServiceUnavailable as exc:
                unreachable[host] = exc.format_message()
        return answers, unreachable

    def listing(self, ctxt):
        """Every host's armed faults, merged by id, and their firings.

        :returns: ``{"faults": [...], "fired": [...], "hosts": [...]}``;
            each fault lists the ``hosts`` that hold it.
        """
        answers, unreachable = self._each_host(
            ctxt, lambda host: self.compute_rpcapi.list_faults(ctxt, host))
        merged, fired = {}, []
        for host, answer in answers.items():
            for armed in answer["armed"]:
                entry = merged.setdefault(armed["id"], dict(
                    armed, hosts=[]))
                entry["hosts"].append(host)
                entry["seconds_left"] = min(entry["seconds_left"],
                                            armed["seconds_left"])
                entry.pop("host", None)
            fired += answer["fired"]
        fired.sort(key=lambda f: f["fired_at"] or "")
        return {"faults": sorted(merged.values(),
                                 key=lambda f: f["armed_at"] or ""),
                "fired": fired, "hosts": _host_states(answers, unreachable)}

    def disarm(self, ctxt, name=None):
        """Disarm ``name``'s faults (None: all) on every host that is up.

        :returns: ``{"disarmed": [...], "hosts": [...]}``.
        """
        answers, unreachable = self._each_host(
            ctxt, lambda host: self.compute_rpcapi.disarm_faults(
                ctxt, host, name=name))
        disarmed = [dict(armed) for answer in answers.values()
                    for armed in answer]
        LOG.warning("Faults %s disarmed by user %s of project %s: %d on "
                    "hosts %s", name or "(all)", ctxt.user_id,
                    ctxt.project_id, len(disarmed), ", ".join(answers))
        return {"disarmed": disarmed,
                "hosts": _host_states(answers, unreachable)}


def _host_states(answers, unreachable):
    states = [{"host": host, "state": "ok"} for host in answers]
    states += [{"host": host, "state": "did not answer: %s" % why}
               for host, why in unreachable.items()]
    return states
