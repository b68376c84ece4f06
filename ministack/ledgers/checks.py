"""The cross-checks of the attach ledgers: pure functions over a snapshot.

The seed names six ledgers that must agree about every attached volume:
nova's BDMs, Cinder's volumes and attachments, the libvirt domain XML
(a disk whose serial is the volume id), tgt's targets and ACLs, the LVM
volumes and the loop devices that stand in for device-mapper here. Each
check below compares two or three of them and returns a
:class:`Divergence` per disagreement, with the repair it calls for.

Nothing here does I/O: ``ministack_audit.ledgers`` reads the ledgers into
a :class:`Snapshot` (the audit command), ``minicompute.reconcile`` builds
one for its own host, and both hand it to :func:`run`. A ledger that was
not read is None and the checks needing it are skipped, so the compute
host (which cannot see tgt or LVM) runs the same code on a partial view.

Grace: an attach is a sequence of writes to several ledgers, so for a
moment every healthy attach looks "divergent" (BDM before attachment,
attachment before connection_info). Anything younger than ``grace``
seconds is left alone.
"""

import dataclasses
import datetime
import re

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                     r"[0-9a-f]{12}$")

# Volume statuses that claim an attachment exists.
ATTACHED_STATUSES = ("reserved", "attaching", "in-use", "detaching")

# The order fixes are applied in: exports before the loops they sit on,
# guest disks before the BDMs and attachments that describe them.
KINDS = (
    "orphan_attachment",          # Cinder attachment, no BDM
    "bdm_without_attachment",     # BDM, no Cinder attachment
    "disk_without_bdm",           # domain disk (serial=volume), no BDM
    "bdm_disk_missing",           # BDM wired, disk not in the domain
    "detach_unfinished",          # detaching, guest let go, BDM left
    "domain_without_instance",    # our domain, instance deleted
    "in_use_without_attachment",  # volume says attached, no attachment
    "stuck_detaching",            # detaching with nothing in flight
    "export_without_volume",      # tgt target of a deleted volume
    "export_without_attachment",  # ACL admits an initiator nobody uses
    "missing_export",             # connected attachment, no target
    "lv_without_volume",          # LV of a deleted volume
    "volume_without_lv",          # live volume whose LV is gone
    "duplicate_loop",             # second loop over one LV
    "leftover_loop",              # loop over extents no LV owns
)


@dataclasses.dataclass
class Divergence:
    """One disagreement between ledgers and how to repair it.

    :param kind: one of :data:`KINDS`.
    :param subject: what it is about ("attachment <id>", "vdb of ...").
    :param detail: what each ledger says.
    :param fix: the repair, in words.
    :param safe: whether ``--fix`` may apply it unattended.
    :param data: ids the fixer needs.
    """

    kind: str
    subject: str
    detail: str
    fix: str
    safe: bool = True
    data: dict = dataclasses.field(default_factory=dict)
    fixed: bool = False
    fix_error: str | None = None

    def to_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Snapshot:
    """The ledgers as plain data; None means "not inspected".

    * ``instances``: {uuid: {"uuid", "host", "domain", "deleted"}} (live
      instances, plus deleted ones that still matter, ``deleted`` True).
    * ``bdms``: [{"id", "instance_uuid", "volume_id", "attachment_id",
      "connection_info" (dict or None), "device_name", "updated_at"}]
    * ``volumes``: {id: {"id", "status", "deleted", "updated_at"}}
    * ``attachments``: [{"id", "volume_id", "instance_uuid",
      "attach_status", "initiator", "updated_at"}] (live ones)
    * ``domains``: {name: {"instance_uuid", "disks": {dev: {"serial",
      "live", "config", "xml"}}}}
    * ``targets``: [{"tid", "iqn", "volume_id", "acls", "backing"}]
    * ``lvs``: {name: {"volume_id", "range": (pv, offset, size)}}
    * ``loops``: [{"name", "backing", "offset", "size"}] over the VG's PVs
    * ``in_flight``: instance uuids with a compute event still running
    * ``all_loops``: whether unattributable loops are reported
    """

    instances: dict = None
    bdms: list = None
    volumes: dict = None
    attachments: list = None
    domains: dict = None
    targets: list = None
    lvs: dict = None
    loops: list = None
    in_flight: set = dataclasses.field(default_factory=set)
    #: report loops no LV owns (False when only some LVs are "ours": a
    #: leftover loop cannot be attributed to anyone)
    all_loops: bool = True
    now: datetime.datetime = None
    grace: float = 0


def _young(snap, when):
    if not when or not snap.grace:
        return False
    now = snap.now or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    return (now - when).total_seconds() < snap.grace


def _bdm_index(snap):
    return {(b["instance_uuid"], b["volume_id"]): b for b in snap.bdms}


def _live_attachments_by_volume(snap):
    out = {}
    for att in snap.attachments:
        out.setdefault(att["volume_id"], []).append(att)
    return out


def check_attachments_vs_bdms(snap):
    """orphan_attachment and bdm_without_attachment (nova bug 2019078)."""
    if snap.bdms is None or snap.attachments is None:
        return []
    found = []
    bdms = _bdm_index(snap)
    att_ids = {a["id"] for a in snap.attachments}
    pairs = {(a["instance_uuid"], a["volume_id"]) for a in snap.attachments}
    for att in snap.attachments:
        if att["instance_uuid"] in snap.in_flight or \
                _young(snap, att.get("updated_at")):
            continue
        if snap.instances is not None and \
                att["instance_uuid"] not in snap.instances:
            # An instance of another nova (a shared Cinder): not ours.
            continue
        bdm = bdms.get((att["instance_uuid"], att["volume_id"]))
        if bdm is not None and bdm["attachment_id"] in (att["id"], None):
            continue
        found.append(Divergence(
            "orphan_attachment", "attachment %s" % att["id"],
            "Cinder holds volume %s for instance %s (%s) but nova has %s"
            % (att["volume_id"], att["instance_uuid"], att["attach_status"],
               "no BDM" if bdm is None else
               "a BDM with attachment %s" % bdm["attachment_id"]),
            "delete the attachment in Cinder (it recomputes the volume "
            "status and revokes the initiator)",
            data={"attachment_id": att["id"],
                  "volume_id": att["volume_id"],
                  "instance_uuid": att["instance_uuid"]}))
    for bdm in snap.bdms:
        if bdm["instance_uuid"] in snap.in_flight or \
                _young(snap, bdm.get("updated_at")):
            continue
        key = (bdm["instance_uuid"], bdm["volume_id"])
        if bdm["attachment_id"]:
            if bdm["attachment_id"] in att_ids:
                continue
        elif key in pairs or (snap.volumes or {}).get(
                bdm["volume_id"], {}).get("status") == "attaching":
            continue  # legacy flow: Cinder's attachment has no id on the BDM
        found.append(Divergence(
            "bdm_without_attachment", "BDM %s" % bdm["id"],
            "nova maps volume %s at %s on instance %s but Cinder has %s"
            % (bdm["volume_id"], bdm["device_name"], bdm["instance_uuid"],
               "no attachment %s" % bdm["attachment_id"]
               if bdm["attachment_id"] else "no attachment for it"),
            "unplug the disk from the guest if it is there, then destroy "
            "the BDM",
            data={"bdm_id": bdm["id"], "volume_id": bdm["volume_id"],
                  "instance_uuid": bdm["instance_uuid"],
                  "device_name": bdm["device_name"]}))
    return found


def check_domains_vs_bdms(snap):
    """disk_without_bdm, bdm_disk_missing and domain_without_instance."""
    if snap.domains is None or snap.bdms is None:
        return []
    found = []
    bdms = _bdm_index(snap)
    by_instance = {}
    for bdm in snap.bdms:
        by_instance.setdefault(bdm["instance_uuid"], []).append(bdm)
    for name, dom in sorted(snap.domains.items()):
        uuid = dom["instance_uuid"]
        if uuid in snap.in_flight:
            continue
        inst = (snap.instances or {}).get(uuid)
        if snap.instances is not None and (inst is None or inst["deleted"]):
            found.append(Divergence(
                "domain_without_instance", "domain %s" % name,
                "libvirt runs %s but nova has no live instance %s"
                % (name, uuid),
                "destroy and undefine the domain", data={"domain": name}))
            continue
        for dev, disk in sorted(dom["disks"].items()):
            serial = disk.get("serial") or ""
            if not UUID_RE.match(serial):
                continue  # the root disk and anything not a volume
            if (uuid, serial) in bdms:
                continue
            found.append(Divergence(
                "disk_without_bdm", "%s of %s" % (dev, name),
                "the guest has volume %s as %s (%s) but nova has no BDM"
                % (serial, dev, "+".join(
                    w for w in ("live", "config") if disk.get(w))),
                "unplug the disk from the guest and its definition",
                data={"domain": name, "dev": dev, "volume_id": serial,
                      "instance_uuid": uuid}))
        for bdm in by_instance.get(uuid, []):
            if not bdm["connection_info"] or \
                    _young(snap, bdm.get("updated_at")):
                continue
            dev = (bdm["device_name"] or "").replace("/dev/", "")
            disk = dom["disks"].get(dev)
            if disk and disk.get("serial") == bdm["volume_id"] and \
                    disk.get("config") and (disk.get("live")
                                            or not dom.get("active")):
                continue
            vol = (snap.volumes or {}).get(bdm["volume_id"]) or {}
            if vol.get("status") == "detaching" and not (
                    disk and disk.get("config")):
                found.append(Divergence(
                    "detach_unfinished", "BDM %s" % bdm["id"],
                    "volume %s is detaching and %s no longer has it, but "
                    "the BDM and the attachment remain"
                    % (bdm["volume_id"], name),
                    "finish the detach: delete the attachment, destroy the "
                    "BDM",
                    data={"bdm_id": bdm["id"], "volume_id": bdm["volume_id"],
                          "attachment_id": bdm["attachment_id"],
                          "instance_uuid": uuid}))
                continue
            found.append(Divergence(
                "bdm_disk_missing", "BDM %s" % bdm["id"],
                "nova wired volume %s at %s but %s has it %s"
                % (bdm["volume_id"], dev, name,
                   "nowhere" if not disk else
                   "only in its %s" % ("definition" if disk.get("config")
                                       else "running guest")),
                "plug the disk back (live and persistent) from the BDM's "
                "connection_info",
                data={"bdm_id": bdm["id"], "domain": name, "dev": dev,
                      "volume_id": bdm["volume_id"],
                      "instance_uuid": uuid}))
    return found


def check_volume_status(snap):
    """in_use_without_attachment and stuck_detaching."""
    if snap.volumes is None or snap.attachments is None:
        return []
    found = []
    by_volume = _live_attachments_by_volume(snap)
    # a detach the guest finished is completed, not rolled back
    unfinished = {d.data["volume_id"] for d in check_domains_vs_bdms(snap)
                  if d.kind == "detach_unfinished"}
    for vid, vol in sorted(snap.volumes.items()):
        if vol.get("deleted") or vol["status"] not in ATTACHED_STATUSES:
            continue
        if _young(snap, vol.get("updated_at")):
            continue
        if not by_volume.get(vid):
            found.append(Divergence(
                "in_use_without_attachment", "volume %s" % vid,
                "Cinder says %s but the volume has no attachment"
                % vol["status"],
                "reset the volume to available/detached",
                data={"volume_id": vid}))
        elif vol["status"] == "detaching" and not any(
                a["instance_uuid"] in snap.in_flight
                for a in by_volume[vid]) and vid not in unfinished:
            found.append(Divergence(
                "stuck_detaching", "volume %s" % vid,
                "detaching for longer than the grace with no detach in "
                "flight", "roll the volume back to in-use (roll_detaching)",
                data={"volume_id": vid}))
    return found


def check_exports(snap):
    """export_without_volume, export_without_attachment, missing_export."""
    if snap.targets is None or snap.volumes is None or \
            snap.attachments is None:
        return []
    found = []
    by_volume = _live_attachments_by_volume(snap)
    exported = set()
    for tgt in snap.targets:
        vid = tgt["volume_id"]
        exported.add(vid)
        vol = snap.volumes.get(vid)
        if vol is None or vol.get("deleted"):
            found.append(Divergence(
                "export_without_volume", "target %s" % tgt["iqn"],
                "tgt exports %s (tid %s) but Cinder has no live volume %s"
                % (tgt["backing"], tgt["tid"], vid),
                "delete the target (and its CHAP account)",
                safe=vol is not None,
                data={"iqn": tgt["iqn"], "volume_id": vid}))
            continue
        users = {a["initiator"] for a in by_volume.get(vid, [])
                 if a.get("initiator")}
        for acl in tgt["acls"]:
            if acl not in users:
                found.append(Divergence(
                    "export_without_attachment",
                    "ACL %s on %s" % (acl, tgt["iqn"]),
                    "tgt admits %s to volume %s but no attachment of the "
                    "volume has that initiator" % (acl, vid),
                    "revoke the initiator from the target",
                    data={"iqn": tgt["iqn"], "initiator": acl,
                          "volume_id": vid}))
    for vid, atts in sorted(by_volume.items()):
        vol = snap.volumes.get(vid)
        if vol is None or vol.get("deleted") or vid in exported:
            continue
        if any(a.get("initiator") and a["attach_status"] in
               ("attaching", "attached") for a in atts):
            found.append(Divergence(
                "missing_export", "volume %s" % vid,
                "connected attachments but tgt has no target (tgtd "
                "restarted?)",
                "re-create the target with its CHAP account and ACL",
                data={"volume_id": vid}))
    return found


def check_lvm(snap):
    """lv_without_volume, volume_without_lv, duplicate_loop, leftover_loop."""
    found = []
    if snap.lvs is not None and snap.volumes is not None:
        for name, lv in sorted(snap.lvs.items()):
            vol = snap.volumes.get(lv["volume_id"])
            if vol is None or vol.get("deleted"):
                found.append(Divergence(
                    "lv_without_volume", "LV %s" % name,
                    "LVM has %s but Cinder has %s" % (
                        name, "only a deleted volume" if vol else
                        "no such volume"),
                    "remove the LV (and any loop over it)",
                    safe=vol is not None,   # unknown LV: data, keep it
                    data={"lv": name, "volume_id": lv["volume_id"]}))
        have = {lv["volume_id"] for lv in snap.lvs.values()}
        attached = _live_attachments_by_volume(snap) \
            if snap.attachments is not None else None
        for vid, vol in sorted(snap.volumes.items()):
            if vol.get("deleted") or vol["status"] in (
                    "creating", "deleting", "error", "error_deleting"):
                continue
            if vid not in have:
                # The data is gone: marking the volume ``error`` keeps
                # anyone from attaching it. Not while an attachment holds
                # it (detach first: a guest may still have the disk).
                found.append(Divergence(
                    "volume_without_lv", "volume %s" % vid,
                    "Cinder says %s but its LV is gone" % vol["status"],
                    "set the volume to error (its data is lost), then "
                    "delete it", safe=attached is not None
                    and vid not in attached,
                    data={"volume_id": vid}))
    if snap.lvs is not None and snap.loops is not None:
        ranges = {lv["range"]: name for name, lv in snap.lvs.items()
                  if lv.get("range")}
        backing = {t["backing"] for t in snap.targets or []}
        seen = {}
        for loop in sorted(snap.loops, key=lambda lp: lp["name"]):
            key = (loop["backing"], loop["offset"], loop["size"])
            if key in ranges:
                seen.setdefault(key, []).append(loop["name"])
                continue
            if snap.all_loops:
                found.append(Divergence(
                    "leftover_loop", "loop %s" % loop["name"],
                    "maps %s bytes at %s of %s, which no LV owns"
                    % (loop["size"], loop["offset"], loop["backing"]),
                    "detach the loop device (losetup -d)",
                    safe=loop["name"] not in backing,
                    data={"loop": loop["name"]}))
        for key, names in sorted(seen.items()):
            for extra in [n for n in names if n not in backing][
                    :len(names) - 1]:
                found.append(Divergence(
                    "duplicate_loop", "loop %s" % extra,
                    "a second loop over LV %s (%s)" % (
                        ranges[key], ", ".join(names)),
                    "detach the extra loop device (losetup -d)",
                    data={"loop": extra}))
    return found


CHECKS = (check_attachments_vs_bdms, check_domains_vs_bdms,
          check_volume_status, check_exports, check_lvm)


def run(snap):
    """Every check on ``snap``, ordered by :data:`KINDS` (fix order)."""
    found = []
    for check in CHECKS:
        found.extend(check(snap))
    return sorted(found, key=lambda d: KINDS.index(d.kind))
