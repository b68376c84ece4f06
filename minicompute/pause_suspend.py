"""Pause, unpause, suspend and resume a server on its compute host.

Served by the host's RPC server next to the compute manager (the casts
of ``minicompute.rpcapi.ComputeAPI`` 1.8), as nova's manager serves
``pause_instance`` and the others:

* pause: the guest's vCPUs stop, its memory stays in place (libvirt's
  ``virDomainSuspend``); unpause runs them again (``virDomainResume``);
* suspend: the guest's memory is saved to disk and the domain stops
  (libvirt's managed save, as upstream's ``save_memory_state``); resume
  starts the domain again, which restores that memory.

Neither touches a volume: the guest keeps its disks in its definition
and the host keeps their connections, so Cinder is not called and every
volume stays ``in-use`` with its attachment. The API has set the task
state (``pausing``...) with a compare-and-swap and recorded the action;
each method records its ``compute_<method>`` event, runs under the
instance's lock and ends in the operation's vm_state with the task
state cleared. A failed pause or unpause only clears the task state (the
guest is as it was); a failed suspend or resume leaves the server in
ERROR with the reason, as upstream's ``_error_out_instance_on_exception``.
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from minicompute import exception
from minicompute import rpcapi
from minicompute import task_states
from minicompute import utils
from minicompute import vm_states
from minicompute.db import api as db_api
from ministack import rpc

LOG = logging.getLogger(__name__)


def _reason(exc):
    return exc.format_message() if hasattr(exc, "format_message") \
        else str(exc) or type(exc).__name__


@rpc.traced_endpoint("nova-compute")
class PauseSuspendEndpoint:
    """RPC endpoints ``pause_instance``, ``unpause_instance``,
    ``suspend_instance`` and ``resume_instance`` (casts).

    :param driver: the host's :class:`~minicompute.virt.driver.
        ComputeDriver`.
    :param load_instance: the manager's ``load_instance`` (the instance
        reloaded by uuid, with its domain ``name``).
    """

    target = messaging.Target(version=rpcapi.ComputeAPI.VERSION)

    def __init__(self, host, driver, load_instance):
        self.host = host
        self.driver = driver
        self.load_instance = load_instance

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def pause_instance(self, ctxt, instance):
        """Stop the guest's vCPUs: PAUSED."""
        self._run(ctxt, instance, "pause", self.driver.pause)

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def unpause_instance(self, ctxt, instance):
        """Run the paused guest's vCPUs again: ACTIVE."""
        self._run(ctxt, instance, "unpause", self.driver.unpause)

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def suspend_instance(self, ctxt, instance):
        """Save the guest's memory and stop it: SUSPENDED."""
        self._run(ctxt, instance, "suspend",
                  lambda inst: self.driver.suspend(ctxt, inst),
                  error_out=True)

    @messaging.expected_exceptions(exception.InstanceNotFound)
    def resume_instance(self, ctxt, instance):
        """Restore the suspended guest from its saved memory: ACTIVE."""
        self._run(ctxt, instance, "resume",
                  lambda inst: self.driver.resume(ctxt, inst),
                  error_out=True)

    def _run(self, ctxt, instance, operation, change, error_out=False):
        """``change(instance)`` on the driver, then the vm_state of
        ``task_states.TRANSITIONS[operation]``."""
        task_state, _allowed, final = task_states.TRANSITIONS[operation]
        instance = self.load_instance(ctxt, instance)
        uuid = instance["uuid"]
        with utils.EventReporter(ctxt, "compute_%s_instance" % operation,
                                 self.host, uuid), \
                utils.instance_lock(uuid):
            LOG.info("%s instance %s", operation.capitalize(), uuid)
            try:
                change(instance)
            except Exception as exc:
                with excutils.save_and_reraise_exception():
                    LOG.error("%s of %s failed: %s", operation, uuid,
                              _reason(exc))
                    self._failed(ctxt, uuid, operation, task_state, exc,
                                 error_out)
            db_api.instance_update(ctxt.elevated(), uuid, {
                "vm_state": final, "task_state": None,
                "power_state": self.driver.get_power_state(instance)},
                expected_task_state=[task_state])
            LOG.info("Instance %s is %s", uuid, final)

    def _failed(self, ctxt, uuid, operation, task_state, exc, error_out):
        values = {"task_state": None}
        if error_out:
            values.update(vm_state=vm_states.ERROR,
                          fault="%s failed: %s" % (operation.capitalize(),
                                                   _reason(exc)))
        try:
            db_api.instance_update(ctxt.elevated(), uuid, values,
                                   expected_task_state=[task_state])
        except Exception:
            LOG.exception("Could not record the failed %s of %s",
                          operation, uuid)
