"""Possible vm states of an instance (``instances.vm_state``), as nova.

The vm_state is the stable state the user sees; an operation in progress
is shown by the task_state (see ``task_states``). Values are upstream's
strings, so API output and SQL match nova's documentation.
"""

# VM is running.
ACTIVE = "active"
# VM only exists in the DB; the compute host is building it.
BUILDING = "building"
# VM is paused.
PAUSED = "paused"
# VM is suspended to disk.
SUSPENDED = "suspended"
# VM is powered off, the disk image is still there.
STOPPED = "stopped"
# A rescue image is running with the original VM image attached.
RESCUED = "rescued"
# A VM with the new size is active; the user must confirm or revert.
RESIZED = "resized"
# VM is marked deleted but the disk images are still available.
SOFT_DELETED = "soft-delete"
# VM is permanently deleted.
DELETED = "deleted"
# VM is in an error state; ``instances.fault`` says why.
ERROR = "error"
# VM is powered off, the resources still on the hypervisor.
SHELVED = "shelved"
# VM is powered off, the resources removed from the hypervisor.
SHELVED_OFFLOADED = "shelved_offloaded"

# states a volume may be attached or detached in (nova's
# check_instance_state on compute/api.py attach_volume/detach_volume).
ALLOW_VOLUME_ATTACH_DETACH = [ACTIVE, PAUSED, STOPPED, RESIZED, SOFT_DELETED,
                              SHELVED, SHELVED_OFFLOADED]
# states the instance can be stopped from
ALLOW_STOP = [ACTIVE, RESCUED, RESIZED, ERROR]
# states the instance can be started from
ALLOW_START = [STOPPED]
# states a HARD reboot may start from (a SOFT one needs ACTIVE), as
# nova's API reboot check
ALLOW_HARD_REBOOT = [ACTIVE, STOPPED, PAUSED, SUSPENDED, ERROR]
ALLOW_SOFT_REBOOT = [ACTIVE]
ALLOW_REBUILD = [ACTIVE, STOPPED, ERROR]
# states the instance can be shelved from (nova's API.shelve)
ALLOW_SHELVE = [ACTIVE, STOPPED, PAUSED, SUSPENDED]
# states an instance can be unshelved from
ALLOW_UNSHELVE = [SHELVED, SHELVED_OFFLOADED]
# states the instance can be deleted from (any but an in-flight delete)
# resize and cold migration (nova's resize and migrate)
ALLOW_RESIZE = [ACTIVE, STOPPED]
ALLOW_DELETE = [ACTIVE, BUILDING, PAUSED, SUSPENDED, STOPPED, RESCUED,
                RESIZED, SOFT_DELETED, ERROR, SHELVED, SHELVED_OFFLOADED]
