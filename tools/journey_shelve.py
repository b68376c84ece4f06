"""The shelve of tools/journey.py (``--shelve``): the attachment parked
with no connector while the server has no host.

As ``openstack server shelve`` / ``server add volume`` /
``server unshelve`` ask it, hop by hop:

1. an image-backed server with a volume attached (``in-use``, exported
   to its host, connection_info on the BDM);
2. shelve: nova-api creates the ``<name>-shelved`` snapshot image
   (``queued``) and casts ``shelve_instance``; the host powers the guest
   off and uploads its disk into the image (``active``), then offloads
   (``shelved_offload_time`` 0): the domain destroyed, each volume
   *parked* -- a new attachment with no connector saved on the BDM, the
   old one deleted -- so the volume is ``reserved``, exported nowhere,
   and the server has no host: SHELVED_OFFLOADED;
3. a volume attached while offloaded: reserved and completed with no
   connector (``in-use``, its attachment ``attached``, no device, no
   export) -- there is no host to connect it to;
4. unshelve: nova-api picks a host and casts ``unshelve_instance``; the
   host names the new volume's device, updates each attachment with its
   connector, spawns the guest from the snapshot with both volumes and
   completes the attachments, then the snapshot image is deleted.

Then the server is deleted and both volumes with it.
"""

import json
import time

import journey_lab as lab
from ministack import executor

SERVER = "journey-shelve"


def _volume(cloud, volume_id):
    return lab.check(cloud.volume("GET", "/volumes/%s" % volume_id),
                     200)["volume"]


def _server(cloud, server_id):
    return lab.check(cloud.compute("GET", "/servers/%s" % server_id),
                     200)["server"]


def _in_status(cloud, server_id, status):
    server = _server(cloud, server_id)
    if server["status"] == "ERROR":
        raise SystemExit("server %s failed: %s" % (server_id,
                                                   server.get("fault")))
    return server if server["status"] == status else None


def _create_volume(cloud, name):
    lab.command("openstack volume create --size 1 %s" % name)
    volume_id = lab.check(cloud.volume("POST", "/volumes", {"volume": {
        "size": 1, "name": name}}), 202)["volume"]["id"]
    lab.wait("volume %s available" % name, lambda: _volume(
        cloud, volume_id)["status"] == "available")
    lab.say("   volume %s (%s) is available" % (name, volume_id))
    return volume_id


def _attach(cloud, server_id, volume_id):
    lab.command("openstack server add volume %s %s" % (server_id,
                                                        volume_id))
    resp = cloud.compute("POST", "/servers/%s/os-volume_attachments"
                         % server_id,
                         {"volumeAttachment": {"volumeId": volume_id}})
    body = lab.check(resp, 200)["volumeAttachment"]
    lab.say("POST /servers/%s/os-volume_attachments -> %s, device %s" % (
        server_id[:8], resp.status_code, body.get("device")))
    return body


def _action(cloud, server_id, action, text):
    lab.command("openstack server %s %s" % (text, server_id))
    resp = cloud.compute("POST", "/servers/%s/action" % server_id,
                         {action: None})
    lab.check(resp, 202)
    lab.say("POST /servers/%s/action {%s: null} -> %s" % (
        server_id[:8], action, resp.status_code))


def _exports(volume_id):
    """The volume's tgt target and the initiators its ACL lets in, or
    None (no target)."""
    from minicinder.volume.targets import tgt
    for target in tgt.TgtAdm().show_targets():
        if target["iqn"].endswith(volume_id):
            return target["acls"]
    return None


def show_volume(cloud, ledgers, server_id, volume_id):
    """Cinder's volume and attachments (with or without a connector),
    nova's BDM, and the volume's export in tgt."""
    volume = _volume(cloud, volume_id)
    lab.say("   volume %s:" % volume_id[:8])
    lab.say("      cinder volume:     status=%s attachments=%s" % (
        volume["status"], json.dumps([
            {k: a.get(k) for k in ("server_id", "attachment_id", "device")}
            for a in volume["attachments"]])))
    attachments = lab.check(cloud.volume(
        "GET", "/attachments?volume_id=%s" % volume_id),
        200)["attachments"]
    for att in attachments:
        detail = lab.check(cloud.volume(
            "GET", "/attachments/%s" % att["id"]), 200)["attachment"]
        info = detail.get("connection_info") or {}
        lab.say("      cinder attachment: %s status=%s instance=%s "
                "connector=%s" % (att["id"][:8], detail["status"],
                                  (detail["instance"] or "")[:8],
                                  "yes" if info else "none"))
        lab.say("         connection_info: %s" % (
            lab.masked(info) if info else None))
    if not attachments:
        lab.say("      cinder attachment: none")
    lab.say("      nova BDM:          %s" % lab.describe_bdm(
        ledgers.bdm(server_id, volume_id)))
    acls = _exports(volume_id)
    lab.say("      tgt export:        %s" % (
        "no target" if acls is None else "ACL %s" % (
            ", ".join(acls) if acls else "empty (exported to no one)")))


def show_all(cloud, ledgers, server_id, volume_ids, domain, running):
    """Every ledger of the server and its volumes; the domain and the
    guest only while it runs on a host."""
    lab.command("openstack volume show VOL -c status -c attachments; "
                "openstack --os-volume-api-version 3.44 volume attachment "
                "list --volume-id VOL")
    lab.command(lab.sql_command(ledgers.url, volume_ids[0]))
    lab.command("tgtadm --lld iscsi --mode target --op show")
    server = _server(cloud, server_id)
    lab.say("   server:             status=%s host=%s volumes=%s" % (
        server["status"], _host(ledgers, server_id),
        [v["id"][:8] for v in
         server["os-extended-volumes:volumes_attached"]]))
    for volume_id in volume_ids:
        show_volume(cloud, ledgers, server_id, volume_id)
    if not running:
        out, _ = executor.execute("virsh", "-c", ledgers.libvirt_uri,
                                  "list", "--all", "--name")
        names = out.split()
        lab.say("   %s: %s" % (ledgers.virsh_command("list --all --name"),
                               "%s is %s" % (domain, "defined" if domain
                                             in names else "not defined")))
        return
    lab.say("   %s:" % ledgers.virsh_command("domblklist %s" % domain))
    for line in ledgers.domblklist(domain).splitlines():
        lab.say("      " + line)
    lab.say("   lsblk inside the guest:")
    for line in ledgers.lsblk(domain).splitlines():
        lab.say("      " + line)


def _host(ledgers, server_id):
    """The server's host in nova's database (the admin's
    ``OS-EXT-SRV-ATTR:host``)."""
    import sqlalchemy as sa
    with ledgers.engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT host FROM instances WHERE uuid=:u"),
            {"u": server_id}).scalar()


def _snapshot_image(cloud, name):
    """The server's snapshot image through nova's image proxy (2.35), or
    None."""
    images = lab.check(cloud.compute("GET", "/images/detail",
                                     version="2.35"), 200)["images"]
    return next((i for i in images if i["name"] == name), None)


def _delete_server(cloud, server_id):
    resp = cloud.compute("DELETE", "/servers/%s" % server_id)
    lab.check(resp, 204, 404)
    if resp.status_code == 204:
        lab.wait("server %s deleted" % server_id, lambda: cloud.compute(
            "GET", "/servers/%s" % server_id).status_code == 404)


def _delete_volume(cloud, volume_id):
    lab.command("openstack volume delete %s" % volume_id)
    if lab.check(cloud.volume("DELETE", "/volumes/%s" % volume_id),
                 202, 400, 404) is None:
        lab.wait("volume deleted", lambda: cloud.volume(
            "GET", "/volumes/%s" % volume_id).status_code == 404)
        lab.say("   volume %s is gone" % volume_id)


def walk(cloud, ledgers_of, image, flavor):
    """Boot a server, attach a volume, shelve (offload), attach another,
    unshelve; every ledger after each phase; then delete it all.

    :param ledgers_of: the server's host's ledgers, given its id.
    """
    stamp = time.strftime("%H%M%S")
    server_id, volume_ids = None, []
    try:
        lab.heading("Boot an image-backed server and attach a volume")
        lab.command("openstack server create --image %s --flavor %s "
                    "--nic none --wait %s" % (image, flavor, SERVER))
        server_id = lab.check(cloud.compute("POST", "/servers", {"server": {
            "name": SERVER, "imageRef": image, "flavorRef": flavor,
            "networks": "none"}}), 202)["server"]["id"]
        lab.wait("server %s ACTIVE" % server_id, lambda: _in_status(
            cloud, server_id, "ACTIVE"), timeout=300)
        ledgers = ledgers_of(server_id)
        domain = ledgers.domain_name(server_id,
                                     lab.instance_name_template())
        lab.say("   server %s ACTIVE on %s, domain %s" % (
            server_id, ledgers.host, domain))
        ledgers.wait_for_guest(domain)
        volume_ids.append(_create_volume(cloud, "journey-shelve-%s" % stamp))
        _attach(cloud, server_id, volume_ids[0])
        lab.wait("volume in-use", lambda: _volume(
            cloud, volume_ids[0])["status"] == "in-use")

        lab.heading("Attached: in-use, exported to this host's initiator, "
                    "connection_info on the BDM")
        show_all(cloud, ledgers, server_id, volume_ids, domain, True)

        lab.heading("Shelve: nova-api creates the snapshot image "
                    "(queued) and casts shelve_instance; compute powers "
                    "off, uploads the disk (image active), offloads: "
                    "domain destroyed, each volume parked (a new "
                    "attachment with no connector, the old one deleted)")
        _action(cloud, server_id, "shelve", "shelve")
        with lab.Timeline(cloud, ledgers, server_id, volume_ids[0]):
            lab.wait("server SHELVED_OFFLOADED", lambda: _in_status(
                cloud, server_id, "SHELVED_OFFLOADED"), timeout=300)
            time.sleep(0.2)
        image_name = "%s-shelved" % SERVER
        snapshot = _snapshot_image(cloud, image_name)
        lab.command("openstack image show %s" % image_name)
        lab.say("   snapshot image:     %s" % (json.dumps({
            k: snapshot.get(k) for k in ("id", "name", "status",
                                         "OS-EXT-IMG-SIZE:size",
                                         "metadata")})
            if snapshot else "none"))

        lab.heading("Offloaded: no host, no domain; the volume reserved, "
                    "its attachment parked with no connector, no export")
        show_all(cloud, ledgers, server_id, volume_ids, domain, False)

        lab.heading("Attach while offloaded: attachment_create and "
                    "attachment_complete with no connector (in-use, no "
                    "device, exported nowhere)")
        volume_ids.append(_create_volume(
            cloud, "journey-shelve-late-%s" % stamp))
        _attach(cloud, server_id, volume_ids[1])
        lab.wait("volume in-use", lambda: _volume(
            cloud, volume_ids[1])["status"] == "in-use")
        show_all(cloud, ledgers, server_id, volume_ids, domain, False)

        lab.heading("Unshelve: nova-api picks a host, casts "
                    "unshelve_instance; compute names the new device, "
                    "attachment_update with its connector, spawns from "
                    "the snapshot with both volumes, attachment_complete; "
                    "the snapshot image is deleted")
        _action(cloud, server_id, "unshelve", "unshelve")
        with lab.Timeline(cloud, ledgers, server_id, volume_ids[0]):
            lab.wait("server ACTIVE", lambda: _in_status(
                cloud, server_id, "ACTIVE"), timeout=300)
            time.sleep(0.2)
        ledgers = ledgers_of(server_id)
        ledgers.wait_for_guest(domain)
        lab.heading("Unshelved: every ledger agrees, both volumes in the "
                    "guest")
        show_all(cloud, ledgers, server_id, volume_ids, domain, True)
        lab.say("   snapshot image:     %s" % (
            "deleted" if _snapshot_image(cloud, image_name) is None
            else "still there"))
        lab.heading("Instance actions")
        lab.command("openstack server event list %s" % server_id)
        for action in lab.check(cloud.compute(
                "GET", "/servers/%s/os-instance-actions" % server_id,
                version="2.84"), 200)["instanceActions"][:4]:
            lab.say("   %-14s %s" % (action["action"],
                                     action["request_id"]))
    finally:
        lab.heading("Clean up: delete the server and the volumes")
        if server_id:
            lab.command("openstack server delete --wait %s" % server_id)
            _delete_server(cloud, server_id)
            for volume_id in volume_ids:
                lab.wait("volume %s available" % volume_id[:8],
                         lambda v=volume_id: _volume(
                             cloud, v)["status"] in ("available", "error"))
        for volume_id in volume_ids:
            _delete_volume(cloud, volume_id)
