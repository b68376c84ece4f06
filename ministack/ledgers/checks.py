"""The cross-checks of the attach ledgers: pure functions over a snapshot.

Each check compares two or three ledgers of a
:class:`~ministack.ledgers.snapshot.Snapshot` and returns a
:class:`~ministack.ledgers.snapshot.Divergence` per disagreement. The
checks here are nova's side (BDMs, Cinder's attachments and statuses,
the guests' disks, each host's against the instances nova has there);
``host_checks`` has what is about the hosts themselves (a libvirtd that
did not answer, CHAP secrets, initiator names), ``storage_checks``
Cinder's host (tgt, LVM, loops). :func:`run` runs them all.

Nothing here does I/O: ``ministack_audit.ledgers`` reads the ledgers into
a snapshot (the audit command), ``minicompute.reconcile`` builds one for
its own host, and both hand it to :func:`run`. A ledger that was not read
is None and the checks needing it are skipped, so the compute host (which
cannot see tgt or LVM) runs the same code on a partial view.
"""

from ministack.ledgers import host_checks
from ministack.ledgers import snapshot
from ministack.ledgers import storage_checks


def check_attachments_vs_bdms(snap):
    """orphan_attachment and bdm_without_attachment (nova bug 2019078)."""
    if snap.bdms is None or snap.attachments is None:
        return []
    found = []
    bdms = snapshot.bdm_index(snap)
    att_ids = {a["id"] for a in snap.attachments}
    pairs = {(a["instance_uuid"], a["volume_id"]) for a in snap.attachments}
    for att in snap.attachments:
        if att["instance_uuid"] in snap.in_flight or \
                snapshot.young(snap, att.get("updated_at")):
            continue
        if snap.instances is not None and \
                att["instance_uuid"] not in snap.instances:
            # An instance of another nova (a shared Cinder): not ours.
            continue
        bdm = bdms.get((att["instance_uuid"], att["volume_id"]))
        if bdm is not None and bdm["attachment_id"] in (att["id"], None):
            continue
        found.append(snapshot.Divergence(
            "orphan_attachment", "attachment %s" % att["id"],
            "Cinder holds volume %s for instance %s (%s) but nova has %s"
            % (att["volume_id"], att["instance_uuid"], att["attach_status"],
               "no BDM" if bdm is None else
               "a BDM with attachment %s" % bdm["attachment_id"]),
            "delete the attachment in Cinder (it recomputes the volume "
            "status and revokes the initiator)",
            data={"attachment_id": att["id"],
                  "volume_id": att["volume_id"],
                  "instance_uuid": att["instance_uuid"]},
            host=snapshot.instance_host(snap, att["instance_uuid"])))
    for bdm in snap.bdms:
        if bdm["instance_uuid"] in snap.in_flight or \
                snapshot.young(snap, bdm.get("updated_at")):
            continue
        key = (bdm["instance_uuid"], bdm["volume_id"])
        if bdm["attachment_id"]:
            if bdm["attachment_id"] in att_ids:
                continue
        elif key in pairs or (snap.volumes or {}).get(
                bdm["volume_id"], {}).get("status") == "attaching":
            continue  # legacy flow: Cinder's attachment has no id on the BDM
        found.append(snapshot.Divergence(
            "bdm_without_attachment", "BDM %s" % bdm["id"],
            "nova maps volume %s at %s on instance %s but Cinder has %s"
            % (bdm["volume_id"], bdm["device_name"], bdm["instance_uuid"],
               "no attachment %s" % bdm["attachment_id"]
               if bdm["attachment_id"] else "no attachment for it"),
            "unplug the disk from the guest if it is there, then destroy "
            "the BDM",
            data={"bdm_id": bdm["id"], "volume_id": bdm["volume_id"],
                  "instance_uuid": bdm["instance_uuid"],
                  "device_name": bdm["device_name"]},
            host=snapshot.instance_host(snap, bdm["instance_uuid"])))
    return found


def check_domains_vs_bdms(snap):
    """disk_without_bdm, bdm_disk_missing, detach_unfinished,
    domain_without_instance and domain_on_wrong_host, host by host: each
    host's domains against the BDMs of the instances nova has there."""
    if snap.bdms is None:
        return []
    found = []
    bdms = snapshot.bdm_index(snap)
    by_instance = {}
    for bdm in snap.bdms:
        by_instance.setdefault(bdm["instance_uuid"], []).append(bdm)
    for host, domains in snapshot.host_domains(snap):
        for name, dom in sorted(domains.items()):
            found.extend(_check_domain(snap, host, name, dom, bdms,
                                       by_instance))
    return found


def _check_domain(snap, host, name, dom, bdms, by_instance):
    uuid = dom["instance_uuid"]
    if uuid in snap.in_flight:
        return []
    inst = (snap.instances or {}).get(uuid)
    if snap.instances is not None and (inst is None or inst["deleted"]):
        return [snapshot.Divergence(
            "domain_without_instance", "domain %s" % name,
            "libvirt runs %s but nova has no live instance %s"
            % (name, uuid),
            "destroy and undefine the domain", data={"domain": name},
            host=host)]
    where = host or (inst or {}).get("host")
    if host is not None and inst is not None and \
            inst.get("host") not in (None, host):
        # Its disks are its own host's business, not this copy's.
        return [snapshot.Divergence(
            "domain_on_wrong_host", "domain %s on %s" % (name, host),
            "libvirt on %s %s %s but nova says instance %s is on %s"
            % (host, "runs" if dom.get("active") else "defines", name, uuid,
               inst["host"]),
            "by hand: if %s has the guest too, destroy and undefine this "
            "copy; if not, the instance's host is wrong in nova"
            % inst["host"], safe=False,
            data={"domain": name, "instance_uuid": uuid,
                  "expected_host": inst["host"]}, host=host)]
    found = []
    for dev, disk in sorted(dom["disks"].items()):
        serial = disk.get("serial") or ""
        if not snapshot.UUID_RE.match(serial):
            continue  # the root disk and anything not a volume
        if (uuid, serial) in bdms:
            continue
        found.append(snapshot.Divergence(
            "disk_without_bdm", "%s of %s" % (dev, name),
            "the guest has volume %s as %s (%s) but nova has no BDM"
            % (serial, dev, "+".join(
                w for w in ("live", "config") if disk.get(w))),
            "unplug the disk from the guest and its definition",
            data={"domain": name, "dev": dev, "volume_id": serial,
                  "instance_uuid": uuid}, host=where))
    for bdm in by_instance.get(uuid, []):
        if not bdm["connection_info"] or \
                snapshot.young(snap, bdm.get("updated_at")):
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
            found.append(snapshot.Divergence(
                "detach_unfinished", "BDM %s" % bdm["id"],
                "volume %s is detaching and %s no longer has it, but "
                "the BDM and the attachment remain"
                % (bdm["volume_id"], name),
                "finish the detach: delete the attachment, destroy the "
                "BDM",
                data={"bdm_id": bdm["id"], "volume_id": bdm["volume_id"],
                      "attachment_id": bdm["attachment_id"],
                      "instance_uuid": uuid}, host=where))
            continue
        found.append(snapshot.Divergence(
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
                  "instance_uuid": uuid}, host=where))
    return found


def check_volume_status(snap):
    """in_use_without_attachment and stuck_detaching."""
    if snap.volumes is None or snap.attachments is None:
        return []
    found = []
    by_volume = snapshot.live_attachments_by_volume(snap)
    # a detach the guest finished is completed, not rolled back
    unfinished = {d.data["volume_id"] for d in check_domains_vs_bdms(snap)
                  if d.kind == "detach_unfinished"}
    for vid, vol in sorted(snap.volumes.items()):
        if vol.get("deleted") or \
                vol["status"] not in snapshot.ATTACHED_STATUSES:
            continue
        if snapshot.young(snap, vol.get("updated_at")):
            continue
        if not by_volume.get(vid):
            found.append(snapshot.Divergence(
                "in_use_without_attachment", "volume %s" % vid,
                "Cinder says %s but the volume has no attachment"
                % vol["status"],
                "reset the volume to available/detached",
                data={"volume_id": vid}))
        elif vol["status"] == "detaching" and not any(
                a["instance_uuid"] in snap.in_flight
                for a in by_volume[vid]) and vid not in unfinished:
            found.append(snapshot.Divergence(
                "stuck_detaching", "volume %s" % vid,
                "detaching for longer than the grace with no detach in "
                "flight", "roll the volume back to in-use (roll_detaching)",
                data={"volume_id": vid},
                host=snapshot.one_host(snap, by_volume[vid])))
    return found


CHECKS = (host_checks.check_hosts, check_attachments_vs_bdms,
          check_domains_vs_bdms, check_volume_status,
          host_checks.check_secrets, host_checks.check_initiators,
          host_checks.check_iscsi_sessions,
          storage_checks.check_exports, storage_checks.check_lvm)


def run(snap):
    """Every check on ``snap``, ordered by :data:`KINDS` (fix order)."""
    found = []
    for check in CHECKS:
        found.extend(check(snap))
    return sorted(found, key=lambda d: snapshot.KINDS.index(d.kind))
