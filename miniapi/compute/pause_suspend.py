"""The API phase of pause, unpause, suspend and resume (nova's
``compute.api.API.pause`` and the others).

Each checks the server's state (pause and suspend: ACTIVE; unpause:
PAUSED; resume: SUSPENDED; no operation in flight; else 409), that its
compute host is up (409), sets the task state (``pausing``,
``unpausing``, ``suspending``, ``resuming``) with a compare-and-swap,
records the instance action and casts to the host
(``minicompute.pause_suspend``), undoing the task state if the cast
fails. Volumes are not touched: no Cinder call on this path, upstream's
either.
"""

from minicompute import instance_actions
from minicompute import task_states


class PauseSuspendOperations:
    """Mixed into :class:`miniapi.compute.api.API` (with
    ``servers.ServerOperations``, whose ``_begin`` does the checks,
    the compare-and-swap, the action and the cast)."""

    def _pause_suspend(self, ctxt, instance, operation, action, cast):
        task_state, allowed, _final = task_states.TRANSITIONS[operation]
        self._begin(ctxt, instance, operation, action, task_state, allowed,
                    [None], cast)

    def pause(self, ctxt, instance):
        """pause: PAUSED once the host has stopped the vCPUs."""
        self._pause_suspend(ctxt, instance, "pause", instance_actions.PAUSE,
                            self.compute_rpcapi.pause_instance)

    def unpause(self, ctxt, instance):
        """unpause: ACTIVE once the host runs the vCPUs again."""
        self._pause_suspend(ctxt, instance, "unpause",
                            instance_actions.UNPAUSE,
                            self.compute_rpcapi.unpause_instance)

    def suspend(self, ctxt, instance):
        """suspend: SUSPENDED once the host has saved the memory."""
        self._pause_suspend(ctxt, instance, "suspend",
                            instance_actions.SUSPEND,
                            self.compute_rpcapi.suspend_instance)

    def resume(self, ctxt, instance):
        """resume: ACTIVE once the host has restored the guest."""
        self._pause_suspend(ctxt, instance, "resume",
                            instance_actions.RESUME,
                            self.compute_rpcapi.resume_instance)
