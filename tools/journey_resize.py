"""The resize of tools/journey.py (``--resize``): one server, its volume
parked between two hosts, confirmed once and reverted once.

With a volume attached to the demo server and a line written to it from
the guest, the user asks ``openstack server resize --flavor 84 demo``
(``resize``), hop by hop:

1. nova-api: the server ACTIVE or SHUTOFF with no task, the flavor
   checked; a destination scheduled, the migration ``pre-migrating``,
   task ``resize_prep``, ``prep_resize`` cast to the destination;
2. the destination records itself and casts ``resize_instance`` to the
   source: ``migrating``, the guest powered off, its disk kept aside;
3. the source parks each volume: a new attachment with no connector
   (``reserved``), the old one deleted, so tgt exports it nowhere;
   ``post-migrating``, the server's host is the destination;
4. the destination's ``finish_resize``: the parked attachment updated
   with its connector (tgt's ACL names it), the guest started with the
   new flavor's memory, the attachment completed; ``finished``, the
   server ``VERIFY_RESIZE``.

Then ``confirmResize`` (the source's kept disk removed, no Cinder call).
The server is resized back to its original flavor and that resize is
reverted (``revertResize``: the destination's guest destroyed, the
volume parked again, the source's guest started with the old flavor,
the attachment updated with the source's connector), so the revert's
ledgers show; a last resize to the original flavor, confirmed, leaves
the lab as it was. Then the volume is detached and deleted.
"""

import time

import sqlalchemy as sa

import journey_lab as lab
import journey_moves as moves

VERSION = "2.80"   # migrations show their uuid, user and project
NEW_FLAVOR = "84"


def _migration(admin, server_id):
    """The server's newest resize migration (the highest id)."""
    migrations = lab.check(admin.compute(
        "GET", "/os-migrations?instance_uuid=%s&migration_type=resize"
        % server_id, version=VERSION), 200)["migrations"]
    return max(migrations, key=lambda m: m["id"]) if migrations else None


def _server(admin, server_id):
    return lab.check(admin.compute("GET", "/servers/%s" % server_id),
                     200)["server"]


def describe_attachments(found):
    """``id/status/host/conn=yes|no`` for each attachment: a parked one
    is ``reserved`` with no host and no connector."""
    return " ".join("%s/%s/%s/conn=%s" % (att[0], att[1], att[2],
                                          "yes" if att[3] else "no")
                    for att in found) or "none"


class ResizeTimeline(moves.MoveTimeline):
    """The server's status and task, the migration's status, the volume's
    attachments (with or without a connector) and tgt's ACL."""

    def snapshot(self):
        server = _server(self.admin, self.server_id)
        migration = _migration(self.admin, self.server_id)
        return ("%s/%s" % (server["status"],
                           server["OS-EXT-STS:task_state"] or "-"),
                migration["status"] if migration else "-",
                self.volume_ledgers(describe_attachments))

    def line(self, now):
        return "server %-25s migration %-14s %s" % now


def _watch(cloud, admin, server_id, volume_id, cinder_engine, what,
           done):
    """Watch the ledgers until ``done(server, migration)``; a migration
    in error or a server in ERROR ends the journey."""
    ledgers = lab.Ledgers.of_server(lab.nova_db_url(), server_id)

    def ended():
        migration = _migration(admin, server_id)
        server = _server(admin, server_id)
        if (migration and migration["status"] in ("error", "failed")) or \
                server["status"] == "ERROR":
            raise SystemExit("the %s ended with the migration %s and the "
                             "server %s (openstack server event list %s)"
                             % (what, migration and migration["status"],
                                server["status"], server_id))
        return done(server, migration)
    lab.say("   timeline as observed (server status/task, migration "
            "status, the volume's attachments id/status/host/connector, "
            "tgt's ACL):")
    with ResizeTimeline(cloud, ledgers, server_id, volume_id, admin,
                        cinder_engine):
        lab.wait(what, ended, timeout=300)


def _action(cloud, server_id, body, shown):
    lab.command(shown)
    resp = cloud.compute("POST", "/servers/%s/action" % server_id, body,
                         version=VERSION)
    lab.check(resp, 202, 204)   # confirmResize answers 204
    lab.say("POST /servers/%s/action %s -> %s (request %s)" % (
        server_id[:8], list(body)[0], resp.status_code,
        resp.headers.get("x-openstack-request-id")))


def resize(cloud, admin, server_id, volume_id, flavor_id, cinder_engine):
    """Resize to ``flavor_id`` and watch it until VERIFY_RESIZE."""
    _action(cloud, server_id, {"resize": {"flavorRef": flavor_id}},
            "openstack server resize --flavor %s %s" % (flavor_id,
                                                        server_id))
    _watch(cloud, admin, server_id, volume_id, cinder_engine,
           "the resize to finish",
           lambda server, migration: server["status"] == "VERIFY_RESIZE"
           and migration and migration["status"] == "finished"
           and server["OS-EXT-STS:task_state"] is None)


def confirm(cloud, admin, server_id, volume_id, cinder_engine):
    _action(cloud, server_id, {"confirmResize": None},
            "openstack server resize confirm %s" % server_id)
    _watch(cloud, admin, server_id, volume_id, cinder_engine,
           "the confirm",
           lambda server, migration: server["status"] == "ACTIVE"
           and migration["status"] == "confirmed"
           and server["OS-EXT-STS:task_state"] is None)


def revert(cloud, admin, server_id, volume_id, cinder_engine):
    _action(cloud, server_id, {"revertResize": None},
            "openstack server resize revert %s" % server_id)
    _watch(cloud, admin, server_id, volume_id, cinder_engine,
           "the revert",
           lambda server, migration: server["status"] == "ACTIVE"
           and migration["status"] == "reverted"
           and server["OS-EXT-STS:task_state"] is None)


def show_ledgers(admin, cinder_engine, server_id, volume_id, domain, dev,
                 marker):
    """Every ledger of the server and its volume, the guest's memory and
    the data read back from the guest."""
    server = _server(admin, server_id)
    ledgers = lab.Ledgers.of_server(lab.nova_db_url(), server_id)
    lab.command("openstack server show %s" % server_id)
    lab.say("   server:             %s, flavor %s, host %s" % (
        server["status"], server["flavor"].get("original_name"),
        server["OS-EXT-SRV-ATTR:host"]))
    moves.show_ledgers(ledgers, cinder_engine, server_id, volume_id, domain)
    ledgers.wait_for_guest(domain)
    lab.command("ministack-guest %s -- grep MemTotal /proc/meminfo"
                % server_id)
    rc, out, err = ledgers.guest(domain, ["/bin/grep", "MemTotal",
                                          "/proc/meminfo"])
    lab.say("   guest memory:       %s" % (" ".join(out.split()) if rc == 0
                                           else "unknown (%s)" % err))
    lab.command("ministack-guest %s -- dd if=/dev/%s count=1" % (
        server_id, dev))
    rc, out, err = ledgers.guest(domain, [
        "/bin/sh", "-c", "dd if=/dev/%s bs=512 count=1 2>/dev/null | "
        "tr -d '\\000'" % dev])
    lab.say("   read back on %s: %r" % (ledgers.host, out))
    if marker not in out:
        raise SystemExit("the guest on %s does not read what it wrote"
                         % ledgers.host)
    return server


def _flavor_id(cloud, name):
    """The id of the flavor the server was booted with (2.47 shows its
    name, not its id)."""
    for flavor in lab.check(cloud.compute("GET", "/flavors/detail"),
                            200)["flavors"]:
        if flavor["name"] == name:
            return flavor["id"]
    raise SystemExit("the server's flavor %r is not in the flavor list"
                     % name)


def walk(cloud, admin, server):
    """Attach a volume to ``server``, write to it, resize it (confirmed),
    resize it back (reverted, then confirmed), show every ledger, then
    detach."""
    server_id = server["id"]
    source = _server(admin, server_id)["OS-EXT-SRV-ATTR:host"]
    original = _flavor_id(cloud, server["flavor"]["original_name"])
    resp = cloud.compute("GET", "/flavors/%s" % NEW_FLAVOR)
    if resp.status_code != 200:
        raise SystemExit("--resize needs flavor %s (openstack flavor list)"
                         % NEW_FLAVOR)
    new = resp.json()["flavor"]
    if new["id"] == original:
        raise SystemExit("the server already has flavor %s" % NEW_FLAVOR)
    cinder_engine = sa.create_engine(lab.cinder_db_url())
    ledgers = lab.Ledgers.of_server(lab.nova_db_url(), server_id)
    domain = ledgers.domain_name(server_id, lab.instance_name_template())
    ledgers.wait_for_guest(domain)
    lab.say("server %s (%s), libvirt domain %s, on compute host %s, "
            "flavor %s; new flavor %s (%s MiB, %s vCPU)" % (
                server["name"], server_id, domain, source, original,
                new["id"], new["ram"], new["vcpus"]))

    lab.heading("Attach a volume and write to it from the guest")
    name = "journey-rs-%s" % time.strftime("%H%M%S")
    marker = "ministack resize %s" % name
    volume_id = moves.create_volume(cloud, name)
    try:
        dev = moves.attach_and_write(cloud, ledgers, server_id, domain,
                                     volume_id, marker)
        show_ledgers(admin, cinder_engine, server_id, volume_id, domain,
                     dev, marker)

        lab.heading("Resize to flavor %s: the volume parked (reserved, no "
                    "connector, exported nowhere), then updated with the "
                    "destination's connector and completed" % new["id"])
        resize(cloud, admin, server_id, volume_id, new["id"],
               cinder_engine)
        lab.heading("VERIFY_RESIZE: one attachment, on the destination")
        show_ledgers(admin, cinder_engine, server_id, volume_id, domain,
                     dev, marker)
        migration = _migration(admin, server_id)
        lab.command("openstack --os-compute-api-version %s server "
                    "migration list --server %s" % (VERSION, server_id))
        lab.say("   migration %s: %s, %s -> %s" % (
            migration["id"], migration["status"],
            migration["source_compute"], migration["dest_compute"]))

        lab.heading("Confirm the resize: the source's kept disk removed, "
                    "no Cinder call")
        confirm(cloud, admin, server_id, volume_id, cinder_engine)
        show_ledgers(admin, cinder_engine, server_id, volume_id, domain,
                     dev, marker)

        lab.heading("Resize back to flavor %s" % original)
        resize(cloud, admin, server_id, volume_id, original, cinder_engine)
        lab.heading("Revert that resize: the volume parked again, then "
                    "updated with the source's connector")
        revert(cloud, admin, server_id, volume_id, cinder_engine)
        lab.heading("Reverted: the server on flavor %s again" % new["id"])
        show_ledgers(admin, cinder_engine, server_id, volume_id, domain,
                     dev, marker)

        lab.heading("Resize to flavor %s and confirm, so the lab is as it "
                    "was" % original)
        resize(cloud, admin, server_id, volume_id, original, cinder_engine)
        confirm(cloud, admin, server_id, volume_id, cinder_engine)
        final = show_ledgers(admin, cinder_engine, server_id, volume_id,
                             domain, dev, marker)
        lab.say("   server %s has flavor %s again" % (
            server_id[:8], final["flavor"].get("original_name")))
    finally:
        moves.detach_and_delete(cloud, server_id, volume_id)
        cinder_engine.dispose()
