"""The live migration of tools/journey.py (``--live-migrate``, on a lab of
two or more compute hosts): one instance, two hosts, two attachments.

With a volume attached to the demo server and a line written to it from
the guest, the admin asks ``openstack server migrate --live-migration
--host DEST demo`` (``os-migrateLive``), hop by hop:

1. nova-api: the server must be ACTIVE or PAUSED with no task; the
   migration record is ``accepted``, the task ``migrating``;
2. the destination checks it can take the guest, and asks the source
   (RPC CALLs ``check_can_live_migrate_destination`` and ``_source``);
3. the source casts itself ``live_migration``; the migration is
   ``queued``, then ``preparing``;
4. the destination's ``pre_live_migration`` (RPC CALL): for each volume
   a *second* attachment of the same instance, created with the
   destination's connector (Cinder exports the LUN to both hosts: tgt's
   ACL names both initiators), connected there and completed, and the
   BDM takes the new attachment;
5. the migration is ``running``: libvirt moves the guest peer to peer,
   its volume disks rewritten for the destination's connection;
6. the source disconnects and deletes the old attachment (the ACL keeps
   only the destination's initiator), the destination takes the
   instance; the migration is ``completed``.

Each ledger is printed before and after, and the attachments, the ACL
and the migration's status as they change, polled while it runs. Then
the server goes back the same way, so the lab is as it was, and the
volume is detached and deleted.
"""

import time

import sqlalchemy as sa

import journey_lab as lab
import journey_moves as moves
import journey_trace

VERSION = "2.80"   # migrations show their uuid, user and project


def _migration(admin, server_id):
    migrations = lab.check(admin.compute(
        "GET", "/os-migrations?instance_uuid=%s&migration_type=live-"
        "migration" % server_id, version=VERSION), 200)["migrations"]
    return migrations[0] if migrations else None


class LiveMigrationTimeline(moves.MoveTimeline):
    """The migration's status, the volume's attachments and tgt's ACL."""

    def snapshot(self):
        migration = _migration(self.admin, self.server_id)
        return (migration["status"] if migration else "-",
                self.volume_ledgers(lambda found: " ".join(
                    "%s/%s/%s" % att[:3] for att in found)))

    def line(self, now):
        return "migration %-10s %s" % now


def _server_host(admin, server_id):
    server = lab.check(admin.compute("GET", "/servers/%s" % server_id),
                       200)["server"]
    return server["OS-EXT-SRV-ATTR:host"], server


def move(cloud, admin, server_id, volume_id, dest, cinder_engine, tracing):
    """Live-migrate the server to ``dest``, watching the ledgers change.

    :returns: (the osprofiler trace id or None, the migration record)
    """
    ledgers = lab.Ledgers.of_server(lab.nova_db_url(), server_id)
    trace_id, headers = tracing.headers()
    lab.command("openstack --os-compute-api-version %s server migrate "
                "--live-migration --host %s --wait %s" % (VERSION, dest,
                                                          server_id))
    resp = admin.compute("POST", "/servers/%s/action" % server_id,
                         {"os-migrateLive": {"block_migration": "auto",
                                             "host": dest}},
                         version=VERSION, headers=headers)
    lab.check(resp, 202)
    lab.say("POST /servers/%s/action {os-migrateLive: {host: %s, "
            "block_migration: auto}} -> %s (request %s)" % (
                server_id[:8], dest, resp.status_code,
                resp.headers.get("x-openstack-request-id")))
    if trace_id:
        lab.say("   traced: osprofiler trace %s" % trace_id)

    def ended():
        migration = _migration(admin, server_id)
        host, server = _server_host(admin, server_id)
        if migration and migration["status"] in ("error", "failed",
                                                 "cancelled"):
            raise SystemExit("the live migration ended %s; server %s on "
                             "%s (openstack server event list %s)" % (
                                 migration["status"], server["status"],
                                 host, server_id))
        if migration and migration["status"] == "completed" and \
                server["OS-EXT-STS:task_state"] is None:
            return migration
        return None
    lab.say("   timeline as observed (migration status, the volume's "
            "attachments id/status/host, tgt's ACL):")
    with LiveMigrationTimeline(cloud, ledgers, server_id, volume_id, admin,
                      cinder_engine):
        migration = lab.wait("the live migration to complete", ended,
                             timeout=300)
    return trace_id, migration


def walk(cloud, admin, server, tracing):
    """Attach a volume to ``server``, write to it, live-migrate the server
    to another host and back, show every ledger, then detach."""
    server_id = server["id"]
    source, _ = _server_host(admin, server_id)
    others = [name for name in moves.compute_hosts() if name != source]
    if not others:
        raise SystemExit("--live-migrate needs a second compute host "
                         "(COMPUTE_HOSTS=2 ./lab.sh)")
    dest = others[0]
    cinder_engine = sa.create_engine(lab.cinder_db_url())
    ledgers = lab.Ledgers.of_server(lab.nova_db_url(), server_id)
    domain = ledgers.domain_name(server_id, lab.instance_name_template())
    ledgers.wait_for_guest(domain)
    lab.say("server %s (%s), libvirt domain %s, on compute host %s; "
            "destination %s" % (server["name"], server_id, domain, source,
                                dest))

    lab.heading("Attach a volume and write to it from the guest")
    name = "journey-lm-%s" % time.strftime("%H%M%S")
    marker = "ministack live migration %s" % name
    volume_id = moves.create_volume(cloud, name)
    try:
        dev = moves.attach_and_write(cloud, ledgers, server_id, domain,
                                     volume_id, marker)
        moves.show_ledgers(ledgers, cinder_engine, server_id,
                           volume_id, domain)

        lab.heading("Live migrate %s -> %s (admin, compute %s): the "
                    "destination's second attachment with its connector, "
                    "connected and completed before libvirt moves the "
                    "guest; then the source's attachment deleted"
                    % (source, dest, VERSION))
        trace_id, migration = move(cloud, admin, server_id, volume_id,
                                   dest, cinder_engine, tracing)
        lab.heading("Moved: every ledger names %s only" % dest)
        ledgers = lab.Ledgers.of_server(lab.nova_db_url(), server_id)
        moves.show_ledgers(ledgers, cinder_engine, server_id,
                           volume_id, domain)
        rc, out, err = ledgers.guest(domain, [
            "/bin/sh", "-c", "dd if=/dev/%s bs=512 count=1 2>/dev/null | "
            "tr -d '\\000'" % dev])
        lab.command("ministack-guest %s -- dd if=/dev/%s count=1" % (
            server_id, dev))
        lab.say("   read back on %s: %r" % (dest, out))
        if marker not in out:
            raise SystemExit("the guest on %s does not read what it wrote "
                             "on %s" % (dest, source))
        lab.command("openstack --os-compute-api-version %s server "
                    "migration list --server %s" % (VERSION, server_id))
        lab.say("   migration %s: %s, %s -> %s" % (
            migration["id"], migration["status"],
            migration["source_compute"], migration["dest_compute"]))
        tracing.show("live migration", trace_id, "live_migration")

        lab.heading("And back to %s, so the lab is as it was" % source)
        move(cloud, admin, server_id, volume_id, source, cinder_engine,
             journey_trace.Tracing(off="the way back is not traced"))
        lab.say("   server %s is on %s again" % (
            server_id[:8], _server_host(admin, server_id)[0]))
    finally:
        moves.detach_and_delete(cloud, server_id, volume_id)
        cinder_engine.dispose()
