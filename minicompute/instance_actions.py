"""Names of the user-visible instance actions (``instance_actions.action``).

The API records one with ``action_start`` per request; the compute manager
adds ``compute_<method>`` events to it (see ``minicompute.utils``).
"""

CREATE = "create"
DELETE = "delete"
STOP = "stop"
START = "start"
REBOOT = "reboot"
ATTACH_VOLUME = "attach_volume"
DETACH_VOLUME = "detach_volume"
EXTEND_VOLUME = "extend_volume"
REBUILD = "rebuild"
SHELVE = "shelve"
SHELVE_OFFLOAD = "shelveOffload"
UNSHELVE = "unshelve"
PAUSE = "pause"
UNPAUSE = "unpause"
SUSPEND = "suspend"
RESUME = "resume"
LIVE_MIGRATION = "live-migration"
RESIZE = "resize"
MIGRATE = "migrate"
CONFIRM_RESIZE = "confirmResize"
REVERT_RESIZE = "revertResize"
