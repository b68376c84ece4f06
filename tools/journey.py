#!/usr/bin/env python3
"""Walk the seed's attach/detach journey on the deployed stack, out loud.

This is the main job of the lab: it creates a volume, attaches it to the
demo server through the compute API, and shows every ledger of the seed at
each phase -- the Cinder volume and attachment, nova's
``block_device_mapping`` row, ``virsh domblklist`` and ``lsblk`` inside the
guest (through the QEMU guest agent) -- then detaches it and shows them
again. Nothing is simulated: every line is read from the running system.

The attach and the detach are traced with osprofiler (when the lab's
``[profiler]`` is enabled): after each, the hops every daemon recorded
are printed as ``ministack-trace show`` prints them, with the URL of the
journey page that draws them (``[trace] listen_port``).
The ledgers and clients are in journey_lab.py, the tracing in
journey_trace.py.

Usage (as root, after devstack/stack.sh)::

    /opt/stack/venv/bin/python tools/journey.py [--cloud ministack]
    /opt/stack/venv/bin/python tools/journey.py --ensure-server   # boot only
    /opt/stack/venv/bin/python tools/journey.py --host compute2   # 2nd host
    /opt/stack/venv/bin/python tools/journey.py --extend   # + extend
    /opt/stack/venv/bin/python tools/journey.py --boot-from-volume
    /opt/stack/venv/bin/python tools/journey.py --shelve
    /opt/stack/venv/bin/python tools/journey.py --live-migrate   # 2 hosts
    /opt/stack/venv/bin/python tools/journey.py --resize

With ``--extend`` the attached volume also grows by 1 GiB before the
detach (Cinder 3.42's extend of an in-use volume, asked at 3.71): every
ledger shows the new size -- Cinder, the LV, tgt's LUN, ``virsh
domblklist``/``domblkinfo``, the BDM and the guest -- and the extend's
hops are printed as the attach's are (journey_extend.py).

With ``--boot-from-volume`` the journey is a boot from volume instead of
the attach (journey_boot_from_volume.py): a bootable volume made from the
image, a server booted from it (the reservation before the cast, the
connect at spawn, vda on the LUN), every ledger before and after, the
boot's hops, then the server deleted and the volume kept.

With ``--shelve`` the journey is a shelve instead of the attach
(journey_shelve.py): a server with a volume attached is shelved and
offloaded (the snapshot image created, then uploaded; the volume parked:
``reserved``, its attachment with no connector, no export), a second
volume is attached while it has no host (completed with no connector),
then it is unshelved with both; every ledger after each phase, then
the server and the volumes deleted.

With ``--live-migrate`` (a lab of two or more compute hosts) a volume
is attached to the demo server and written from the guest, then the
admin live-migrates the server to another host and back
(journey_live_migrate.py): the destination's second attachment, tgt's
ACL naming both hosts and then only the new one, the migration record's
status, the domain on each host and the data read back after the move.

With ``--resize`` a volume is attached to the demo server and written
from the guest, then the server is resized to flavor 84 and confirmed,
resized back and reverted, and resized back and confirmed
(journey_resize.py): the server's status and task, the migration's
status, the parked attachment (``reserved``, no connector, no export),
tgt's ACL, the guest's memory and the data read back after each move.

With ``--host HOST`` (a lab of more than one compute host) the journey
walks on the demo server of that host, ``demo-HOST``: the admin boots it
there, in the demo project (compute 2.74's ``host``), if it is not there.

Credentials come from /etc/openstack/clouds.yaml (keystone), or with
``--noauth`` from noauth tokens; the nova database URL from
/etc/ministack/miniapi.conf.
"""

import argparse
import json
import sys
import time

import journey_boot_from_volume
import journey_extend
import journey_lab as lab

# The bench tools use these through this module (journey.Cloud, ...).
from journey_lab import Cloud  # noqa: F401
from journey_lab import Ledgers  # noqa: F401
from journey_lab import _ini  # noqa: F401
from journey_lab import check  # noqa: F401
from journey_lab import cinder_db_url  # noqa: F401
from journey_lab import command  # noqa: F401
from journey_lab import describe_bdm  # noqa: F401
from journey_lab import heading  # noqa: F401
from journey_lab import instance_name_template  # noqa: F401
from journey_lab import masked  # noqa: F401
from journey_lab import nova_db_url  # noqa: F401
from journey_lab import say  # noqa: F401
from journey_lab import sql_command  # noqa: F401
from journey_lab import wait  # noqa: F401
import journey_live_migrate
import journey_resize
import journey_shelve
import journey_trace

DEMO_SERVER = "demo"


def ensure_server(cloud, image, flavor, name=DEMO_SERVER, host=None,
                  creator=None):
    """The server ``name``, ACTIVE: booted if missing (by ``creator``, on
    ``host`` when given), replaced if in ERROR, started if SHUTOFF."""
    servers = check(cloud.compute(
        "GET", "/servers/detail?name=^%s$" % name), 200)["servers"]
    for server in servers:
        if server["status"] == "ERROR":
            # e.g. its domain was lost: replace it rather than walk on it.
            say("server %s is in ERROR (%s): replacing it" % (
                server["id"], (server.get("fault") or {}).get("message")))
            check(cloud.compute("DELETE", "/servers/%s" % server["id"]),
                  204, 404)
            path = "/servers/%s" % server["id"]
            wait("server %s deleted" % server["id"],
                 lambda path=path: cloud.compute(
                     "GET", path).status_code == 404)
    servers = [s for s in servers if s["status"] != "ERROR"]
    if servers:
        server_id = servers[0]["id"]
        if servers[0]["status"] == "SHUTOFF":
            say("starting server %s" % server_id)
            check(cloud.compute("POST", "/servers/%s/action" % server_id,
                                {"os-start": None}), 202)
    else:
        say("booting server %r (image %s, flavor %s%s)" % (
            name, image, flavor, ", on host %s" % host if host else ""))
        body = {"name": name, "imageRef": image, "flavorRef": flavor,
                "networks": "none"}
        if host:
            body["host"] = host
        server_id = check((creator or cloud).compute(
            "POST", "/servers", {"server": body}), 202)["server"]["id"]

    def active():
        server = check(cloud.compute("GET", "/servers/%s" % server_id),
                       200)["server"]
        if server["status"] == "ERROR":
            raise SystemExit("server %s failed: %s" % (
                server_id, server.get("fault")))
        return server if server["status"] == "ACTIVE" else None
    return wait("server %s ACTIVE" % server_id, active)


def show_ledgers(cloud, ledgers, server, volume_id, domain):
    command("openstack volume show %s -c status -c attachments" % volume_id)
    command("openstack --os-volume-api-version 3.44 volume attachment list "
            "--volume-id %s" % volume_id)
    command(sql_command(ledgers.url, volume_id))
    command(ledgers.virsh_command("domblklist %s" % domain))
    command("ministack-guest %s -- lsblk" % server["id"])
    kernel = ledgers.kernel_initiator()
    if kernel:
        command("iscsiadm -m session")
    volume = check(cloud.volume("GET", "/volumes/%s" % volume_id),
                   200)["volume"]
    say("   cinder volume:      status=%s attachments=%s" % (
        volume["status"], json.dumps([
            {k: a.get(k) for k in ("server_id", "attachment_id", "device")}
            for a in volume["attachments"]])))
    attachments = check(cloud.volume(
        "GET", "/attachments?volume_id=%s" % volume_id), 200)["attachments"]
    for att in attachments:
        detail = check(cloud.volume("GET", "/attachments/%s" % att["id"]),
                       200)["attachment"]
        info = detail.get("connection_info") or {}
        say("   cinder attachment:  %s status=%s instance=%s" % (
            att["id"][:8], detail["status"], detail["instance"]))
        say("      connection_info: %s" % (masked(info) if info else None))
    if not attachments:
        say("   cinder attachment:  none")
    say("   nova BDM:           %s" % describe_bdm(
        ledgers.bdm(server["id"], volume_id)))
    say("   %s:" % ledgers.virsh_command("domblklist %s" % domain))
    for line in ledgers.domblklist(domain).splitlines():
        say("      " + line)
    if kernel:
        say("   host block device:  %s" % ledgers.host_device(
            server["id"], volume_id))
        say("   iscsiadm -m session:")
        for line in ledgers.iscsi_sessions() or ["no session"]:
            say("      " + line)
    say("   lsblk inside the guest:")
    for line in ledgers.lsblk(domain).splitlines():
        say("      " + line)


def walk(cloud, ledgers, server, tracing, extend=False):
    server_id = server["id"]
    domain = ledgers.domain_name(server_id, instance_name_template())
    say("server  %s (%s), libvirt domain %s, %s, on compute host %s" % (
        server["name"], server_id, domain, server["status"], ledgers.host))
    booted = ledgers.wait_for_guest(domain)
    if booted >= 1:
        say("   waited %.1f s for the guest to boot (its agent answers)"
            % booted)

    heading("Create a volume (cinder: creating -> available)")
    name = "journey-%s" % time.strftime("%H%M%S")
    volume_id = check(cloud.volume("POST", "/volumes", {"volume": {
        "size": 1, "name": name}}), 202)["volume"]["id"]
    command("openstack volume create --size 1 %s" % name)
    say("POST /volumes {size: 1, name: %s} -> 202, id %s" % (name, volume_id))
    wait("volume available", lambda: check(cloud.volume(
        "GET", "/volumes/%s" % volume_id), 200)["volume"]["status"]
        == "available")
    say("   volume %s is available" % volume_id)
    show_ledgers(cloud, ledgers, server, volume_id, domain)

    try:
        heading("Attach: nova-api validates, reserves /dev/vdX (RPC CALL "
                "reserve_block_device_name), attachment_create (volume "
                "reserved), casts attach_volume; compute runs "
                "attachment_update -> libvirt hot-plug -> save "
                "connection_info -> attachment_complete")
        timeline = lab.Timeline(cloud, ledgers, server_id, volume_id)
        attach_trace, trace_headers = tracing.headers()
        resp = cloud.compute("POST", "/servers/%s/os-volume_attachments"
                             % server_id,
                             {"volumeAttachment": {"volumeId": volume_id}},
                             headers=trace_headers)
        body = check(resp, 200)
        command("openstack server add volume %s %s" % (server_id, volume_id))
        say("POST /servers/%s/os-volume_attachments -> %s in %.0f ms "
            "(request %s)" % (server_id[:8], resp.status_code,
                              resp.elapsed.total_seconds() * 1000,
                              resp.headers.get("x-openstack-request-id")))
        say("   %s" % json.dumps(body["volumeAttachment"]))
        if attach_trace:
            say("   traced: osprofiler trace %s" % attach_trace)
        say("   timeline as observed (volume status and the BDM row):")
        with timeline:
            wait("volume in-use", lambda: timeline.snapshot()[0] == "in-use")
            time.sleep(0.2)
        heading("Attached: every ledger agrees")
        show_ledgers(cloud, ledgers, server, volume_id, domain)
        rc, out, _ = ledgers.guest(domain, [
            "/bin/sh", "-c", "for d in /sys/block/vd*; do echo $(basename $d)"
            " $(cat $d/serial 2>/dev/null); done"])
        say("   guest disk serials (virtio serial = volume id[:20]): %s" %
            " ".join(out.split()))
        tracing.show("attach", attach_trace, "attach_volume")
        if extend:
            journey_extend.walk(cloud, ledgers, server, volume_id, domain,
                                tracing)

        heading("Detach: nova-api begin_detaching (volume detaching), casts "
                "detach_volume; compute unplugs with retries, "
                "attachment_delete, os-brick disconnect, BDM destroyed")
        timeline = lab.Timeline(cloud, ledgers, server_id, volume_id)
        detach_trace, trace_headers = tracing.headers()
        resp = cloud.compute("DELETE", "/servers/%s/os-volume_attachments/%s"
                             % (server_id, volume_id), headers=trace_headers)
        check(resp, 202)
        command("openstack server remove volume %s %s" % (server_id,
                                                          volume_id))
        say("DELETE /servers/%s/os-volume_attachments/%s -> %s" % (
            server_id[:8], volume_id[:8], resp.status_code))
        if detach_trace:
            say("   traced: osprofiler trace %s" % detach_trace)
        with timeline:
            wait("volume available",
                 lambda: timeline.snapshot() == ("available", "no BDM row"))
            time.sleep(0.2)
        heading("Detached")
        show_ledgers(cloud, ledgers, server, volume_id, domain)
        tracing.show("detach", detach_trace, "detach_volume")
        heading("Instance actions")
        command("openstack server event list %s" % server_id)
        actions = check(cloud.compute(
            "GET", "/servers/%s/os-instance-actions" % server_id,
            version="2.84"), 200)["instanceActions"]
        for action in actions[:3 if extend else 2]:
            detail = check(cloud.compute(
                "GET", "/servers/%s/os-instance-actions/%s" % (
                    server_id, action["request_id"]), version="2.84"),
                200)["instanceAction"]
            say("   %-14s %s  events: %s" % (
                action["action"], action["request_id"], ", ".join(
                    "%s=%s" % (e["event"], e["result"])
                    for e in detail.get("events", []))))
    finally:
        heading("Clean up: delete the volume")
        command("openstack volume delete %s" % volume_id)
        deleted = check(cloud.volume("DELETE", "/volumes/%s" % volume_id),
                        202, 400, 404) is None
        say("   DELETE /volumes/%s requested" % volume_id)
        if deleted:
            wait("volume deleted", lambda: cloud.volume(
                "GET", "/volumes/%s" % volume_id).status_code == 404)
            say("   volume %s is gone" % volume_id)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cloud", default="ministack",
                        help="clouds.yaml entry (default: ministack, demo)")
    parser.add_argument("--noauth", action="store_true",
                        help="use noauth tokens instead of keystone")
    parser.add_argument("--image", default="ministack-guest")
    parser.add_argument("--flavor", default="42",
                        help="flavor id (default: 42, m1.nano)")
    parser.add_argument("--ensure-server", action="store_true",
                        help="only make sure the demo server is ACTIVE")
    parser.add_argument("--host", default=None,
                        help="the compute host of the server (booted there "
                             "by the admin if missing); the server is then "
                             "demo-HOST unless --server says")
    parser.add_argument("--server", default=None,
                        help="the server to walk on (default: demo)")
    parser.add_argument("--no-trace", action="store_true",
                        help="do not trace the attach and the detach")
    parser.add_argument("--extend", action="store_true",
                        help="after the attach, extend the volume by 1 GiB "
                             "(3.71) and show every ledger, then detach")
    parser.add_argument("--live-migrate", action="store_true",
                        help="(two or more compute hosts) attach a volume "
                             "to the demo server, write to it, live-migrate "
                             "the server to another host and back, show "
                             "every ledger, then detach")
    parser.add_argument("--resize", action="store_true",
                        help="attach a volume to the demo server, write to "
                             "it, resize the server to flavor 84 (confirm), "
                             "back (revert, then confirm), show every "
                             "ledger, then detach")
    parser.add_argument("--boot-from-volume", action="store_true",
                        help="instead of the attach, boot a server from a "
                             "volume made from the image, show every "
                             "ledger, then delete it (the volume kept)")
    parser.add_argument("--shelve", action="store_true",
                        help="instead of the attach, shelve a server with "
                             "a volume, attach another while offloaded, "
                             "unshelve, every ledger per phase")
    args = parser.parse_args(argv)
    cloud = (Cloud.noauth() if args.noauth
             else Cloud.from_clouds_yaml(args.cloud))
    if args.boot_from_volume:
        heading("The boot-from-volume journey")
        start = time.monotonic()
        journey_boot_from_volume.walk(
            cloud, lambda server_id: Ledgers.of_server(nova_db_url(),
                                                       server_id),
            show_ledgers, args.image, args.flavor, _tracing(args))
        _complete(start)
        return 0
    if args.shelve:
        heading("The shelve journey")
        start = time.monotonic()
        journey_shelve.walk(
            cloud, lambda server_id: Ledgers.of_server(nova_db_url(),
                                                       server_id),
            args.image, args.flavor)
        _complete(start)
        return 0
    name, creator = args.server or DEMO_SERVER, None
    if args.host:
        name = args.server or "%s-%s" % (DEMO_SERVER, args.host)
        # The admin picks the host (2.74) for a server of the demo project.
        creator = (Cloud.noauth(user="admin") if args.noauth else
                   Cloud.from_clouds_yaml("ministack-admin", project="demo"))
    server = ensure_server(cloud, args.image, args.flavor, name=name,
                           host=args.host, creator=creator)
    if args.ensure_server:
        say("server %s (%s) is ACTIVE" % (server["name"], server["id"]))
        return 0
    if args.live_migrate:
        heading("The live-migration journey on server %r" % server["name"])
        start = time.monotonic()
        admin = (Cloud.noauth(user="admin") if args.noauth else
                 Cloud.from_clouds_yaml("ministack-admin"))
        journey_live_migrate.walk(cloud, admin, server, _tracing(args))
        _complete(start)
        return 0
    if args.resize:
        heading("The resize journey on server %r" % server["name"])
        start = time.monotonic()
        admin = (Cloud.noauth(user="admin") if args.noauth else
                 Cloud.from_clouds_yaml("ministack-admin"))
        journey_resize.walk(cloud, admin, server)
        _complete(start)
        return 0
    ledgers = Ledgers.of_server(nova_db_url(), server["id"])
    heading("The attach journey on server %r" % server["name"])
    start = time.monotonic()
    walk(cloud, ledgers, server, _tracing(args), extend=args.extend)
    _complete(start)
    return 0


def _tracing(args):
    """The journey's tracing: off with ``--no-trace``, else as the lab's
    miniapi.conf says."""
    if args.no_trace:
        return journey_trace.Tracing(off="--no-trace")
    return journey_trace.Tracing.from_config()


def _complete(start):
    say()
    say("journey complete in %.1f s" % (time.monotonic() - start))


if __name__ == "__main__":
    sys.exit(main())
