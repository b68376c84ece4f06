"""The cross-checks of the compute hosts themselves.

Pure functions over a :class:`~ministack.ledgers.snapshot.Snapshot`'s
``hosts`` (every compute host of the machine, as ``ministack-audit``
reads them), run by ``checks.run`` with the rest; on a snapshot without
``hosts`` (the reconciler's, one host) they find nothing:

* a host whose libvirtd did not answer: its guests, disks and secrets
  were not checked, which the report must say;
* CHAP secrets left in a host's libvirtd that none of its guests uses
  (QEMU's initiator needs the secret only while a disk names it);
* Cinder attachments whose connector names an initiator other than that
  of the host the instance is on: the export admits that name, and the
  host logs in as its own;
* on a host that connects through the kernel initiator, its iSCSI
  sessions and the BDMs of its instances: each session is needed by a
  BDM, each kernel-connected BDM (one with os-brick's ``device_path``)
  has its session.
"""

from ministack.ledgers import snapshot


def check_hosts(snap):
    """libvirt_unreachable."""
    found = []
    for name, host in sorted((snap.hosts or {}).items()):
        if host.get("error") is None:
            continue
        uri = host.get("uri") or ""
        found.append(snapshot.Divergence(
            "libvirt_unreachable", "libvirtd of %s" % name,
            "%s%s; the guests, disks and CHAP secrets of %s were not "
            "checked" % ("" if uri in host["error"] else uri + ": ",
                         host["error"], name),
            "start that libvirtd (in the lab: ministackctl start %s), then "
            "run the audit again" % (
                "libvirtd" if host.get("first") else "libvirtd@" + name),
            safe=False, data={"uri": uri}, host=name))
    return found


def _attach_in_flight(snap, host, volume_id):
    """Whether an attachment of the volume, of an instance on ``host``,
    is young or its instance busy (an attach defines the secret before
    the disk names it)."""
    for att in snap.attachments or []:
        if att["volume_id"] != volume_id or \
                snapshot.instance_host(snap, att["instance_uuid"]) != host:
            continue
        if att["instance_uuid"] in snap.in_flight or \
                snapshot.young(snap, att.get("updated_at")):
            return True
    return False


def _wired_targets(snap, host):
    """Target IQNs the BDMs of the host's live instances are wired to
    (a disk missing from its guest is plugged back with the secret)."""
    wired = set()
    for bdm in snap.bdms or []:
        inst = (snap.instances or {}).get(bdm["instance_uuid"])
        if inst is None or inst["deleted"] or inst.get("host") != host:
            continue
        data = (bdm.get("connection_info") or {}).get("data") or {}
        if data.get("target_iqn"):
            wired.add(data["target_iqn"])
    return wired


def check_secrets(snap):
    """secret_without_disk: a CHAP secret of one of our volumes' targets
    that no guest of its host names, nor any BDM of its instances.

    A secret of a volume this Cinder has no record of is another stack's
    (several stacks may share a libvirtd) and is left alone."""
    if snap.hosts is None or snap.volumes is None or snap.bdms is None:
        return []
    found = []
    for name, host in sorted(snap.hosts.items()):
        if host.get("secrets") is None:
            continue
        wired = _wired_targets(snap, name)
        users = host.get("secret_users") or set()
        for usage, secret in sorted(host["secrets"].items()):
            vid = secret.get("volume_id")
            if usage in users or vid not in snap.volumes or \
                    secret["target_iqn"] in wired or \
                    _attach_in_flight(snap, name, vid):
                continue
            vol = snap.volumes[vid]
            found.append(snapshot.Divergence(
                "secret_without_disk", "secret %s on %s" % (usage, name),
                "libvirtd of %s keeps the CHAP password of volume %s (%s) "
                "but none of its guests has a disk on %s"
                % (name, vid, "deleted" if vol.get("deleted")
                   else vol["status"], secret["target_iqn"]),
                "undefine the secret in that host's libvirtd",
                data={"usage": usage, "volume_id": vid}, host=name))
    return found


def check_initiators(snap):
    """attachment_wrong_initiator: a connected attachment whose
    connector's initiator is not the initiator of its instance's host.

    Left for a person: the export admits the connector's name, so the
    guest's host cannot log in (now or at its next login), and another
    host may; a new attachment (detach, attach again) carries the right
    connector. Only an attachment nova uses (its BDM names it) is
    checked: one without a BDM is an ``orphan_attachment``, whose repair
    deletes it, connector and all."""
    if snap.hosts is None or snap.attachments is None:
        return []
    by_iqn = snapshot.initiator_hosts(snap)
    bdms = snapshot.bdm_index(snap) if snap.bdms is not None else {}
    found = []
    for att in snap.attachments:
        bdm = bdms.get((att["instance_uuid"], att["volume_id"]))
        if not att.get("initiator") or bdm is None or \
                bdm["attachment_id"] not in (att["id"], None) or \
                att["instance_uuid"] in snap.in_flight or \
                snapshot.young(snap, att.get("updated_at")):
            continue
        name = snapshot.instance_host(snap, att["instance_uuid"])
        host = snap.hosts.get(name)
        if host is None or not host.get("initiator") or \
                att["initiator"] == host["initiator"]:
            continue    # not a host of this machine, or unknown, or right
        other = by_iqn.get(att["initiator"])
        found.append(snapshot.Divergence(
            "attachment_wrong_initiator", "attachment %s" % att["id"],
            "volume %s is attached to instance %s on %s, which logs in as "
            "%s, but the attachment's connector names %s%s"
            % (att["volume_id"], att["instance_uuid"], name,
               host["initiator"], att["initiator"],
               " (the initiator of %s)" % other if other else ""),
            "by hand: detach the volume and attach it again (the new "
            "attachment carries %s's connector)" % name, safe=False,
            data={"attachment_id": att["id"], "volume_id": att["volume_id"],
                  "instance_uuid": att["instance_uuid"],
                  "initiator": att["initiator"],
                  "expected_initiator": host["initiator"]}, host=name))
    return found


def _kernel_wired(snap, host):
    """{target_iqn: volume_id} of the BDMs of ``host``'s live instances
    that os-brick connected (their connection_info has a device_path)."""
    wired = {}
    for bdm in snap.bdms or []:
        inst = (snap.instances or {}).get(bdm["instance_uuid"])
        if inst is None or inst["deleted"] or inst.get("host") != host:
            continue
        data = (bdm.get("connection_info") or {}).get("data") or {}
        if data.get("target_iqn") and data.get("device_path"):
            wired[data["target_iqn"]] = bdm["volume_id"]
    return wired


def check_iscsi_sessions(snap):
    """session_without_disk, bdm_without_session (kernel path only).

    Left for a person: a logout under a guest that still reads the disk
    loses its data path, and a missing session is a disk the guest lost
    (detach and attach again)."""
    if snap.hosts is None or snap.bdms is None:
        return []
    found = []
    for name, host in sorted(snap.hosts.items()):
        sessions = host.get("iscsi_sessions")
        if sessions is None:
            continue
        wired = _kernel_wired(snap, name)
        all_wired = _wired_targets(snap, name)
        for iqn, vid in sorted(sessions.items()):
            if iqn in all_wired or _attach_in_flight(snap, name, vid):
                continue
            found.append(snapshot.Divergence(
                "session_without_disk", "iSCSI session %s on %s"
                % (iqn, name),
                "the kernel of %s is logged in to %s but no BDM of its "
                "instances uses volume %s" % (name, iqn, vid),
                "by hand: iscsiadm -m node -T %s --logout" % iqn,
                safe=False, data={"target_iqn": iqn, "volume_id": vid},
                host=name))
        for iqn, vid in sorted(wired.items()):
            if iqn in sessions or _attach_in_flight(snap, name, vid):
                continue
            found.append(snapshot.Divergence(
                "bdm_without_session", "volume %s on %s" % (vid, name),
                "a BDM of %s connects volume %s through the kernel, but "
                "%s has no iSCSI session to %s" % (name, vid, name, iqn),
                "by hand: detach the volume and attach it again",
                safe=False, data={"target_iqn": iqn, "volume_id": vid},
                host=name))
    return found
