"""The cross-checks of Cinder's host: tgt exports, LVs and loop devices.

Pure functions over a :class:`~ministack.ledgers.snapshot.Snapshot`, run by
``checks.run`` with nova's side. Only ``ministack-audit`` reads these
ledgers (the compute host cannot see them), so on the reconciler's
partial snapshot they are skipped.
"""

from ministack.ledgers import snapshot


def _connected(att):
    return att.get("initiator") and att["attach_status"] in (
        "attaching", "attached")


def check_exports(snap):
    """export_without_volume, export_without_attachment, missing_export,
    initiator_not_admitted: a target's ACL admits exactly the initiators
    of its volume's live attachments (each the initiator of one host:
    ``host_checks.check_initiators``)."""
    if snap.targets is None or snap.volumes is None or \
            snap.attachments is None:
        return []
    found = []
    by_volume = snapshot.live_attachments_by_volume(snap)
    by_iqn = snapshot.initiator_hosts(snap)
    exported = set()
    for tgt in snap.targets:
        vid = tgt["volume_id"]
        exported.add(vid)
        vol = snap.volumes.get(vid)
        if vol is None or vol.get("deleted"):
            found.append(snapshot.Divergence(
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
                found.append(snapshot.Divergence(
                    "export_without_attachment",
                    "ACL %s on %s" % (acl, tgt["iqn"]),
                    "tgt admits %s%s to volume %s but no attachment of the "
                    "volume has that initiator" % (
                        acl, " (host %s)" % by_iqn[acl] if acl in by_iqn
                        else "", vid),
                    "revoke the initiator from the target",
                    data={"iqn": tgt["iqn"], "initiator": acl,
                          "volume_id": vid}, host=by_iqn.get(acl)))
        for att in by_volume.get(vid, []):
            if not _connected(att) or att["initiator"] in tgt["acls"] or \
                    att["instance_uuid"] in snap.in_flight or \
                    snapshot.young(snap, att.get("updated_at")):
                continue
            found.append(snapshot.Divergence(
                "initiator_not_admitted",
                "ACL %s on %s" % (att["initiator"], tgt["iqn"]),
                "attachment %s (%s) connects %s to volume %s but the "
                "target's ACL does not admit it" % (
                    att["id"], att["attach_status"], att["initiator"], vid),
                "admit the volume's initiators again (ensure_export)",
                data={"volume_id": vid, "initiator": att["initiator"],
                      "attachment_id": att["id"]},
                host=snapshot.instance_host(snap, att["instance_uuid"])))
    for vid, atts in sorted(by_volume.items()):
        vol = snap.volumes.get(vid)
        if vol is None or vol.get("deleted") or vid in exported:
            continue
        if any(_connected(a) for a in atts):
            found.append(snapshot.Divergence(
                "missing_export", "volume %s" % vid,
                "connected attachments but tgt has no target (tgtd "
                "restarted?)",
                "re-create the target with its CHAP account and ACL",
                data={"volume_id": vid},
                host=snapshot.one_host(snap, [a for a in atts
                                              if _connected(a)])))
    return found


def check_lvm(snap):
    """lv_without_volume, volume_without_lv, duplicate_loop, leftover_loop."""
    found = []
    if snap.lvs is not None and snap.volumes is not None:
        for name, lv in sorted(snap.lvs.items()):
            vol = snap.volumes.get(lv["volume_id"])
            if vol is None or vol.get("deleted"):
                found.append(snapshot.Divergence(
                    "lv_without_volume", "LV %s" % name,
                    "LVM has %s but Cinder has %s" % (
                        name, "only a deleted volume" if vol else
                        "no such volume"),
                    "remove the LV (and any loop over it)",
                    safe=vol is not None,   # unknown LV: data, keep it
                    data={"lv": name, "volume_id": lv["volume_id"]}))
        have = {lv["volume_id"] for lv in snap.lvs.values()}
        attached = snapshot.live_attachments_by_volume(snap) \
            if snap.attachments is not None else None
        for vid, vol in sorted(snap.volumes.items()):
            if vol.get("deleted") or vol["status"] in (
                    "creating", "deleting", "error", "error_deleting"):
                continue
            if vid not in have:
                # The data is gone: marking the volume ``error`` keeps
                # anyone from attaching it. Not while an attachment holds
                # it (detach first: a guest may still have the disk).
                found.append(snapshot.Divergence(
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
                found.append(snapshot.Divergence(
                    "leftover_loop", "loop %s" % loop["name"],
                    "maps %s bytes at %s of %s, which no LV owns"
                    % (loop["size"], loop["offset"], loop["backing"]),
                    "detach the loop device (losetup -d)",
                    safe=loop["name"] not in backing,
                    data={"loop": loop["name"]}))
        for key, names in sorted(seen.items()):
            for extra in [n for n in names if n not in backing][
                    :len(names) - 1]:
                found.append(snapshot.Divergence(
                    "duplicate_loop", "loop %s" % extra,
                    "a second loop over LV %s (%s)" % (
                        ranges[key], ", ".join(names)),
                    "detach the extra loop device (losetup -d)",
                    data={"loop": extra}))
    return found

