"""Where tools/bench_attach.py runs: one compute host of the lab.

A lab of several compute hosts (``COMPUTE_HOSTS=2 ./lab.sh``) runs each
extra host's minicompute, libvirtd and QEMUs in namespaces of their own
(docs/multinode.md). ``--host HOST`` runs the benchmark on that host, as
its own minicompute would see it:

* the stack side's servers are created there (compute 2.74's ``host``,
  by the admin in the bench's project, as tools/journey.py --host does)
  and each is checked to have landed there;
* the floors' guests are defined in that host's libvirtd (its
  ``[libvirt] connection_uri``: the socket URI of an extra host), with
  that host's ``virt_type``; their CHAP secrets live in that libvirtd;
  their QEMUs, started by it, log in from the host's own address;
* the floors' disks present the host's initiator name (the file its
  minicompute reads: ``/etc/iscsi/initiatorname.iscsi`` under the host's
  own root, else ``state_path``'s, as ``ministack-audit`` reads it) and
  name the portal the lab's tgtd listens on (``target_ip_address``, or
  ``my_ip``, and ``target_port`` of minicinder.conf: ``10.42.0.1:3260``
  once the lab has two hosts, ``127.0.0.1:3260`` on one).

Without ``--host`` the bench runs on the first host (``minicompute.conf``)
as before; on a lab of several hosts its servers are then pinned there
too, so the stack and the floor share a host. The scale run
(``spread=True``) leaves the placement to the scheduler and reaches each
guest through its own host's libvirtd (:func:`placement`, ``Bench``'s
``domain``); :func:`per_host` counts what landed where.
"""

import configparser
import os
import types

import sqlalchemy as sa
import yaml

from minicompute import hosts as compute_hosts
from ministack_audit import hosts as audit_hosts

CONF_DIR = compute_hosts.CONF_DIR
CINDER_CONF = os.path.join(CONF_DIR, "minicinder.conf")
CLOUDS_YAML = "/etc/openstack/clouds.yaml"
#: The cloud that pins servers to a host (2.74's ``host`` is the admin's).
ADMIN_CLOUD = "ministack-admin"
STATE_PATH = "/var/lib/ministack"
DEFAULT_PORTAL = ("127.0.0.1", 3260)


def _ini(path):
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read(path)
    return parser


def lab_portal(cinder_conf=CINDER_CONF):
    """``(address, port)`` of the portal the lab's tgtd listens on, as
    minicinder hands it to initiators: ``target_ip_address`` (by default
    ``$my_ip``) and ``target_port`` of its ``[DEFAULT]``."""
    conf = _ini(cinder_conf)
    my_ip = conf.get("DEFAULT", "my_ip", fallback="") or DEFAULT_PORTAL[0]
    address = conf.get("DEFAULT", "target_ip_address", fallback="") or my_ip
    if address in ("$my_ip", "${my_ip}"):
        address = my_ip
    port = conf.get("DEFAULT", "target_port", fallback="") or \
        DEFAULT_PORTAL[1]
    return address, int(port)


def host_initiator(libvirt_uri, state_path):
    """The IQN the host's minicompute logs in as, read as the audit reads
    it (``ministack_audit.hosts.read_initiator``: the open-iscsi file
    under the host's own root, else ``state_path``'s), or None."""
    settings = types.SimpleNamespace(
        root=audit_hosts.root_of(libvirt_uri),
        compute_conf=types.SimpleNamespace(state_path=state_path))
    return audit_hosts.read_initiator(settings)


class Site:
    """The compute host the bench runs on, and what it reads of it.

    :param pinned: the stack side's servers are created on this host
        (2.74's ``host``); otherwise the scheduler places them.
    :param explicit: ``--host`` named it: the floors present its
        initiator name (without ``--host``, the bench's own as before).
    """

    def __init__(self, name, libvirt_uri, my_ip=None, config_file=None,
                 virt_type="qemu", state_path=STATE_PATH, initiator=None,
                 portal=DEFAULT_PORTAL, pinned=False, explicit=False,
                 known=None):
        self.name = name
        self.libvirt_uri = libvirt_uri
        self.my_ip = my_ip
        self.config_file = config_file
        self.virt_type = virt_type
        self.state_path = state_path
        self.initiator = initiator
        self.portal = portal
        self.pinned = pinned
        self.explicit = explicit
        #: {host name: libvirt URI} of every compute host of the machine
        self.known = dict(known or {})

    def __repr__(self):
        return "Site(%r, %r, pinned=%r)" % (self.name, self.libvirt_uri,
                                            self.pinned)

    def floor_initiator(self, run):
        """The initiator name the floors' disks present (and their
        targets' ACLs admit)."""
        if self.explicit and self.initiator:
            return self.initiator
        return "iqn.2004-10.org.ministack:bench-%s" % run

    def uri_of(self, host):
        """The libvirt URI of ``host``'s libvirtd.

        :raises SystemExit: a host this machine has no config of (a
            subnode's guests are reached on the subnode).
        """
        if host == self.name or (self.name is None and not self.known):
            return self.libvirt_uri     # (no config: the one local host)
        if host not in self.known:
            raise SystemExit(
                "compute host %r has no minicompute config in %s: its "
                "guests are not reachable from this machine" % (
                    host, CONF_DIR))
        return self.known[host]

    def describe(self):
        """One line for the run's header."""
        return ("compute host %s (%s; libvirt %s; my_ip %s; portal %s:%d; "
                "floor initiator %s)" % (
                    self.name or "?", "servers pinned here" if self.pinned
                    else "servers placed by the scheduler",
                    self.libvirt_uri, self.my_ip, self.portal[0],
                    self.portal[1], "the host's" if self.explicit and
                    self.initiator else "the bench's own"))


def site(name=None, spread=False, conf_dir=CONF_DIR, cinder_conf=None):
    """The :class:`Site` of compute host ``name`` (default: the first
    host, ``minicompute.conf``'s).

    :param spread: without ``name``, leave the placement to the
        scheduler (the scale run); otherwise the servers are pinned to
        the first host once the machine has more than one.
    :raises SystemExit: ``name`` is not a compute host of this machine.
    """
    found = compute_hosts.compute_hosts(conf_dir)
    known = {h.name: h.libvirt_uri for h in found.values()}
    portal = lab_portal(cinder_conf or os.path.join(conf_dir,
                                                    "minicinder.conf"))
    if name is not None and name not in found:
        raise SystemExit("--host %s: not a compute host of this machine "
                         "(its hosts: %s)" % (
                             name, ", ".join(found) or "none configured"))
    host = found[name] if name else next(iter(found.values()), None)
    if host is None:        # no minicompute config: the one local host
        return Site(None, compute_hosts.DEFAULT_URI, portal=portal)
    conf = _ini(host.config_file)
    state_path = conf.get("DEFAULT", "state_path", fallback=STATE_PATH)
    return Site(host.name, host.libvirt_uri, my_ip=host.my_ip,
                config_file=host.config_file,
                virt_type=conf.get("libvirt", "virt_type", fallback="qemu"),
                state_path=state_path,
                initiator=host_initiator(host.libvirt_uri, state_path),
                portal=portal,
                pinned=name is not None or (not spread and len(found) > 1),
                explicit=name is not None, known=known)


def cloud_project(cloud, path=CLOUDS_YAML):
    """The project name of clouds.yaml's ``cloud`` (the admin pins the
    bench's servers in that project, so the bench's user sees them)."""
    with open(path) as handle:
        return yaml.safe_load(handle)["clouds"][cloud]["auth"][
            "project_name"]


def placement(nova_db_url, server_id, template):
    """``(host, libvirt domain name)`` of a server, from nova's row."""
    engine = sa.create_engine(nova_db_url)
    try:
        with engine.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT host, id FROM instances WHERE uuid=:u"),
                {"u": server_id}).first()
    finally:
        engine.dispose()
    if row is None:
        raise SystemExit("server %s has no instance row" % server_id)
    return row[0], template % row[1]


def per_host(server_hosts, pairs=()):
    """``{host: {"servers": n, "attaches": m}}``: how many of the
    servers (``{server id: host}``) and of the attaches (``[(server id,
    volume id), ...]``) landed on each host, hosts by name."""
    counts = {}
    for host in server_hosts.values():
        counts.setdefault(host, {"servers": 0, "attaches": 0})
        counts[host]["servers"] += 1
    for sid, _ in pairs:
        host = server_hosts.get(sid)
        counts.setdefault(host, {"servers": 0, "attaches": 0})
        counts[host]["attaches"] += 1
    return dict(sorted(counts.items(), key=lambda kv: str(kv[0])))


def per_host_line(counts):
    """``per_host`` as one line: ``vm 5 servers, 40 attaches; ...``."""
    return "; ".join("%s %d servers, %d attaches" % (
        host, c["servers"], c["attaches"]) for host, c in counts.items())
