"""Possible task states of an instance (``instances.task_state``), as nova.

A task state says which operation is in flight; ``None`` means none. The
API sets one with a compare-and-swap (``expected_task_state=[None]``) so two
concurrent operations cannot both start, and the compute manager clears it
when the operation ends. ``TRANSITIONS`` states in one place which task
state each operation sets and which vm_state it leaves behind.
"""

from minicompute import vm_states

# building
SCHEDULING = "scheduling"
BLOCK_DEVICE_MAPPING = "block_device_mapping"
NETWORKING = "networking"
SPAWNING = "spawning"

# power
POWERING_OFF = "powering-off"
POWERING_ON = "powering-on"

# reboot
REBOOTING = "rebooting"
REBOOTING_HARD = "rebooting_hard"

# deletion
DELETING = "deleting"

# rebuild: the API's check, the volumes re-wired, the guest respawned
REBUILDING = "rebuilding"
REBUILD_BLOCK_DEVICE_MAPPING = "rebuild_block_device_mapping"
REBUILD_SPAWNING = "rebuild_spawning"
# shelve, shelve offload, unshelve
SHELVING = "shelving"
SHELVING_IMAGE_PENDING_UPLOAD = "shelving_image_pending_upload"
SHELVING_IMAGE_UPLOADING = "shelving_image_uploading"
SHELVING_OFFLOADING = "shelving_offloading"
UNSHELVING = "unshelving"
# pause and suspend
PAUSING = "pausing"
UNPAUSING = "unpausing"
SUSPENDING = "suspending"
RESUMING = "resuming"
RESIZE_PREP = "resize_prep"
RESIZE_MIGRATING = "resize_migrating"
RESIZE_MIGRATED = "resize_migrated"
RESIZE_FINISH = "resize_finish"
RESIZE_REVERTING = "resize_reverting"

# live migration
MIGRATING = "migrating"

# Operation -> (task state set while it runs, vm_states allowed at its start,
# vm_state on success). The API checks the second column and sets the first
# with a compare-and-swap on task_state None; the manager writes the third
# (or vm_states.ERROR with a fault) and clears the task state.
TRANSITIONS = {
    "build": (SPAWNING, [vm_states.BUILDING], vm_states.ACTIVE),
    "stop": (POWERING_OFF, vm_states.ALLOW_STOP, vm_states.STOPPED),
    "start": (POWERING_ON, vm_states.ALLOW_START, vm_states.ACTIVE),
    "delete": (DELETING, vm_states.ALLOW_DELETE, vm_states.DELETED),
    # a rebuilt server is ACTIVE, or SHUTOFF again if it was
    "rebuild": (REBUILDING, vm_states.ALLOW_REBUILD, vm_states.ACTIVE),
    "pause": (PAUSING, [vm_states.ACTIVE], vm_states.PAUSED),
    "unpause": (UNPAUSING, [vm_states.PAUSED], vm_states.ACTIVE),
    "suspend": (SUSPENDING, [vm_states.ACTIVE], vm_states.SUSPENDED),
    "resume": (RESUMING, [vm_states.SUSPENDED], vm_states.ACTIVE),
}
