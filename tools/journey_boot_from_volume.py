"""The boot from volume of tools/journey.py (``--boot-from-volume``): the
attach's handshake at another moment, the server's spawn.

As ``openstack server create --volume BOOTVOL`` asks it, hop by hop:

1. cinder makes the boot volume from the image (``imageRef``):
   creating -> available, ``bootable`` true;
2. nova-api validates ``block_device_mapping_v2``, reserves the volume
   (attachment_create with no connector: ``reserved``), writes the BDM
   (``/dev/vda``, the attachment, no connection_info yet) and casts
   ``build_and_run_instance``;
3. nova-compute updates the attachment with its connector (attaching),
   connects the volume, defines the guest with the LUN as its root disk
   ``vda`` (no local image file) and starts it;
4. once the guest runs, attachment_complete: the volume is ``in-use``.

Then the server is deleted: the host disconnects the volume and deletes
its attachment, and the volume -- not marked delete_on_termination --
is ``available`` again, with the guest's data on it.
"""

import json
import time

import journey_lab as lab

SERVER = "journey-bfv"


def image_id(cloud, name_or_id):
    """The image's id (nova's image proxy, 2.35: the last version with
    it), as Cinder's ``imageRef`` needs one."""
    images = lab.check(cloud.compute("GET", "/images", version="2.35"),
                       200)["images"]
    for image in images:
        if name_or_id in (image["id"], image["name"]):
            return image["id"]
    raise SystemExit("no image %r (openstack image list)" % name_or_id)


def _volume(cloud, volume_id):
    return lab.check(cloud.volume("GET", "/volumes/%s" % volume_id),
                     200)["volume"]


def _volume_in(cloud, volume_id, status):
    """A wait's probe: the volume once it is ``status``, else None."""
    volume = _volume(cloud, volume_id)
    return volume if volume["status"] == status else None


def _delete_server(cloud, server_id):
    resp = cloud.compute("DELETE", "/servers/%s" % server_id)
    lab.check(resp, 204, 404)
    if resp.status_code == 404:
        return
    lab.wait("server %s deleted" % server_id, lambda: cloud.compute(
        "GET", "/servers/%s" % server_id).status_code == 404)


def walk(cloud, ledgers_of, show_ledgers, image, flavor, tracing):
    """Boot a server from a volume made from ``image``, show every ledger
    before the cast and after the spawn, then delete the server.

    :param ledgers_of: the server's host's ledgers, given its id.
    :param show_ledgers: journey.show_ledgers.
    """
    name = "journey-boot-%s" % time.strftime("%H%M%S")
    lab.heading("Create the boot volume from image %s (cinder: creating "
                "-> available, bootable)" % image)
    lab.command("openstack volume create --image %s --size 1 --bootable %s"
                % (image, name))
    volume_id = lab.check(cloud.volume("POST", "/volumes", {"volume": {
        "size": 1, "name": name, "imageRef": image_id(cloud, image)}}),
        202)["volume"]["id"]
    server_id = None
    try:
        volume = lab.wait("volume available", lambda: _volume_in(
            cloud, volume_id, "available"), timeout=300)
        lab.say("   volume %s is available, bootable=%s, image %s" % (
            volume_id, volume["bootable"], (volume.get(
                "volume_image_metadata") or {}).get("image_name")))

        lab.heading("Boot from volume: nova-api validates "
                    "block_device_mapping_v2, attachment_create (volume "
                    "reserved), writes the BDM /dev/vda, casts "
                    "build_and_run_instance; compute runs attachment_update "
                    "-> connect -> the guest defined with vda on the LUN -> "
                    "attachment_complete")
        lab.command("openstack server create --volume %s --flavor %s "
                    "--nic none --wait %s" % (volume_id, flavor, SERVER))
        trace_id, headers = tracing.headers()
        resp = cloud.compute("POST", "/servers", {"server": {
            "name": SERVER, "flavorRef": flavor, "imageRef": "",
            "networks": "none", "block_device_mapping_v2": [{
                "uuid": volume_id, "source_type": "volume",
                "destination_type": "volume", "boot_index": 0,
                "delete_on_termination": False}]}}, headers=headers)
        server_id = lab.check(resp, 202)["server"]["id"]
        lab.say("POST /servers {block_device_mapping_v2: [volume %s, "
                "boot_index 0]} -> %s in %.0f ms, server %s" % (
                    volume_id[:8], resp.status_code,
                    resp.elapsed.total_seconds() * 1000, server_id))
        if trace_id:
            lab.say("   traced: osprofiler trace %s" % trace_id)
        lab.say("   timeline as observed (volume status and the BDM row):")

        def active():
            server = lab.check(cloud.compute(
                "GET", "/servers/%s" % server_id), 200)["server"]
            if server["status"] == "ERROR":
                raise SystemExit("server %s failed: %s" % (
                    server_id, server.get("fault")))
            return server if server["status"] == "ACTIVE" else None
        # nova's DB only, until the server has a host.
        with lab.Timeline(cloud, lab.Ledgers(lab.nova_db_url()), server_id,
                          volume_id):
            server = lab.wait("server %s ACTIVE" % server_id, active,
                              timeout=300)
            lab.wait("volume in-use", lambda: _volume_in(
                cloud, volume_id, "in-use"))
            time.sleep(0.2)
        ledgers = ledgers_of(server_id)
        domain = ledgers.domain_name(server_id, lab.instance_name_template())
        lab.say("   server %s ACTIVE on %s, image %s, volumes attached %s" % (
            server_id, ledgers.host, json.dumps(server["image"]),
            json.dumps(server["os-extended-volumes:volumes_attached"])))
        booted = ledgers.wait_for_guest(domain)
        if booted >= 1:
            lab.say("   waited %.1f s for the guest to boot (its agent "
                    "answers)" % booted)

        lab.heading("Booted from the volume: every ledger agrees")
        show_ledgers(cloud, ledgers, server, volume_id, domain)
        rc, out, _ = ledgers.guest(domain, [
            "/bin/sh", "-c", "for d in /sys/block/vd*; do echo $(basename $d)"
            " $(cat $d/serial 2>/dev/null); done"])
        lab.say("   the guest's disks (name serial; virtio serial = volume "
                "id[:20]): %s" % ", ".join(
                    " ".join(line.split()) for line in out.splitlines()
                    if line.strip()))
        tracing.show("boot from volume", trace_id, "build_and_run_instance")

        lab.heading("Delete the server: compute unplugs and disconnects "
                    "the root volume, attachment_delete; the volume is "
                    "kept (delete_on_termination false)")
        lab.command("openstack server delete --wait %s" % server_id)
        with lab.Timeline(cloud, ledgers, server_id, volume_id):
            _delete_server(cloud, server_id)
            lab.wait("volume available", lambda: _volume_in(
                cloud, volume_id, "available"))
            time.sleep(0.2)
        server_id = None
        volume = _volume(cloud, volume_id)
        attachments = lab.check(cloud.volume(
            "GET", "/attachments?volume_id=%s" % volume_id),
            200)["attachments"]
        lab.say("   cinder volume:      status=%s attachments=%s" % (
            volume["status"], volume["attachments"]))
        lab.say("   cinder attachments: %s" % (attachments or "none"))
    finally:
        if server_id:
            _delete_server(cloud, server_id)
        lab.heading("Clean up: delete the boot volume")
        lab.command("openstack volume delete %s" % volume_id)
        if lab.check(cloud.volume("DELETE", "/volumes/%s" % volume_id),
                     202, 400, 404) is None:
            lab.wait("volume deleted", lambda: cloud.volume(
                "GET", "/volumes/%s" % volume_id).status_code == 404)
            lab.say("   volume %s is gone" % volume_id)
