#!/usr/bin/env python3
"""Walk the seed's attach/detach journey on the deployed stack, out loud.

This is the main job of the lab: it creates a volume, attaches it to the
demo server through the compute API, and shows every ledger of the seed at
each phase -- the Cinder volume and attachment, nova's
``block_device_mapping`` row, ``virsh domblklist`` and ``lsblk`` inside the
guest (through the QEMU guest agent) -- then detaches it and shows them
again. Nothing is simulated: every line is read from the running system.

Usage (as root, after devstack/stack.sh)::

    /opt/stack/venv/bin/python tools/journey.py [--cloud ministack]
    /opt/stack/venv/bin/python tools/journey.py --ensure-server   # boot only

Credentials come from /etc/openstack/clouds.yaml (keystone), or with
``--noauth`` from noauth tokens; the nova database URL from
/etc/ministack/miniapi.conf.
"""

import argparse
import configparser
import json
import sys
import threading
import time

import requests
import sqlalchemy as sa
import yaml

from ministack import executor

DEMO_SERVER = "demo"
POLL = 0.05


def say(text=""):
    print(text, flush=True)


def heading(text):
    say()
    say("== %s" % text)


def command(text):
    """The operator's command that shows or does the same."""
    say("   $ " + text)


BDM_QUERY = ("SELECT device_name, attachment_id, connection_info IS NOT NULL"
             " FROM %sblock_device_mapping WHERE volume_id='%s' AND "
             "deleted=0")


def sql_command(url, volume_id):
    """The seed's BDM query as the operator runs it on this database."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1].split("?", 1)[0]
        if path.startswith("file:"):
            path = path[5:]
        return 'sqlite3 %s "%s"' % (path, BDM_QUERY % ("", volume_id))
    if url.startswith("mysql"):
        return 'mysql -e "%s"' % (BDM_QUERY % ("nova.", volume_id))
    return 'psql nova -c "%s"' % (BDM_QUERY % ("", volume_id))


def masked(info):
    """connection_info as JSON, its secrets masked."""
    data = dict(info or {})
    for key in list(data):
        if "password" in key or key in ("auth_username",):
            data[key] = "***"
    return json.dumps(data, sort_keys=True)


class Cloud:
    """Raw REST access to the compute and volume APIs for one user."""

    def __init__(self, compute_url, volume_url, token):
        self.compute_url = compute_url.rstrip("/")
        self.volume_url = volume_url.rstrip("/")
        self.http = requests.Session()
        self.http.headers.update({"X-Auth-Token": token,
                                  "Content-Type": "application/json"})

    @classmethod
    def from_clouds_yaml(cls, name, path="/etc/openstack/clouds.yaml"):
        with open(path) as handle:
            cloud = yaml.safe_load(handle)["clouds"][name]
        auth = cloud["auth"]
        region = cloud.get("region_name")
        body = {"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": auth["username"], "password": auth["password"],
                "domain": {"name": auth.get("user_domain_name",
                                            "Default")}}}},
            "scope": {"project": {"name": auth["project_name"], "domain": {
                "name": auth.get("project_domain_name", "Default")}}}}}
        resp = requests.post(auth["auth_url"].rstrip("/") + "/auth/tokens",
                             json=body, timeout=30)
        resp.raise_for_status()
        catalog = resp.json()["token"]["catalog"]

        def url(kind):
            for entry in catalog:
                if entry["type"] == kind:
                    for ep in entry["endpoints"]:
                        if ep["interface"] == "public" and (
                                not region or ep.get("region_id") == region):
                            return ep["url"]
            raise SystemExit("no %s endpoint in the catalog" % kind)

        return cls(url("compute"), url("block-storage"),
                   resp.headers["X-Subject-Token"])

    @classmethod
    def noauth(cls, project="demo", user="demo"):
        return cls("http://127.0.0.1:8774/v2.1",
                   "http://127.0.0.1:8776/v3/%s" % project,
                   "%s:%s" % (user, project))

    def compute(self, method, path, body=None, version="2.89"):
        return self.http.request(
            method, self.compute_url + path, json=body, timeout=120,
            headers={"OpenStack-API-Version": "compute %s" % version})

    def volume(self, method, path, body=None, version="3.44"):
        return self.http.request(
            method, self.volume_url + path, json=body, timeout=120,
            headers={"OpenStack-API-Version": "volume %s" % version})


def check(resp, *codes):
    if resp.status_code not in codes:
        raise SystemExit("%s %s -> %s %s" % (
            resp.request.method, resp.request.url, resp.status_code,
            resp.text[:500]))
    return resp.json() if resp.content else None


def wait(what, probe, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.25)
    raise SystemExit("timed out waiting for %s" % what)


class Ledgers:
    """The operator's views: nova DB, virsh, and the guest agent."""

    def __init__(self, nova_db_url, libvirt_uri="qemu:///system"):
        self.url = nova_db_url
        self.engine = sa.create_engine(nova_db_url)
        self.libvirt_uri = libvirt_uri
        self._conn = None

    def domain_name(self, instance_uuid, template="instance-%08x"):
        """The libvirt domain of a server: the name template over its id."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT id FROM instances WHERE uuid=:u"),
                {"u": instance_uuid}).first()
        return template % row[0]

    def bdm(self, instance_uuid, volume_id):
        with self.engine.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT device_name, attachment_id, "
                "LENGTH(connection_info) AS info_len "
                "FROM block_device_mapping WHERE instance_uuid=:i "
                "AND volume_id=:v AND deleted=0"),
                {"i": instance_uuid, "v": volume_id}).mappings().first()
        return dict(row) if row else None

    def domblklist(self, domain):
        out, _ = executor.execute("virsh", "-c", self.libvirt_uri,
                                  "domblklist", domain)
        return out.rstrip()

    def guest(self, domain, argv):
        import libvirt

        from minicompute.virt.libvirt import guest_agent
        if self._conn is None:
            self._conn = libvirt.open(self.libvirt_uri)
        dom = self._conn.lookupByName(domain)
        return guest_agent.guest_exec(dom, argv, timeout=60)

    def lsblk(self, domain):
        rc, out, err = self.guest(domain, ["lsblk"])
        return out.rstrip() if rc == 0 else "lsblk failed: %s" % err


def describe_bdm(bdm):
    if bdm is None:
        return "no BDM row"
    info = ("NULL" if bdm["info_len"] is None
            else "%d bytes" % bdm["info_len"])
    return "BDM %s attachment_id=%s connection_info=%s" % (
        bdm["device_name"], (bdm["attachment_id"] or "NULL")[:8], info)


class Timeline:
    """Poll volume status and the BDM row, printing each change.

    The API answers before compute has done its part (attach_volume is a
    cast), so the phases are watched as they happen rather than assumed.
    """

    def __init__(self, cloud, ledgers, server_id, volume_id):
        self.cloud, self.ledgers = cloud, ledgers
        self.server_id, self.volume_id = server_id, volume_id
        self.stop = threading.Event()
        self.start = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def snapshot(self):
        volume = self.cloud.volume("GET", "/volumes/%s" % self.volume_id)
        status = (volume.json()["volume"]["status"]
                  if volume.status_code == 200 else "gone")
        return status, describe_bdm(
            self.ledgers.bdm(self.server_id, self.volume_id))

    def _run(self):
        last = None
        while not self.stop.is_set():
            now = self.snapshot()
            if now != last:
                say("   +%5.2fs  volume %-10s %s" % (
                    time.monotonic() - self.start, now[0], now[1]))
                last = now
            time.sleep(POLL)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def ensure_server(cloud, image, flavor):
    servers = check(cloud.compute(
        "GET", "/servers/detail?name=^%s$" % DEMO_SERVER), 200)["servers"]
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
        say("booting server %r (image %s, flavor %s)" % (DEMO_SERVER, image,
                                                         flavor))
        server_id = check(cloud.compute("POST", "/servers", {"server": {
            "name": DEMO_SERVER, "imageRef": image, "flavorRef": flavor,
            "networks": "none"}}), 202)["server"]["id"]

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
    command("virsh domblklist %s" % domain)
    command("ministack-guest %s -- lsblk" % server["id"])
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
    say("   virsh domblklist %s:" % domain)
    for line in ledgers.domblklist(domain).splitlines():
        say("      " + line)
    say("   lsblk inside the guest:")
    for line in ledgers.lsblk(domain).splitlines():
        say("      " + line)


def walk(cloud, ledgers, server):
    server_id = server["id"]
    domain = ledgers.domain_name(server_id, instance_name_template())
    say("server  %s (%s), libvirt domain %s, %s" % (
        server["name"], server_id, domain, server["status"]))

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
        timeline = Timeline(cloud, ledgers, server_id, volume_id)
        resp = cloud.compute("POST", "/servers/%s/os-volume_attachments"
                             % server_id,
                             {"volumeAttachment": {"volumeId": volume_id}})
        body = check(resp, 200)
        command("openstack server add volume %s %s" % (server_id, volume_id))
        say("POST /servers/%s/os-volume_attachments -> %s in %.0f ms "
            "(request %s)" % (server_id[:8], resp.status_code,
                              resp.elapsed.total_seconds() * 1000,
                              resp.headers.get("x-openstack-request-id")))
        say("   %s" % json.dumps(body["volumeAttachment"]))
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

        heading("Detach: nova-api begin_detaching (volume detaching), casts "
                "detach_volume; compute unplugs with retries, "
                "attachment_delete, os-brick disconnect, BDM destroyed")
        timeline = Timeline(cloud, ledgers, server_id, volume_id)
        resp = cloud.compute("DELETE", "/servers/%s/os-volume_attachments/%s"
                             % (server_id, volume_id))
        check(resp, 202)
        command("openstack server remove volume %s %s" % (server_id,
                                                          volume_id))
        say("DELETE /servers/%s/os-volume_attachments/%s -> %s" % (
            server_id[:8], volume_id[:8], resp.status_code))
        with timeline:
            wait("volume available",
                 lambda: timeline.snapshot() == ("available", "no BDM row"))
            time.sleep(0.2)
        heading("Detached")
        show_ledgers(cloud, ledgers, server, volume_id, domain)
        heading("Instance actions")
        command("openstack server event list %s" % server_id)
        actions = check(cloud.compute(
            "GET", "/servers/%s/os-instance-actions" % server_id,
            version="2.84"), 200)["instanceActions"]
        for action in actions[:2]:
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


def _ini(path):
    parser = configparser.RawConfigParser()
    parser.read(path)
    return parser


def nova_db_url(path="/etc/ministack/miniapi.conf"):
    return _ini(path).get("database", "connection",
                          fallback="sqlite:////var/lib/ministack/nova.sqlite")


def instance_name_template(path="/etc/ministack/minicompute.conf"):
    return _ini(path).get("DEFAULT", "instance_name_template",
                          fallback="instance-%08x")


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
    args = parser.parse_args(argv)
    cloud = (Cloud.noauth() if args.noauth
             else Cloud.from_clouds_yaml(args.cloud))
    server = ensure_server(cloud, args.image, args.flavor)
    if args.ensure_server:
        say("server %s (%s) is ACTIVE" % (server["name"], server["id"]))
        return 0
    ledgers = Ledgers(nova_db_url())
    heading("The attach journey on server %r" % server["name"])
    start = time.monotonic()
    walk(cloud, ledgers, server)
    say()
    say("journey complete in %.1f s" % (time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
