"""What the journeys that move a server (``--live-migrate``,
``--resize``) read and do beside the move: the volume's attachments with
the host of each one's connector, tgt's ACL, the domain on each host;
a volume attached to the server and written from its guest before the
move, and detached and deleted after it.
"""

import json
import time

import sqlalchemy as sa

import journey_lab as lab


def compute_hosts():
    """{name: ComputeHost} of the lab's compute hosts, the first first."""
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
    for name, host in compute_hosts().items():
        out, _ = executor.execute("virsh", "-c", host.libvirt_uri,
                                  "domstate", domain,
                                  check_exit_code=[0, 1])
        if out.strip():
            found.append("%s (%s)" % (name, out.strip()))
    return found


def show_ledgers(ledgers, cinder_engine, server_id, volume_id, domain):
    """The volume's attachments (and each one's host), tgt's ACL, the
    BDM and the hosts whose libvirtd holds the domain."""
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


def create_volume(cloud, name):
    """A new 1 GiB volume ``name`` (its id); see :func:`attach_and_write`."""
    lab.command("openstack volume create --size 1 %s" % name)
    return lab.check(cloud.volume("POST", "/volumes", {"volume": {
        "size": 1, "name": name}}), 202)["volume"]["id"]


def _status_is(cloud, volume_id, status):
    return lab.check(cloud.volume("GET", "/volumes/%s" % volume_id),
                     200)["volume"]["status"] == status


def attach_and_write(cloud, ledgers, server_id, domain, volume_id, marker):
    """Attach the volume to the server once it is available and write
    ``marker`` to its first block from the guest.

    :returns: the guest's device name of the volume (``vdb``...).
    """
    lab.wait("volume available",
             lambda: _status_is(cloud, volume_id, "available"))
    lab.command("openstack server add volume %s %s" % (server_id,
                                                      volume_id))
    lab.check(cloud.compute("POST", "/servers/%s/os-volume_attachments"
                            % server_id, {"volumeAttachment": {
                                "volumeId": volume_id}}), 200)
    lab.wait("volume in-use", lambda: _status_is(cloud, volume_id,
                                                 "in-use"))
    dev = ledgers.bdm(server_id, volume_id)["device_name"].rpartition(
        "/")[2]
    lab.command("ministack-guest %s -- dd of=/dev/%s" % (server_id, dev))
    rc, out, err = ledgers.guest(domain, [
        "/bin/sh", "-c", "printf '%s' | dd of=/dev/%s bs=512 "
        "conv=fsync,sync 2>&1" % (marker, dev)])
    if rc != 0:
        raise SystemExit("writing to /dev/%s in the guest: %s" % (
            dev, err or out))
    lab.say("   wrote %r to /dev/%s" % (marker, dev))
    return dev


def detach_and_delete(cloud, server_id, volume_id):
    """The journey's clean-up, also after a failure: the volume detached
    (if it is attached) and deleted."""
    lab.heading("Clean up: detach and delete the volume")
    resp = cloud.compute("DELETE", "/servers/%s/os-volume_attachments/%s"
                         % (server_id, volume_id))
    if resp.status_code == 202:
        lab.wait("volume available",
                 lambda: _status_is(cloud, volume_id, "available"))
    lab.check(cloud.volume("DELETE", "/volumes/%s" % volume_id),
              202, 400, 404)
    lab.wait("volume deleted", lambda: cloud.volume(
        "GET", "/volumes/%s" % volume_id).status_code == 404)
    lab.say("   volume %s is gone" % volume_id)


class MoveTimeline(lab.Timeline):
    """A move's ledgers polled while it runs, each change printed as it
    happens (``line`` formats one look); after the stop one last look,
    so the state the wait saw ends the timeline."""

    def __init__(self, cloud, ledgers, server_id, volume_id, admin,
                 cinder_engine):
        super().__init__(cloud, ledgers, server_id, volume_id)
        self.admin, self.cinder_engine = admin, cinder_engine

    def volume_ledgers(self, describe):
        """``attachments ...; ACL ...``: the volume's attachments as
        ``describe`` shows them, the ACL by host."""
        found = attachments(self.cinder_engine, self.volume_id)
        who = {att[3]: att[2] for att in found}
        return "attachments %s; ACL %s" % (
            describe(found) or "none",
            ", ".join(who.get(i, i) for i in acl(self.volume_id)) or "none")

    def line(self, now):
        raise NotImplementedError

    def _run(self):
        last = None
        while True:
            stopping = self.stop.is_set()
            now = self.snapshot()
            if now != last:
                lab.say("   +%5.2fs  %s" % (time.monotonic() - self.start,
                                            self.line(now)))
                last = now
            if stopping:
                return
            time.sleep(lab.POLL)
