"""Power states of an instance (``instances.power_state``), as nova.

These are the hypervisor's view, refreshed by the compute manager from
libvirt's ``virDomainGetInfo``; the integer values are upstream's and appear
in the API as ``OS-EXT-STS:power_state``.
"""

NOSTATE = 0x00
RUNNING = 0x01
PAUSED = 0x03
# the VM is powered off
SHUTDOWN = 0x04
CRASHED = 0x06
SUSPENDED = 0x07

STATE_MAP = {
    NOSTATE: "pending",
    RUNNING: "running",
    PAUSED: "paused",
    SHUTDOWN: "shutdown",
    CRASHED: "crashed",
    SUSPENDED: "suspended",
}
