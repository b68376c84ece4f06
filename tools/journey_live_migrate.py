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

import json
import time

import sqlalchemy as sa

import journey_lab as lab
import journey_trace

VERSION = "2.80"   # migrations show their uuid, user and project


def _hosts():
    from minicompute import hosts
    return hosts.compute_hosts()


def acl(volume_id):
    """The initiators tgt's ACL admits to the volume's target."""
    from minicinder.volume.targets import tgt
    for target in tgt.TgtAdm().show_targets():
        if target["iqn"].endswith(":volume-%s" % volume_id):
            return sorted(target["acls"])
    return []


def attachments(cinder_engine, volume_id):
    """Cinder's attachments of the volume, oldest first: ``(id[:8],
    status, host, initiator)``, the last two from the connector each
    was made or updated with (none: the attachment is parked)."""
    with cinder_engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT id, attach_status, connector FROM volume_attachment"
            " WHERE volume_id=:v AND deleted=0 ORDER BY created_at"),
            {"v": volume_id}).all()
    out = []
    for row in rows:
        connector = json.loads(row[2]) if row[2] else {}
        out.append((row[0][:8], row[1], connector.get("host") or "-",
                    connector.get("initiator")))
    return out


def acl_hosts(cinder_engine, volume_id):
    """tgt's ACL of the volume, each initiator named by the host whose
    attachment's connector carries it."""
    who = {att[3]: att[2] for att in attachments(cinder_engine, volume_id)}
    return ["%s (%s)" % (who.get(i, "no attachment"), i)
            for i in acl(volume_id)]


def domains(domain):
    """The hosts whose libvirtd holds the domain, with its state."""
    from ministack import executor
    found = []
    for name, host in _hosts().items():
        out, _ = executor.execute("virsh", "-c", host.libvirt_uri,
                                  "domstate", domain,
                                  check_exit_code=[0, 1])
        if out.strip():
            found.append("%s (%s)" % (name, out.strip()))
    return found


def _migration(admin, server_id):
    migrations = lab.check(admin.compute(
        "GET", "/os-migrations?instance_uuid=%s&migration_type=live-"
        "migration" % server_id, version=VERSION), 200)["migrations"]
    return migrations[0] if migrations else None


class MoveTimeline(lab.Timeline):
    """The migration's status, the volume's attachments and tgt's ACL,
    each change printed as it happens."""

    def __init__(self, cloud, ledgers, server_id, volume_id, admin,
                 cinder_engine):
        super().__init__(cloud, ledgers, server_id, volume_id)
        self.admin, self.cinder_engine = admin, cinder_engine

    def snapshot(self):
        migration = _migration(self.admin, self.server_id)
        found = attachments(self.cinder_engine, self.volume_id)
        who = {att[3]: att[2] for att in found}
        return (migration["status"] if migration else "-",
                "attachments %s; ACL %s" % (
                    " ".join("%s/%s/%s" % att[:3] for att in found)
                    or "none",
                    ", ".join(who.get(i, i) for i in acl(self.volume_id))
                    or "none"))

    def _run(self):
        last = None
        while True:
            # One last look after the stop, so the state the wait saw
            # ends the timeline.
            stopping = self.stop.is_set()
            now = self.snapshot()
            if now != last:
                lab.say("   +%5.2fs  migration %-10s %s" % (
                    time.monotonic() - self.start, now[0], now[1]))
                last = now
            if stopping:
                return
            time.sleep(lab.POLL)


def show_ledgers(ledgers, cinder_engine, server_id, volume_id, domain):
    lab.command("openstack --os-volume-api-version 3.44 volume attachment "
                "list --volume-id %s" % volume_id)
    for att in attachments(cinder_engine, volume_id) or [("none",) * 4]:
        lab.say("   cinder attachment:  %s status=%s host=%s" % att[:3])
    lab.command("tgtadm --lld iscsi --op show --mode target")
    lab.say("   tgt ACL:            %s" % (
        ", ".join(acl_hosts(cinder_engine, volume_id)) or "none"))
    lab.say("   nova BDM:           %s" % lab.describe_bdm(
        ledgers.bdm(server_id, volume_id)))
    lab.command("virsh -c <each host's libvirtd> domstate %s" % domain)
    lab.say("   libvirt domain on:  %s" % (", ".join(domains(domain))
                                           or "no host"))


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
    with MoveTimeline(cloud, ledgers, server_id, volume_id, admin,
                      cinder_engine):
        migration = lab.wait("the live migration to complete", ended,
                             timeout=300)
    return trace_id, migration


def walk(cloud, admin, server, tracing):
    """Attach a volume to ``server``, write to it, live-migrate the server
    to another host and back, show every ledger, then detach."""
    server_id = server["id"]
    source, _ = _server_host(admin, server_id)
    others = [name for name in _hosts() if name != source]
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
    volume_id = lab.check(cloud.volume("POST", "/volumes", {"volume": {
        "size": 1, "name": name}}), 202)["volume"]["id"]
    lab.command("openstack volume create --size 1 %s" % name)
    try:
        lab.wait("volume available", lambda: lab.check(cloud.volume(
            "GET", "/volumes/%s" % volume_id), 200)["volume"]["status"]
            == "available")
        lab.command("openstack server add volume %s %s" % (server_id,
                                                          volume_id))
        lab.check(cloud.compute("POST", "/servers/%s/os-volume_attachments"
                                % server_id, {"volumeAttachment": {
                                    "volumeId": volume_id}}), 200)
        lab.wait("volume in-use", lambda: lab.check(cloud.volume(
            "GET", "/volumes/%s" % volume_id), 200)["volume"]["status"]
            == "in-use")
        dev = ledgers.bdm(server_id, volume_id)["device_name"].rpartition(
            "/")[2]
        marker = "ministack live migration %s" % name
        lab.command("ministack-guest %s -- dd of=/dev/%s" % (server_id,
                                                            dev))
        rc, out, err = ledgers.guest(domain, [
            "/bin/sh", "-c", "printf '%s' | dd of=/dev/%s bs=512 "
            "conv=fsync,sync 2>&1" % (marker, dev)])
        if rc != 0:
            raise SystemExit("writing to /dev/%s in the guest: %s" % (
                dev, err or out))
        lab.say("   wrote %r to /dev/%s" % (marker, dev))
        show_ledgers(ledgers, cinder_engine, server_id, volume_id, domain)

        lab.heading("Live migrate %s -> %s (admin, compute %s): the "
                    "destination's second attachment with its connector, "
                    "connected and completed before libvirt moves the "
                    "guest; then the source's attachment deleted"
                    % (source, dest, VERSION))
        trace_id, migration = move(cloud, admin, server_id, volume_id,
                                   dest, cinder_engine, tracing)
        lab.heading("Moved: every ledger names %s only" % dest)
        ledgers = lab.Ledgers.of_server(lab.nova_db_url(), server_id)
        show_ledgers(ledgers, cinder_engine, server_id, volume_id, domain)
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
        lab.heading("Clean up: detach and delete the volume")
        resp = cloud.compute("DELETE", "/servers/%s/os-volume_attachments/%s"
                             % (server_id, volume_id))
        if resp.status_code == 202:
            lab.wait("volume available", lambda: lab.check(cloud.volume(
                "GET", "/volumes/%s" % volume_id), 200)["volume"]["status"]
                == "available")
        lab.check(cloud.volume("DELETE", "/volumes/%s" % volume_id),
                  202, 400, 404)
        lab.wait("volume deleted", lambda: cloud.volume(
            "GET", "/volumes/%s" % volume_id).status_code == 404)
        lab.say("   volume %s is gone" % volume_id)
        cinder_engine.dispose()
