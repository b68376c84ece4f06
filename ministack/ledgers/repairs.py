"""One table of repairs: for each divergence kind, how it is fixed.

Shared by the compute reconciler (``minicompute.reconcile``: its own
host, through its driver and Cinder adapter) and ``ministack-audit
--fix`` (every ledger, through each owner's adapter or API). Each repair
is written once, here, against :class:`Hands`: the operations on the
ledgers' owners. Each caller brings its own hands and the kinds they
can repair (the compute host has no tgt or LVM to touch).

Every step is idempotent (something already gone counts as done), so a
repair may run twice, or race the other caller repairing the same thing.
"""

from oslo_log import log as logging

from ministack.ledgers import snapshot

LOG = logging.getLogger(__name__)


class Hands:
    """The operations repairs are made of; a caller implements those its
    kinds need (the others raise NotImplementedError).

    Hands that reach several compute hosts (the audit's) also have
    ``for_host(name)``: the hands whose guest and secret operations go
    to that host's libvirtd; :func:`apply` takes them for the
    divergence's ``host``. Without it (the reconciler's, one host) the
    hands are used as they are.
    """

    def delete_attachment(self, attachment_id):
        """Delete the Cinder attachment (Cinder recomputes the volume's
        status and revokes the initiator); gone already is done."""
        raise NotImplementedError()

    def destroy_bdm(self, bdm_id):
        """Soft-delete nova's BDM."""
        raise NotImplementedError()

    def unplug_disk(self, instance_uuid, domain, dev):
        """Take disk ``dev`` out of the guest and its definition."""
        raise NotImplementedError()

    def replug_volume(self, bdm, instance_uuid, domain):
        """Plug the BDM's volume back into the guest (live + persistent)."""
        raise NotImplementedError()

    def destroy_domain(self, domain):
        """Destroy and undefine a domain nova no longer has."""
        raise NotImplementedError()

    def may_reset_volume(self, volume_id):
        """Whether Cinder still holds ``volume_id`` for no one (a last
        look before a reset)."""
        raise NotImplementedError()

    def reset_volume(self, volume_id, status, attach_status=None):
        """Cinder's ``os-reset_status``."""
        raise NotImplementedError()

    def roll_detaching(self, volume_id):
        """Cinder's ``os-roll_detaching``: back to in-use."""
        raise NotImplementedError()

    def delete_secret(self, usage):
        """Undefine the host's CHAP secret ``usage`` (a secret a guest
        names again since is kept); gone already is done."""
        raise NotImplementedError()

    def delete_target(self, iqn):
        raise NotImplementedError()

    def unbind_initiator(self, iqn, initiator):
        raise NotImplementedError()

    def ensure_export(self, volume_id, initiators):
        """Re-create the volume's target, CHAP account and ACLs."""
        raise NotImplementedError()

    def delete_lv(self, lv):
        raise NotImplementedError()

    def detach_loop(self, loop):
        raise NotImplementedError()


# -- the repairs: (hands, snapshot, divergence data) -> False if not done --

def _orphan_attachment(hands, snap, data):
    hands.delete_attachment(data["attachment_id"])


def _bdm_without_attachment(hands, snap, data):
    # The disk goes only if the guest has this volume at the BDM's device.
    dev = (data.get("device_name") or "").replace("/dev/", "")
    inst = (snap.instances or {}).get(data["instance_uuid"])
    if inst and dev:
        disk = (snapshot.domain_of(snap, data["instance_uuid"]) or {}).get(
            "disks", {}).get(dev)
        if disk and disk.get("serial") == data["volume_id"]:
            hands.unplug_disk(data["instance_uuid"], inst["domain"], dev)
    hands.destroy_bdm(data["bdm_id"])


def _disk_without_bdm(hands, snap, data):
    hands.unplug_disk(data["instance_uuid"], data["domain"], data["dev"])


def _bdm_disk_missing(hands, snap, data):
    bdm = next(b for b in snap.bdms if b["id"] == data["bdm_id"])
    hands.replug_volume(bdm, data["instance_uuid"], data["domain"])


def _detach_unfinished(hands, snap, data):
    if data.get("attachment_id"):
        hands.delete_attachment(data["attachment_id"])
    hands.destroy_bdm(data["bdm_id"])


def _domain_without_instance(hands, snap, data):
    hands.destroy_domain(data["domain"])


def _in_use_without_attachment(hands, snap, data):
    if not hands.may_reset_volume(data["volume_id"]):
        return False
    hands.reset_volume(data["volume_id"], "available", "detached")


def _stuck_detaching(hands, snap, data):
    hands.roll_detaching(data["volume_id"])


def _by_hand(hands, snap, data):
    # Reported unsafe: never applied (a person decides).
    return False


def _secret_without_disk(hands, snap, data):
    hands.delete_secret(data["usage"])


def _export_without_volume(hands, snap, data):
    hands.delete_target(data["iqn"])


def _export_without_attachment(hands, snap, data):
    hands.unbind_initiator(data["iqn"], data["initiator"])


def _ensure_export(hands, snap, data):
    initiators = sorted({a["initiator"] for a in snap.attachments
                         if a["volume_id"] == data["volume_id"]
                         and a.get("initiator")})
    hands.ensure_export(data["volume_id"], initiators)


def _lv_without_volume(hands, snap, data):
    hands.delete_lv(data["lv"])


def _volume_without_lv(hands, snap, data):
    hands.reset_volume(data["volume_id"], "error")


def _detach_loop(hands, snap, data):
    hands.detach_loop(data["loop"])


#: kind -> repair; the kinds are ``snapshot.KINDS``.
REPAIRS = {
    "libvirt_unreachable": _by_hand,
    "orphan_attachment": _orphan_attachment,
    "bdm_without_attachment": _bdm_without_attachment,
    "disk_without_bdm": _disk_without_bdm,
    "bdm_disk_missing": _bdm_disk_missing,
    "detach_unfinished": _detach_unfinished,
    "domain_without_instance": _domain_without_instance,
    "domain_on_wrong_host": _by_hand,
    "secret_without_disk": _secret_without_disk,
    "session_without_disk": _by_hand,
    "bdm_without_session": _by_hand,
    "in_use_without_attachment": _in_use_without_attachment,
    "stuck_detaching": _stuck_detaching,
    "attachment_wrong_initiator": _by_hand,
    "export_without_volume": _export_without_volume,
    "export_without_attachment": _export_without_attachment,
    "missing_export": _ensure_export,
    "initiator_not_admitted": _ensure_export,
    "lv_without_volume": _lv_without_volume,
    "volume_without_lv": _volume_without_lv,
    "duplicate_loop": _detach_loop,
    "leftover_loop": _detach_loop,
}

#: What a compute host repairs itself: its guests, its BDMs and its
#: volumes' Cinder records (tgt, LVM and loops are Cinder's host's).
COMPUTE_KINDS = ("orphan_attachment", "bdm_without_attachment",
                 "disk_without_bdm", "bdm_disk_missing", "detach_unfinished",
                 "in_use_without_attachment", "stuck_detaching")


def apply(div, snap, hands):
    """Repair ``div`` (a safe divergence) with ``hands``; sets its
    ``fixed`` or ``fix_error`` and returns whether it was fixed."""
    try:
        for_host = getattr(hands, "for_host", None)
        if for_host is not None:
            hands = for_host(div.host)
        if REPAIRS[div.kind](hands, snap, div.data) is False:
            return False
    except Exception as exc:  # report it, go on with the rest
        div.fix_error = exc.format_message() \
            if hasattr(exc, "format_message") else str(exc)
        LOG.debug("Could not fix %s: %s", div.kind, div.subject,
                  exc_info=True)
        return False
    div.fixed = True
    return True
