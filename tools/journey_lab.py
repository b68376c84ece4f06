"""The lab's ledgers and REST clients, for tools/journey.py (and the
bench tools): what an operator looks at, read from the running system.

* :class:`Cloud` - raw REST access to the compute and volume APIs for one
  user (a keystone token from clouds.yaml, or noauth);
* :class:`Ledgers` - nova's database, ``virsh`` and the guest agent
  (and, where the host connects volumes through the kernel initiator,
  ``iscsiadm -m session`` and the host block device);
* :class:`Timeline` - volume status and the BDM row polled while a cast
  runs, each change printed as it happens;
* the operator's commands as printed (:func:`command`,
  :func:`sql_command`) and the config the tools read (:func:`nova_db_url`).
"""

import configparser
import json
import os
import shutil
import threading
import time

import requests
import sqlalchemy as sa
import yaml

from ministack import executor

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
    def from_clouds_yaml(cls, name, path="/etc/openstack/clouds.yaml",
                         project=None):
        """A token of cloud ``name``'s user, scoped to its project or to
        ``project`` (the admin is an admin of the demo project too)."""
        with open(path) as handle:
            cloud = yaml.safe_load(handle)["clouds"][name]
        auth = dict(cloud["auth"])
        if project:
            auth["project_name"] = project
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
    def noauth(cls, project="demo", user="demo",
               conf="/etc/ministack/miniapi.conf"):
        host = _ini(conf).get("api", "listen", fallback="127.0.0.1")
        return cls("http://%s:8774/v2.1" % host,
                   "http://%s:8776/v3/%s" % (host, project),
                   "%s:%s" % (user, project))

    def compute(self, method, path, body=None, version="2.89",
                headers=None):
        """:param headers: more headers (e.g. osprofiler's trace
        headers)."""
        return self.http.request(
            method, self.compute_url + path, json=body, timeout=120,
            headers=dict(headers or {}, **{
                "OpenStack-API-Version": "compute %s" % version}))

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

    def __init__(self, nova_db_url, libvirt_uri="qemu:///system",
                 host=None):
        self.url = nova_db_url
        self.engine = sa.create_engine(nova_db_url)
        self.libvirt_uri = libvirt_uri
        self.host = host
        self._conn = None

    @classmethod
    def of_server(cls, nova_db_url, instance_uuid):
        """The ledgers of a server's compute host: its libvirtd is the
        one that host's minicompute config names (minicompute.hosts)."""
        from minicompute import hosts
        ledgers = cls(nova_db_url)
        with ledgers.engine.connect() as conn:
            ledgers.host = conn.execute(sa.text(
                "SELECT host FROM instances WHERE uuid=:u"),
                {"u": instance_uuid}).scalar()
        ledgers.libvirt_uri = hosts.libvirt_uri(ledgers.host)
        return ledgers

    def virsh_command(self, args):
        """``virsh ARGS`` as an operator types it for this host."""
        if self.libvirt_uri == "qemu:///system":
            return "virsh %s" % args
        return "virsh -c '%s' %s" % (self.libvirt_uri, args)

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

    @staticmethod
    def kernel_initiator():
        """Whether this host has open-iscsi with iscsi_tcp loaded, where
        minicompute connects volumes through os-brick: the sessions and
        block devices are the host's own ledgers then."""
        return shutil.which("iscsiadm") is not None and \
            os.path.isdir("/sys/module/iscsi_tcp")

    def iscsi_sessions(self, target_iqn=None):
        """``iscsiadm -m session`` lines (of one target if given)."""
        out, _ = executor.execute("iscsiadm", "-m", "session",
                                  check_exit_code=[0, 21])   # 21: none
        return [line for line in out.splitlines() if line.strip() and
                (target_iqn is None or target_iqn in line.split())]

    def host_device(self, instance_uuid, volume_id):
        """The host block device the BDM's connection_info names
        (os-brick's ``device_path``) and what it resolves to, or None."""
        with self.engine.connect() as conn:
            info = conn.execute(sa.text(
                "SELECT connection_info FROM block_device_mapping "
                "WHERE instance_uuid=:i AND volume_id=:v AND deleted=0"),
                {"i": instance_uuid, "v": volume_id}).scalar()
        path = (json.loads(info).get("data") or {}).get("device_path") \
            if info else None
        if not path:
            return None
        real = os.path.realpath(path)
        if not os.path.exists(real):
            return "%s (gone)" % path
        return path if real == path else "%s -> %s" % (path, real)

    def domblklist(self, domain):
        out, _ = executor.execute("virsh", "-c", self.libvirt_uri,
                                  "domblklist", domain)
        return out.rstrip()

    def _domain(self, domain):
        import libvirt
        if self._conn is None:
            # Errors are raised (and told) here, not also printed by
            # libvirt's default handler ("Guest agent is not responding"
            # while the guest boots).
            libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
            self._conn = libvirt.open(self.libvirt_uri)
        return self._conn.lookupByName(domain)

    def wait_for_guest(self, domain, timeout=180):
        """Seconds until the guest's agent answers. ACTIVE says the
        domain runs, not that its guest has booted: after a host restart
        minicompute starts the guests of ACTIVE servers again, and they
        boot while the API already says ACTIVE."""
        from minicompute.virt.libvirt import guest_agent
        try:
            return guest_agent.wait_for_agent(self._domain(domain),
                                              timeout=timeout)
        except guest_agent.GuestAgentError as exc:
            raise SystemExit("%s; its console: %s, or openstack console "
                             "log show <server>" % (exc, self.virsh_command(
                                 "console %s" % domain))) from exc

    def guest(self, domain, argv):
        from minicompute.virt.libvirt import guest_agent
        return guest_agent.guest_exec(self._domain(domain), argv, timeout=60)

    def lsblk(self, domain):
        from minicompute.virt.libvirt import guest_agent
        try:
            rc, out, err = self.guest(domain, ["lsblk"])
        except guest_agent.GuestAgentError as exc:
            return "lsblk failed: %s" % exc
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


def _ini(path):
    parser = configparser.RawConfigParser()
    parser.read(path)
    return parser


def nova_db_url(path="/etc/ministack/miniapi.conf"):
    return _ini(path).get("database", "connection",
                          fallback="sqlite:////var/lib/ministack/nova.sqlite")


def cinder_db_url(path="/etc/ministack/minicinder.conf"):
    return _ini(path).get("database", "connection",
                          fallback="sqlite:////var/lib/ministack/cinder.sqlite")


def instance_name_template(path="/etc/ministack/minicompute.conf"):
    return _ini(path).get("DEFAULT", "instance_name_template",
                          fallback="instance-%08x")
