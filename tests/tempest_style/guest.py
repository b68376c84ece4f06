"""Looking inside a guest: which disks its kernel sees, and their data.

Tempest logs into the guest over SSH; ministack's guests have no network,
so the suite asks the QEMU guest agent instead, through ``virsh
qemu-agent-command`` on ``[validation] libvirt_uri``. That needs access to
the hypervisor's libvirt, which a real cloud usually does not give: there
``[validation] guest_agent = false`` makes the guest checks skip.

``virsh`` runs as a plain subprocess (not through ministack's executor)
because the suite must not depend on ministack's code.

The server's libvirt domain is named by the admin-only field
``OS-EXT-SRV-ATTR:instance_name`` (or, without it, ``instance-%08x`` of
the row id read from ``[validation] nova_db_url``). A domain of that name
is only trusted when its UUID is the server's: several nova databases may
share one libvirtd (parallel test stacks), and Nova always gives the
domain the instance's UUID, so the UUID is the fallback too.
"""

import base64
import json
import subprocess

from tests.tempest_style import waiters


class GuestError(AssertionError):
    pass


class Virsh:
    def __init__(self, uri):
        self.uri = uri

    def run(self, *args, check=True, timeout=60):
        proc = subprocess.run(["virsh", "-c", self.uri, *args],
                              capture_output=True, text=True,
                              timeout=timeout)
        if check and proc.returncode != 0:
            raise GuestError("virsh %s failed (%s): %s" % (
                " ".join(args[:2]), proc.returncode, proc.stderr.strip()))
        return proc.returncode, proc.stdout, proc.stderr

    def domuuid(self, domain):
        rc, out, _ = self.run("domuuid", domain, check=False)
        return out.strip() if rc == 0 else None

    def domname(self, uuid):
        rc, out, _ = self.run("domname", uuid, check=False)
        return out.strip() if rc == 0 else None

    def agent(self, domain, command, arguments=None, timeout=10):
        """One guest-agent command; returns its ``return`` value."""
        payload = {"execute": command}
        if arguments is not None:
            payload["arguments"] = arguments
        _, out, _ = self.run("qemu-agent-command", "--timeout",
                             str(timeout), domain, json.dumps(payload),
                             timeout=timeout + 30)
        return json.loads(out)["return"]


def _nova_db_name(db_url, server_id):
    import sqlalchemy as sa
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT id FROM instances WHERE uuid = :u"),
                {"u": server_id}).first()
    finally:
        engine.dispose()
    return "instance-%08x" % row[0] if row else None


class Guest:
    """The guest of one server, reached through its agent."""

    def __init__(self, conf, admin_compute, server_id):
        self.virsh = Virsh(conf.libvirt_uri)
        self.server_id = server_id
        self.timeout = conf.agent_timeout
        self.domain = self._find_domain(conf, admin_compute)

    def _find_domain(self, conf, admin_compute):
        server = admin_compute.show_server(self.server_id)["server"]
        names = [server.get("OS-EXT-SRV-ATTR:instance_name")]
        if not names[0] and conf.nova_db_url:
            names.append(_nova_db_name(conf.nova_db_url, self.server_id))
        for name in filter(None, names):
            if self.virsh.domuuid(name) == self.server_id:
                return name
        by_uuid = self.virsh.domname(self.server_id)
        if by_uuid:
            return by_uuid
        raise GuestError("no libvirt domain for server %s on %s (tried %s "
                         "and the server's UUID)" % (
                             self.server_id, conf.libvirt_uri, names))

    def wait_for_agent(self):
        """Wait until the guest agent answers (after a boot or a start)."""
        try:
            waiters.wait_for(
                "the guest agent of %s to answer" % self.domain,
                lambda: self.virsh.agent(self.domain, "guest-ping",
                                         timeout=5) or True,
                timeout=self.timeout, interval=1, ignoring=GuestError)
        except waiters.WaitTimeout as exc:
            raise GuestError("the guest agent of %s did not answer in %ss: "
                             "%s" % (self.domain, self.timeout, exc.error))

    def execute(self, script, stdin=None):
        """Run ``/bin/sh -c script`` in the guest; returns stdout bytes."""
        args = {"path": "/bin/sh", "arg": ["-c", script],
                "capture-output": True}
        if stdin is not None:
            args["input-data"] = base64.b64encode(stdin).decode()
        pid = self.virsh.agent(self.domain, "guest-exec", args)["pid"]
        try:
            status = waiters.wait_for(
                "%r to end in %s" % (script, self.domain),
                lambda: self.virsh.agent(self.domain, "guest-exec-status",
                                         {"pid": pid}),
                lambda status: status.get("exited"), timeout=self.timeout,
                interval=0.2)
        except waiters.WaitTimeout:
            raise GuestError("%r still running in %s after %ss" % (
                script, self.domain, self.timeout))
        out = base64.b64decode(status.get("out-data", ""))
        if status.get("exitcode") != 0:
            raise GuestError("%r in %s exited %s: %s" % (
                script, self.domain, status.get("exitcode"),
                base64.b64decode(status.get("err-data", "")).decode(
                    errors="replace")))
        return out

    def disks(self):
        """``{vdX: serial}`` of the virtio disks the guest kernel sees."""
        out = self.execute("for d in /sys/block/vd*; do [ -e $d ] && "
                           "echo ${d##*/} $(cat $d/serial 2>/dev/null); "
                           "done; true").decode()
        found = {}
        for line in out.splitlines():
            parts = line.split()
            if parts:
                found[parts[0]] = parts[1] if len(parts) > 1 else ""
        return found

    def wait_for_disk_count(self, count, timeout=60):
        """Hot-plug and unplug reach the guest kernel a little after the
        API says so: poll the disk list until it has ``count`` disks."""
        return waiters.wait_for(
            "guest %s to see %d disks" % (self.domain, count), self.disks,
            lambda disks: len(disks) == count, timeout=timeout, interval=1)

    def device_for(self, volume_id, timeout=60):
        """The guest's vdX whose serial is (a prefix of) the volume id.

        virtio-blk serials hold 20 characters, so the guest sees the
        volume id truncated.
        """
        def find():
            for dev, serial in self.disks().items():
                if serial and volume_id.startswith(serial):
                    return dev
            return None
        return waiters.wait_for(
            "a disk with serial %s in guest %s" % (volume_id[:20],
                                                   self.domain),
            find, lambda dev: dev is not None, timeout=timeout, interval=1)

    def write(self, dev, data):
        self.execute("cat > /tmp/tempest-in && dd if=/tmp/tempest-in "
                     "of=/dev/%s bs=512 conv=fsync 2>/dev/null" % dev,
                     stdin=data)

    def read(self, dev, size):
        """``size`` bytes from the start of /dev/dev, bypassing the cache
        (the other server wrote them)."""
        return self.execute(
            "dd if=/dev/%s bs=512 count=%d iflag=direct 2>/dev/null"
            % (dev, (size + 511) // 512))[:size]
