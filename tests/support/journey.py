"""Helpers of the attach/detach journey tests: REST clients and probes.

Nothing here is a fake. ``Cinder`` speaks raw HTTP to the real minicinder
daemon, ``Nova`` speaks raw HTTP to the real miniapi daemon, and ``Probe``
looks at the results the way an operator would: the nova database
(``block_device_mapping``), ``virsh domblklist`` and, inside the guest,
the QEMU guest agent.
"""

import json
import uuid

import pytest
import requests
import sqlalchemy as sa

from ministack import executor
from tests.support import waiting

PROJECT = "journey"
HEADERS = {"X-Auth-Token": "admin:%s" % PROJECT, "X-Roles": "admin",
           "Content-Type": "application/json"}


def vg_free_gib(vg):
    out, _ = executor.execute("vgs", "--noheadings", "--units", "g",
                              "--nosuffix", "-o", "vg_free", vg)
    return float(out.strip())


def wait_for_vg_space(vg, gib, timeout=180):
    """Wait until the shared VG has ``gib`` free (other engineers' test
    runs use it too); skip, saying so, if it never does."""
    try:
        waiting.wait_for("%s GiB free in %s" % (gib, vg),
                         lambda: vg_free_gib(vg) >= gib, timeout=timeout,
                         interval=2)
    except waiting.WaitTimeout:
        pytest.skip("the shared VG %s has had less than %s GiB free for "
                    "%ss (%.1f GiB now)" % (vg, gib, timeout, vg_free_gib(vg)))


class Cinder:
    """Raw REST client of minicinder (volumes, types, attachments)."""

    def __init__(self, url, project=PROJECT):
        self.base = "%s/v3/%s" % (url, project)
        self.headers = dict(HEADERS,
                            **{"OpenStack-API-Version": "volume 3.44"})

    def _req(self, method, path, headers=None, **kwargs):
        resp = requests.request(method, self.base + path,
                                headers=headers or self.headers, timeout=60,
                                **kwargs)
        return resp

    def create_type(self, name, multiattach=False):
        resp = self._req("POST", "/types", json={"volume_type": {
            "name": name, "extra_specs": (
                {"multiattach": "<is> True"} if multiattach else {})}})
        assert resp.status_code == 200, resp.text
        return resp.json()["volume_type"]["id"]

    def delete_type(self, type_id):
        self._req("DELETE", "/types/%s" % type_id)

    def create_volume(self, name, size=1, volume_type=None):
        body = {"size": size, "name": name}
        if volume_type:
            body["volume_type"] = volume_type
        resp = self._req("POST", "/volumes", json={"volume": body})
        assert resp.status_code == 202, resp.text
        vid = resp.json()["volume"]["id"]
        self.wait_status(vid, "available")
        return vid

    def show(self, volume_id):
        resp = self._req("GET", "/volumes/%s" % volume_id)
        if resp.status_code == 404:
            return None
        assert resp.status_code == 200, resp.text
        return resp.json()["volume"]

    def status(self, volume_id):
        vol = self.show(volume_id)
        return vol["status"] if vol else "deleted"

    def wait_status(self, volume_id, wanted, timeout=90):
        def probe():
            status = self.status(volume_id)
            if status.startswith("error") and not wanted.startswith("error"):
                raise AssertionError("volume %s went %s" % (volume_id,
                                                           status))
            return status == wanted
        return waiting.wait_for("volume %s %s" % (volume_id, wanted), probe,
                                timeout=timeout)

    def attachments(self, volume_id):
        resp = self._req("GET", "/attachments?volume_id=%s&all_tenants=1"
                         % volume_id)
        assert resp.status_code == 200, resp.text
        return resp.json()["attachments"]

    def force_cleanup(self, volume_id):
        """Delete every attachment of the volume, then the volume."""
        if self.show(volume_id) is None:
            return
        for att in self.attachments(volume_id):
            # As the service: Cinder refuses users tearing down an
            # attachment Nova still uses (409, OSSA-2023-003).
            self._req("DELETE", "/attachments/%s" % att["id"],
                      headers=dict(self.headers,
                                   **{"X-Service-Token": "cleanup"}))
        self._req("DELETE", "/volumes/%s" % volume_id)
        try:
            waiting.wait_for("volume %s deleted" % volume_id,
                             lambda: self.show(volume_id) is None, timeout=60)
        except waiting.WaitTimeout:
            pass


class Nova:
    """Raw REST client of miniapi (servers, volume attachments, events)."""

    def __init__(self, url, version="2.79"):
        self.base = url + "/v2.1"
        self.headers = dict(HEADERS, **{
            "OpenStack-API-Version": "compute %s" % version,
            "X-OpenStack-Nova-API-Version": version})

    def req(self, method, path, **kwargs):
        return requests.request(method, self.base + path,
                                headers=self.headers, timeout=120, **kwargs)

    def create_server(self, name, image_ref, flavor_ref):
        resp = self.req("POST", "/servers", json={"server": {
            "name": name, "imageRef": image_ref, "flavorRef": flavor_ref,
            "networks": "none"}})
        assert resp.status_code == 202, resp.text
        sid = resp.json()["server"]["id"]
        self.wait_server(sid, "ACTIVE")
        return sid

    def show_server(self, server_id):
        resp = self.req("GET", "/servers/%s" % server_id)
        if resp.status_code == 404:
            return None
        assert resp.status_code == 200, resp.text
        return resp.json()["server"]

    def wait_server(self, server_id, status, timeout=180):
        def probe():
            server = self.show_server(server_id)
            got = server["status"] if server else "DELETED"
            if got == "ERROR" and status != "ERROR":
                raise AssertionError("server %s went ERROR: %s" % (
                    server_id, server.get("fault")))
            return got == status
        return waiting.wait_for("server %s %s" % (server_id, status), probe,
                                timeout=timeout)

    def delete_server(self, server_id):
        resp = self.req("DELETE", "/servers/%s" % server_id)
        assert resp.status_code in (204, 404), resp.text

    def attach(self, server_id, volume_id, device=None, **extra):
        body = {"volumeId": volume_id}
        if device:
            body["device"] = device
        body.update(extra)
        return self.req("POST", "/servers/%s/os-volume_attachments"
                        % server_id, json={"volumeAttachment": body})

    def detach(self, server_id, volume_id):
        return self.req("DELETE", "/servers/%s/os-volume_attachments/%s"
                        % (server_id, volume_id))

    def attachments(self, server_id):
        resp = self.req("GET", "/servers/%s/os-volume_attachments"
                        % server_id)
        assert resp.status_code == 200, resp.text
        return resp.json()["volumeAttachments"]

    def actions(self, server_id):
        resp = self.req("GET", "/servers/%s/os-instance-actions" % server_id)
        assert resp.status_code == 200, resp.text
        return resp.json()["instanceActions"]

    def action(self, server_id, request_id):
        resp = self.req("GET", "/servers/%s/os-instance-actions/%s"
                        % (server_id, request_id))
        assert resp.status_code == 200, resp.text
        return resp.json()["instanceAction"]

    def finished_action(self, server_id, action, timeout=30):
        """The newest ``action`` of the server once its events have ended.

        A compute event ends just after the flow's last write to the
        ledgers (volume status, BDM), so a test that saw that write must
        still wait for the event's result.
        """
        def ended():
            latest = next((a for a in self.actions(server_id)
                           if a["action"] == action), None)
            if latest is None:
                return None
            detail = self.action(server_id, latest["request_id"])
            events = detail.get("events") or []
            if events and all(e["result"] for e in events):
                return detail
            return None
        return waiting.wait_for("%s events of %s ended" % (action, server_id),
                                ended, timeout=timeout)


class Probe:
    """What an operator would look at: nova DB, virsh, the guest."""

    def __init__(self, nova_db_url, name_template="instance-%08x",
                 libvirt_uri="qemu:///system"):
        # pre-ping: a database server restarted under a test (the
        # database-restart fault) leaves dead pooled connections
        self.engine = sa.create_engine(nova_db_url, pool_pre_ping=True)
        self.name_template = name_template
        self.uri = libvirt_uri
        self._conn = None

    def bdm(self, instance_uuid, volume_id):
        """The live BDM row as a dict, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT * FROM block_device_mapping WHERE instance_uuid=:i "
                "AND volume_id=:v AND deleted=0"),
                {"i": instance_uuid, "v": volume_id}).mappings().first()
        return dict(row) if row else None

    def domain_name(self, instance_uuid):
        with self.engine.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT id FROM instances WHERE uuid=:u"),
                {"u": instance_uuid}).first()
        return self.name_template % row[0]

    def domblklist(self, domain):
        """{target: source} from ``virsh domblklist``."""
        out, _ = executor.execute("virsh", "-c", self.uri, "domblklist",
                                  domain)
        disks = {}
        for line in out.splitlines()[2:]:
            parts = line.split(None, 1)
            if len(parts) == 2:
                disks[parts[0]] = parts[1].strip()
        return disks

    def _domain(self, domain):
        import libvirt
        if self._conn is None:
            self._conn = libvirt.open(self.uri)
        try:
            return self._conn.lookupByName(domain)
        except libvirt.libvirtError:
            # a libvirtd restart broke the connection: open a new one
            self._conn = libvirt.open(self.uri)
            return self._conn.lookupByName(domain)

    def guest(self, domain, argv, input_data=None, timeout=60):
        """Run argv in the guest; returns (rc, stdout, stderr)."""
        from minicompute.virt.libvirt import guest_agent
        return guest_agent.guest_exec(self._domain(domain), argv,
                                      timeout=timeout,
                                      input_data=input_data)

    def guest_serials(self, domain):
        """{vdX: serial} of the disks the guest kernel sees."""
        script = ("for d in /sys/block/vd*; do "
                  "echo $(basename $d) $(cat $d/serial 2>/dev/null); done")
        rc, out, err = self.guest(domain, ["/bin/sh", "-c", script])
        assert rc == 0, err
        found = {}
        for line in out.splitlines():
            parts = line.split()
            if parts:
                found[parts[0]] = parts[1] if len(parts) > 1 else ""
        return found

    def guest_dev_for(self, domain, volume_id):
        """The guest's vdX whose serial is the volume id (or None)."""
        for dev, serial in self.guest_serials(domain).items():
            if serial and volume_id.startswith(serial):
                return dev
        return None

    def write_block(self, domain, dev, data):
        rc, _, err = self.guest(domain, [
            "/bin/sh", "-c", "cat > /tmp/in && dd if=/tmp/in of=/dev/%s "
            "bs=512 conv=fsync 2>&1" % dev], input_data=data)
        assert rc == 0, err

    def read_block(self, domain, dev, size):
        rc, out, err = self.guest(domain, [
            "/bin/sh", "-c", "echo 3 > /proc/sys/vm/drop_caches; "
            "dd if=/dev/%s bs=512 count=%d 2>/dev/null | od -An -tx1 -v"
            % (dev, (size + 511) // 512)])
        assert rc == 0, err
        return bytes.fromhex("".join(out.split()))[:size]

    def close(self):
        if self._conn is not None:
            self._conn.close()
        self.engine.dispose()


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def dumps(obj):
    return json.dumps(obj, indent=1, default=str)
