"""The extend of tools/journey.py (``--extend``): after the attach, grow
the attached volume by 1 GiB and show the new size in every ledger.

Cinder's 3.42 extend of an in-use volume, asked at 3.71 as ``openstack
--os-volume-api-version 3.71 volume set --size`` asks it, hop by hop:

1. cinder-api: ``os-extend`` (in-use -> extending), 202;
2. cinder-volume: ``lvextend`` in place, the loop device over the LV
   grown live (``LOOP_SET_STATUS64``), tgt's LUN reopened at the new
   size (``tgtadm logicalunit update``); extending -> in-use;
3. cinder-volume tells nova: ``POST /v2.1/os-server-external-events``
   (``volume-extended``, the volume id as its tag), with its service
   token; nova-api records the ``extend_volume`` action and casts
   ``external_instance_event`` to the server's host;
4. nova-compute reads Cinder's new size into the BDM and resizes the
   disk in the running guest (``virDomainBlockResize``), whose kernel
   sees it (``lsblk``).

The ledgers: Cinder's size, the LV (``lvs``), tgt's LUN (``tgtadm --op
show``), libvirt (``virsh domblklist``/``domblkinfo`` on the host's
libvirtd), the BDM's ``volume_size`` and the guest's own block device.
"""

import sqlalchemy as sa

import journey_lab as lab

VERSION = "3.71"
CINDER_CONF = "/etc/ministack/minicinder.conf"
GiB = 1024 ** 3


def volume_group(path=CINDER_CONF):
    return lab._ini(path).get("DEFAULT", "volume_group",
                              fallback="stack-volumes-lvmdriver-1")


def lv_bytes(vg, volume_id):
    from ministack import executor
    out, _ = executor.execute("lvs", "--noheadings", "--units", "b",
                              "--nosuffix", "-o", "lv_size",
                              "%s/volume-%s" % (vg, volume_id))
    return int(out.strip())


def lun(volume_id):
    """tgt's target of the volume: (tid, LUN 1's size, backing store)."""
    from minicinder.volume.targets import tgt
    for target in tgt.TgtAdm().show_targets():
        if target["iqn"].endswith(":volume-%s" % volume_id):
            for entry in target["luns"]:
                if entry["lun"] == 1:
                    return (target["tid"], entry["size"],
                            entry.get("backing_store"))
    return None


def domblkinfo(ledgers, domain, dev):
    from ministack import executor
    out, _ = executor.execute("virsh", "-c", ledgers.libvirt_uri,
                              "domblkinfo", domain, dev)
    return {k.strip(): v.strip() for k, _, v in
            (line.partition(":") for line in out.splitlines()) if v}


def bdm_volume_size(ledgers, server_id, volume_id):
    with ledgers.engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT volume_size FROM block_device_mapping WHERE "
            "instance_uuid=:i AND volume_id=:v AND deleted=0"),
            {"i": server_id, "v": volume_id}).scalar()


def guest_disk(ledgers, domain, volume_id):
    """``(vdX, bytes)`` of the volume's disk as the guest kernel sees it
    (virtio serial = the volume id's first 20 characters)."""
    rc, out, _ = ledgers.guest(domain, [
        "/bin/sh", "-c", "for d in /sys/block/vd*; do echo ${d##*/} "
        "$(cat $d/size) $(cat $d/serial 2>/dev/null); done"])
    for line in out.splitlines() if rc == 0 else []:
        parts = line.split()
        if len(parts) == 3 and volume_id.startswith(parts[2]):
            return parts[0], int(parts[1]) * 512
    return None, None


class SizeTimeline(lab.Timeline):
    """The volume's status and size in Cinder and the BDM's
    ``volume_size``, each change printed as it happens (the extend's
    second half, nova's, runs after Cinder answered and after it is
    in-use again)."""

    def snapshot(self):
        volume = self.cloud.volume("GET", "/volumes/%s" % self.volume_id)
        if volume.status_code != 200:
            return "gone", ""
        volume = volume.json()["volume"]
        return volume["status"], "size=%s GiB, BDM volume_size=%s" % (
            volume["size"], bdm_volume_size(self.ledgers, self.server_id,
                                            self.volume_id))


def show_sizes(cloud, ledgers, server_id, volume_id, domain, dev, vg):
    """Every ledger's size of the volume."""
    lab.command("openstack --os-volume-api-version %s volume show %s -c "
                "size -c status" % (VERSION, volume_id))
    volume = lab.check(cloud.volume("GET", "/volumes/%s" % volume_id,
                                    version=VERSION), 200)["volume"]
    lab.say("   cinder volume:      size=%s GiB status=%s" % (
        volume["size"], volume["status"]))
    lab.command("lvs --units b -o lv_name,lv_size %s/volume-%s" % (
        vg, volume_id))
    size = lv_bytes(vg, volume_id)
    lab.say("   LV:                 %d bytes (%g GiB)" % (size, size / GiB))
    lab.command("tgtadm --lld iscsi --op show --mode target")
    found = lun(volume_id)
    lab.say("   tgt LUN 1:          %s" % (
        "tid %s, Size: %s, backing store %s" % found if found
        else "no target"))
    lab.command(ledgers.virsh_command("domblklist %s" % domain))
    for line in ledgers.domblklist(domain).splitlines():
        lab.say("      " + line)
    lab.command(ledgers.virsh_command("domblkinfo %s %s" % (domain, dev)))
    info = domblkinfo(ledgers, domain, dev)
    lab.say("   libvirt %s:        Capacity %s bytes" % (
        dev, info.get("Capacity")))
    lab.say("   nova BDM:           volume_size=%s" % bdm_volume_size(
        ledgers, server_id, volume_id))
    lab.command("ministack-guest %s -- lsblk" % server_id)
    name, size = guest_disk(ledgers, domain, volume_id)
    lab.say("   in the guest:       /dev/%s %s bytes" % (name, size))
    for line in ledgers.lsblk(domain).splitlines():
        lab.say("      " + line)


def walk(cloud, ledgers, server, volume_id, domain, tracing, by=1):
    """Grow the attached ``volume_id`` by ``by`` GiB, watch it reach the
    guest, show every ledger and the traced hops.

    :raises SystemExit: the volume did not grow (no room after its LV:
        back in-use at its size) or the guest never saw it.
    """
    server_id = server["id"]
    vg = volume_group()
    bdm = ledgers.bdm(server_id, volume_id)
    dev = bdm["device_name"].rpartition("/")[2]
    old = lab.check(cloud.volume("GET", "/volumes/%s" % volume_id),
                    200)["volume"]["size"]
    new = old + by
    lab.heading("Extend while attached (volume API %s): cinder-api os-extend "
                "(in-use -> extending); cinder-volume grows the LV in "
                "place, the loop device (LOOP_SET_STATUS64) and reopens "
                "tgt's LUN (extending -> in-use); tells nova volume-"
                "extended; nova-api casts external_instance_event; the "
                "compute host resizes the disk (virDomainBlockResize)"
                % VERSION)
    show_sizes(cloud, ledgers, server_id, volume_id, domain, dev, vg)
    trace_id, headers = tracing.headers()
    lab.command("openstack --os-volume-api-version %s volume set --size "
                "%d %s" % (VERSION, new, volume_id))
    resp = cloud.http.post(
        cloud.volume_url + "/volumes/%s/action" % volume_id,
        json={"os-extend": {"new_size": new}}, timeout=120,
        headers=dict(headers, **{"OpenStack-API-Version":
                                 "volume %s" % VERSION}))
    lab.check(resp, 202)
    lab.say("POST /volumes/%s/action {os-extend: {new_size: %d}} -> %s "
            "(request %s)" % (volume_id[:8], new, resp.status_code,
                              resp.headers.get("x-openstack-request-id")))
    if trace_id:
        lab.say("   traced: osprofiler trace %s" % trace_id)

    def settled():
        volume = lab.check(cloud.volume("GET", "/volumes/%s" % volume_id),
                           200)["volume"]
        if volume["status"].startswith("error"):
            raise SystemExit("volume %s: %s" % (volume_id,
                                                volume["status"]))
        if volume["status"] != "in-use":
            return None
        # nova's half: the BDM takes Cinder's new size before the resize
        return volume if volume["size"] != new or bdm_volume_size(
            ledgers, server_id, volume_id) == new else None
    lab.say("   timeline as observed (Cinder's status and size, the BDM):")
    with SizeTimeline(cloud, ledgers, server_id, volume_id):
        volume = lab.wait("volume in-use again", settled)
    if volume["size"] != new:
        raise SystemExit("volume %s is back in-use at %s GiB: no room to "
                         "grow its LV in place (see minicinder.log)" % (
                             volume_id, volume["size"]))
    lab.say("   volume %s is in-use at %s GiB" % (volume_id, new))
    lab.wait("the guest to see %d GiB" % new, lambda: guest_disk(
        ledgers, domain, volume_id)[1] == new * GiB, timeout=120)
    lab.heading("Extended: every ledger shows %d GiB" % new)
    show_sizes(cloud, ledgers, server_id, volume_id, domain, dev, vg)
    _show_action(cloud, server_id)
    tracing.show("extend", trace_id, "external_instance_event")


def _show_action(cloud, server_id):
    lab.command("openstack --os-compute-api-version 2.84 server event "
                "list %s" % server_id)

    def ended():
        actions = lab.check(cloud.compute(
            "GET", "/servers/%s/os-instance-actions" % server_id,
            version="2.84"), 200)["instanceActions"]
        for action in actions:
            if action["action"] != "extend_volume":
                continue
            detail = lab.check(cloud.compute(
                "GET", "/servers/%s/os-instance-actions/%s" % (
                    server_id, action["request_id"]), version="2.84"),
                200)["instanceAction"]
            events = detail.get("events") or []
            if events and all(e.get("result") for e in events):
                return action, events
            return None
        return None
    action, events = lab.wait("the extend_volume action to end", ended,
                              timeout=60)
    lab.say("   %-14s %s  events: %s" % (
        action["action"], action["request_id"], ", ".join(
            "%s=%s" % (e["event"], e["result"]) for e in events)))
