"""Volume and attachment states, and the table of legal transitions.

States are data: every state change in minicinder names an action from
:data:`VOLUME_TRANSITIONS` or :data:`ATTACHMENT_TRANSITIONS`, and
``minicinder.db.api`` applies it as one compare-and-swap
(``UPDATE ... WHERE status IN expected``), so two requests racing for the
same volume cannot both win and a failed precondition changes nothing.
"""

import typing

# --- volume.status (what users see) --------------------------------------
CREATING = "creating"            # the backend is carving the logical volume
AVAILABLE = "available"          # no attachment holds the volume
RESERVED = "reserved"            # an attachment exists, no connector yet
ATTACHING = "attaching"          # exported to a connector / legacy reserve
IN_USE = "in-use"                # at least one attachment is complete
DETACHING = "detaching"          # nova began detaching (os-begin_detaching)
DELETING = "deleting"            # the backend is wiping and removing it
DELETED = "deleted"              # soft-deleted row
ERROR = "error"                  # create failed; see the log for the reason
ERROR_DELETING = "error_deleting"  # delete failed; retry the delete
ERROR_ATTACHING = "error_attaching"
ERROR_DETACHING = "error_detaching"
MAINTENANCE = "maintenance"      # admin-set; blocks connections
EXTENDING = "extending"          # the backend is growing the volume
AWAITING_TRANSFER = "awaiting-transfer"  # offered to another project
ERROR_EXTENDING = "error_extending"  # the grow failed; see the log
DOWNLOADING = "downloading"      # an image is being written over it (reimage)

VOLUME_STATUSES = (CREATING, AVAILABLE, RESERVED, ATTACHING, IN_USE,
                   DETACHING, DELETING, ERROR, ERROR_DELETING,
                   ERROR_ATTACHING, ERROR_DETACHING, MAINTENANCE,
                   DOWNLOADING, EXTENDING, ERROR_EXTENDING,
                   AWAITING_TRANSFER)

# --- attachment.attach_status and volume.attach_status -------------------
ATT_RESERVED = "reserved"
ATT_ATTACHING = "attaching"
ATT_ATTACHED = "attached"
ATT_DETACHED = "detached"
ATT_ERROR_ATTACHING = "error_attaching"
ATT_ERROR_DETACHING = "error_detaching"
ATT_DELETED = "deleted"

# An attachment of an instance in these states is in Nova's hands: only a
# service (nova, with its service token) may delete or detach it
# (OSSA-2023-003, https://bugs.launchpad.net/cinder/+bug/2004555).
NOVA_USING = (ATT_ATTACHED, ATT_ATTACHING)

ATTACH_STATUSES = (ATT_RESERVED, ATT_ATTACHING, ATT_ATTACHED, ATT_DETACHED,
                   ATT_ERROR_ATTACHING, ATT_ERROR_DETACHING)

# Volume statuses from which DELETE is accepted (upstream's list).
DELETABLE = (AVAILABLE, ERROR, ERROR_DELETING, "error_restoring",
             ERROR_EXTENDING, "error_managing")
# Statuses of a volume another may be cloned from (source_volid).
CLONEABLE = (AVAILABLE, IN_USE)
# os-force_delete (admin) takes a volume in any status but deleting.
FORCE_DELETABLE = tuple(s for s in VOLUME_STATUSES if s != DELETING)


class Transition(typing.NamedTuple):
    """``expected`` statuses before, ``target`` status after.

    ``attach_status`` (optional) is written to the volume's attach_status
    alongside; ``expected_attach`` (optional) also guards it.
    """

    expected: tuple
    target: str
    attach_status: str | None = None
    expected_attach: tuple | None = None


VOLUME_TRANSITIONS = {
    # asynchronous create / delete (the manager)
    ("create_done", False): Transition((CREATING,), AVAILABLE),
    ("create_failed", False): Transition((CREATING,), ERROR),
    ("delete", False): Transition(DELETABLE, DELETING),
    ("delete_failed", False): Transition((DELETING,), ERROR_DELETING),
    ("force_delete", False): Transition(
        FORCE_DELETABLE, DELETING,
        expected_attach=tuple(s for s in ATTACH_STATUSES
                              if s != ATT_ATTACHED)),
    # os-extend: an available volume grows; from 3.42 an in-use one too
    # (in place, then nova resizes the guest's disk). When the backend
    # has no room to grow it attached, it is back in-use at its size
    # (upstream's scheduler: "No valid backend"); a backend failure is
    # error_extending either way.
    ("extend", False): Transition((AVAILABLE,), EXTENDING),
    ("extend_done", False): Transition((EXTENDING,), AVAILABLE),
    ("extend_failed", False): Transition((EXTENDING,), ERROR_EXTENDING),
    ("extend_attached", False): Transition((IN_USE,), EXTENDING),
    ("extend_attached_done", False): Transition((EXTENDING,), IN_USE),
    # os-reimage (3.68): downloading while the image is written, then
    # back to the status it had (error if the copy failed); Nova's
    # rebuild re-images its root volume while it is reserved.
    ("reimage", False): Transition((AVAILABLE, ERROR), DOWNLOADING),
    ("reimage_reserved", False): Transition((AVAILABLE, ERROR, RESERVED),
                                            DOWNLOADING),
    ("reimage_done_available", False): Transition((DOWNLOADING,), AVAILABLE),
    ("reimage_done_error", False): Transition((DOWNLOADING,), ERROR),
    ("reimage_done_reserved", False): Transition((DOWNLOADING,), RESERVED),
    ("reimage_failed", False): Transition((DOWNLOADING,), ERROR),
    # os-volume-transfer: offered, then withdrawn or accepted
    ("transfer", False): Transition((AVAILABLE,), AWAITING_TRANSFER),
    ("transfer_cancel", False): Transition((AWAITING_TRANSFER,), AVAILABLE),
    ("transfer_accept", False): Transition((AWAITING_TRANSFER,), AVAILABLE),
    # attachments API (3.27+): POST without connector reserves...
    ("reserve", False): Transition((AVAILABLE, DOWNLOADING), RESERVED),
    ("reserve", True): Transition((AVAILABLE, IN_USE, DOWNLOADING), RESERVED),
    # ...PUT (or POST with a connector) exports and connects...
    ("connect", False): Transition((RESERVED, ATTACHING, IN_USE), ATTACHING,
                                   attach_status=ATT_ATTACHING),
    ("connect", True): Transition((RESERVED, ATTACHING, IN_USE), ATTACHING,
                                  attach_status=ATT_ATTACHING),
    # ...and os-complete (3.44) marks it in use.
    ("complete", False): Transition((RESERVED, ATTACHING, IN_USE), IN_USE,
                                    attach_status=ATT_ATTACHED),
    ("complete", True): Transition((RESERVED, ATTACHING, IN_USE), IN_USE,
                                   attach_status=ATT_ATTACHED),
    # legacy volume actions
    ("os-reserve", False): Transition((AVAILABLE,), ATTACHING),
    ("os-reserve", True): Transition((AVAILABLE, IN_USE), ATTACHING),
    ("os-attach", False): Transition((AVAILABLE, RESERVED, ATTACHING),
                                     IN_USE, attach_status=ATT_ATTACHED),
    ("os-attach", True): Transition((AVAILABLE, RESERVED, ATTACHING, IN_USE),
                                    IN_USE, attach_status=ATT_ATTACHED),
    ("os-begin_detaching", False): Transition(
        (IN_USE,), DETACHING, expected_attach=(ATT_ATTACHED,)),
    ("os-roll_detaching", False): Transition((DETACHING,), IN_USE),
}

ATTACHMENT_TRANSITIONS = {
    # PUT may be repeated (nova re-sends the connector on retries); an
    # attached attachment that was completed without a connector (a
    # volume attached to a shelved-offloaded server) is connected too,
    # when the server is unshelved (``attachments.AttachmentAPI``
    # checks that it has no connector).
    "connect": Transition((ATT_RESERVED, ATT_ATTACHING, ATT_ATTACHED),
                          ATT_ATTACHING),
    # os-complete of a reserved attachment only when an instance owns it
    # and it has no connector (nova's attach to a shelved-offloaded
    # server: ``attachments.AttachmentAPI.complete`` checks).
    "complete": Transition((ATT_RESERVED, ATT_ATTACHING, ATT_ATTACHED),
                           ATT_ATTACHED),
}


def volume_transition(action, multiattach=False):
    """The :class:`Transition` for ``action`` on a (multiattach) volume."""
    key = (action, bool(multiattach))
    if key not in VOLUME_TRANSITIONS:
        key = (action, False)
    return VOLUME_TRANSITIONS[key]


# Upstream sorts the remaining attach statuses and takes the first, which
# gives this priority; error_* attachments are ignored.
_RECOMPUTE_PRIORITY = (ATT_ATTACHED, ATT_ATTACHING, "detaching", ATT_RESERVED)


def statuses_from_attachments(attach_statuses):
    """``(volume status, volume attach_status)`` after a detach.

    :param attach_statuses: attach_status of every remaining live
        attachment of the volume.
    """
    live = [s for s in attach_statuses if not s.startswith("error")]
    for status in _RECOMPUTE_PRIORITY:
        if status in live:
            return {ATT_ATTACHED: IN_USE}.get(status, status), status
    return AVAILABLE, ATT_DETACHED
