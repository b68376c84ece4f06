"""Reboot a guest, as nova's libvirt driver does.

SOFT: press the ACPI power button and poll (every half second) until the
domain has shut off, then start it again; a guest that is still running
after ``wait_seconds`` (it ignores ACPI, or hangs) is rebooted HARD
instead, as upstream falls back. HARD: pull the plug and start again.
Either way QEMU starts afresh from the persistent definition, which holds
the hot-plugged volumes, so they come back with the guest.
"""

import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

SOFT = "SOFT"
HARD = "HARD"


def _wait_shutoff(guest, wait_seconds, sleep, clock):
    deadline = clock() + wait_seconds
    while guest.is_active():
        if clock() >= deadline:
            return False
        sleep(0.5)
    return True


def reboot(guest, reboot_type, wait_seconds, *, sleep=time.sleep,
           clock=time.monotonic):
    """Reboot ``guest`` (a ``guest.Guest``); returns the kind done.

    :returns: "SOFT", or "HARD" (asked for, or the SOFT fallback).
    """
    if reboot_type == SOFT and guest.is_active():
        guest.shutdown()
        if _wait_shutoff(guest, wait_seconds, sleep, clock):
            guest.launch()
            return SOFT
        LOG.warning("Guest %s did not shut down within %ss; rebooting it "
                    "HARD", guest.name, wait_seconds)
    guest.poweroff()
    # A suspended guest boots afresh, as upstream's hard reboot, which
    # undefines the domain and its managed save image first.
    guest.discard_saved_memory()
    guest.launch()
    return HARD
