"""The four failures of the seed ("When it goes wrong"), as data.

Each :class:`Fault` says, in the seed's words, which step of the attach
or detach fails, which recovery path then runs, and what end state that
path leaves (the volume's status, whether a Cinder attachment, a BDM and
the guest's disk survive). ``ministack-fault --help`` and ``list`` print
them, miniapi validates a fault's name against them, the compute host's
fault points (``points.py``) fire them, and the report after a fault
(``ministack_audit.fault_report``) checks the ledgers against ``end``.

Imported by miniapi, so it imports nothing of the compute host.
"""

import collections

Fault = collections.namedtuple("Fault", (
    "name",        # what an operator types: ministack-fault arm NAME
    "operation",   # "attach" or "detach": what the fault waits for
    "summary",     # one line, for ``list``
    "step",        # which step fails, and how it is made to fail
    "path",        # the seed's title of its recovery path (1 to 4)
    "number",      # that path's number in the seed
    "recovery",    # what the recovery does, in the seed's words
    "clean",       # why the end state is clean, in the seed's words
    "end",         # the end state: {"volume", "attachment", "bdm", "disk"}
))

DRIVER_ATTACH = "driver-attach"
ATTACHMENT_COMPLETE = "attachment-complete"
RESERVE_TIMEOUT = "reserve-timeout"
DETACH_REFUSED = "detach-refused"

_DETACHED = {"volume": "available", "attachment": False, "bdm": False,
             "disk": False}

FAULTS = (
    Fault(
        DRIVER_ATTACH, "attach",
        "attach: the hypervisor fails right after Cinder mapped the volume",
        "The compute host's virt_driver.attach_volume() really hot-plugs "
        "the disk (Cinder has exported the volume to this host), then "
        "raises, as libvirt can when a hot-plug it reported failed lands "
        "anyway.",
        "Driver attach fails after Cinder mapped the volume", 1,
        "_volume_attach() catches it, takes the disk out of the guest "
        "(virt_driver.detach_volume), calls attachment_delete to return "
        "the volume to available, and re-raises. The manager also "
        "destroys the BDM.",
        "The volume never gets stuck in reserved or attaching: deleting "
        "the attachment frees it, and the orphan BDM is removed.",
        _DETACHED),
    Fault(
        ATTACHMENT_COMPLETE, "attach",
        "attach: attachment_complete fails after connection_info was saved",
        "The disk is wired into the guest and its connection_info saved "
        "on the BDM; then the host's call to Cinder's attachment_complete "
        "(os-complete) fails instead of being sent.",
        "attachment_complete fails", 2,
        "The BDM connection_info is already saved, so the driver detaches "
        "the device and deletes the attachment, rolling the volume back "
        "to available; the manager destroys the BDM.",
        "This is exactly why bdm.save() runs before attachment_complete: "
        "the undo has the connection_info it needs to unplug the disk.",
        _DETACHED),
    Fault(
        RESERVE_TIMEOUT, "attach",
        "attach: the reserve_block_device_name CALL times out",
        "The compute host creates the BDM (/dev/vdX) but holds its answer "
        "to the CALL past miniapi's rpc_call_timeout: the host really "
        "does not answer in time, and the API's CALL raises "
        "MessagingTimeout.",
        "RPC MessagingTimeout during BDM creation", 3,
        "The API's exception handler calls volume_bdm.destroy() so no "
        "stray BDM survives; it never got to attachment_create, so "
        "nothing is reserved in Cinder. The user gets a 409.",
        "The compute host didn't answer the device-name RPC in time; a "
        "dangling reserved attachment is not left unowned.",
        _DETACHED),
    Fault(
        DETACH_REFUSED, "detach",
        "detach: the guest refuses to release the disk",
        "The compute host pauses the guest (virsh suspend) so it cannot "
        "answer the unplug; DiskDetacher.detach() asks again until its "
        "attempts run out (DeviceDetachFailed). The host then resumes "
        "the guest and, if the unplug it was sent while paused lands, "
        "plugs the disk back.",
        "Guest refuses to release the disk on detach", 4,
        "driver_detach() calls roll_detaching to put the Cinder volume "
        "back to in-use and re-raises, leaving the BDM intact so you can "
        "try again.",
        "Because the BDM survives and the volume is restored to in-use, "
        "the disk is still safely attached to the guest: Nova would "
        "rather fail loudly than leave a half-detached device.",
        {"volume": "in-use", "attachment": True, "bdm": True,
         "disk": True}),
)

BY_NAME = {fault.name: fault for fault in FAULTS}
NAMES = tuple(BY_NAME)

#: Seconds an unused one-shot fault stays armed: a forgotten one expires.
ONE_SHOT_LIFETIME = 3600
#: The longest ``--for`` window.
MAX_SECONDS = 86400
#: Seconds a held reserve_block_device_name answer outlasts the API's
#: rpc_call_timeout (the API has given up well before the host answers).
HOLD_MARGIN = 5


def get(name):
    """The :class:`Fault` called ``name``, or None."""
    return BY_NAME.get(name)
