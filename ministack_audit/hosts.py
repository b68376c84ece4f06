"""Every compute host of the machine: its libvirtd, secrets and initiator.

The hosts are those of ``minicompute.hosts`` (a ``minicompute.conf``
and ``minicompute@HOST.conf`` per host, in the directory of the audit's
compute config): the first host is the audit's own ``minicompute.conf``,
the others each have their own ``[libvirt] connection_uri``, reached
from this machine's namespaces through the socket it names.

What is read of each host, through minicompute's libvirt driver and
host on its URI, as its own minicompute sees it:

* its domains named by ``instance_name_template`` and their volume
  disks, and the CHAP secrets those disks name;
* the CHAP secrets of our volumes' targets in its libvirtd (the usage
  ids minicompute's QEMU-initiator volume driver gives them);
* its initiator name: the file its minicompute reads
  (``minicompute.virt.libvirt.initiator``: open-iscsi's
  /etc/iscsi/initiatorname.iscsi, else ``state_path``'s), under the
  host's own root (a host in a mount namespace of its own has its /etc
  at ``HOSTS_DIR/NAME/etc``, beside its ``run/libvirt/libvirt-sock``);
* on the machine's first host, where the kernel initiator is in use
  (open-iscsi, iscsi_tcp loaded), the iSCSI sessions to our targets
  (``iscsiadm -m session``): the kernel's, which a host in a namespace
  of its own shares, so only the first host lists them.

A host whose libvirtd does not answer (refused, or no answer within
``timeout``) is recorded with the reason (``error``) and audited no
further; the checks report it (``libvirt_unreachable``).
"""

import os
import shutil
import threading
import urllib.parse
import xml.etree.ElementTree as ET

from minicompute import exception as nova_exception
from minicompute.virt.libvirt import driver as libvirt_driver
from minicompute.virt.libvirt import host as libvirt_host
from minicompute.virt.libvirt.volume import iscsi
from ministack import exception
from ministack import executor
from ministack.ledgers import snapshot

#: The usage id of a volume target's CHAP secret is this prefix and the
#: target's IQN (minicompute.virt.libvirt.volume.iscsi's _secret_usage).
SECRET_PREFIX = "ministack-chap-"
_SOCKET_TAIL = "/run/libvirt/libvirt-sock"
_INITIATOR_FILE = "etc/iscsi/initiatorname.iscsi"
#: How long a libvirtd may take to accept the audit's connection.
CONNECT_TIMEOUT = 20


class HostSettings:
    """One compute host as the audit reaches it."""

    def __init__(self, name, libvirt_uri, compute_conf, first=False):
        self.name = name
        self.libvirt_uri = libvirt_uri
        self.compute_conf = compute_conf
        self.first = first
        self.root = root_of(libvirt_uri)

    def __repr__(self):
        return "HostSettings(%r, %r)" % (self.name, self.libvirt_uri)


def root_of(uri):
    """The directory that is the host's ``/`` for its /etc and /run: "/"
    for this machine's own libvirtd, ``DIR`` for a libvirtd whose socket
    is ``DIR/run/libvirt/libvirt-sock``, None for a remote one."""
    parts = urllib.parse.urlsplit(uri)
    if parts.netloc:
        return None     # another machine's: its files are not here
    socket = urllib.parse.parse_qs(parts.query).get("socket", [None])[0]
    if socket and socket.endswith(_SOCKET_TAIL):
        return socket[:-len(_SOCKET_TAIL)] or "/"
    return "/"


def _read_iqn(path):
    try:
        with open(path) as handle:
            for line in handle:
                key, _, value = line.strip().partition("=")
                if key == "InitiatorName" and value.strip():
                    return value.strip()
    except OSError:
        return None
    return None


def read_initiator(host):
    """The IQN the host's minicompute logs in as, or None (not known
    here; the audit never makes one up, as minicompute would)."""
    if host.root is None:
        return None
    return _read_iqn(os.path.join(host.root, _INITIATOR_FILE)) or _read_iqn(
        os.path.join(host.compute_conf.state_path, "initiatorname.iscsi"))


def read_iscsi_sessions(target_pattern):
    """{target_iqn: volume_id} of the kernel's sessions to our targets,
    or None where the kernel initiator is not in use."""
    if shutil.which("iscsiadm") is None or \
            not os.path.isdir("/sys/module/iscsi_tcp"):
        return None
    out, _ = executor.execute("iscsiadm", "-m", "session",
                              check_exit_code=[0, 21])   # 21: none
    sessions = {}
    for line in out.splitlines():
        # tcp: [1] 192.0.2.10:3260,1 iqn.2010-10.org.openstack:volume-ID
        words = line.split()
        iqn = words[3] if len(words) > 3 else ""
        match = target_pattern.match(iqn)
        if match:
            sessions[iqn] = match.group(1)
    return sessions


class NoAnswer(exception.MinistackException):
    msg_fmt = "libvirtd at %(uri)s did not answer in %(timeout)s s"


def _connect(host, timeout):
    """``host.get_connection()`` within ``timeout`` seconds: a libvirtd
    that accepts the socket but never answers (stopped) must not hang
    the audit. The call left waiting runs on in a daemon thread."""
    box = {}

    def run():
        try:
            host.get_connection()
        except Exception as exc:   # handed to the caller below
            box["error"] = exc
    thread = threading.Thread(target=run, name="audit-libvirt-connect",
                              daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise NoAnswer(uri=host.uri, timeout=timeout)
    if "error" in box:
        raise box["error"]


def _libvirt_error(exc):
    """Whether ``exc`` is libvirt's refusal of a call (libvirtError: not
    imported outside minicompute.virt.libvirt) or the driver's."""
    return isinstance(exc, exception.MinistackException) or \
        type(exc).__module__ == "libvirt"


def disk_secret(disk_xml):
    """The CHAP secret usage id a ``<disk>`` XML names, or None."""
    try:
        secret = ET.fromstring(disk_xml).find("source/auth/secret")
    except (ET.ParseError, TypeError):
        return None
    return secret.get("usage") if secret is not None else None


def secret_users(host):
    """The secret usage ids the disks of every guest of ``host`` (a
    minicompute libvirt Host) name, live or persistent."""
    users = set()
    for guest in host.list_guests():
        try:
            disks = list(guest.get_disks(inactive=True).values())
            if guest.is_active():
                disks += guest.get_disks().values()
        except nova_exception.DomainNotFound:
            continue
        for disk in disks:
            secret = disk.find("source/auth/secret")
            if secret is not None and secret.get("usage"):
                users.add(secret.get("usage"))
    return users


def _secrets(host, target_pattern):
    """{usage: {"target_iqn", "volume_id"}} of our CHAP secrets."""
    out = {}
    for secret in host.get_connection().listAllSecrets():
        usage = secret.usageID() or ""
        if not usage.startswith(SECRET_PREFIX):
            continue
        iqn = usage[len(SECRET_PREFIX):]
        match = target_pattern.match(iqn)
        vid = match.group(1) if match else None
        out[usage] = {"target_iqn": iqn, "volume_id": vid if vid and
                      snapshot.UUID_RE.match(vid) else None}
    return out


def _domains(host, drv, pattern, by_name):
    domains, users = {}, set()
    for guest in host.list_guests():
        name = guest.name
        if not pattern.match(name):
            continue
        try:
            disks = drv.list_volume_disks({"name": name})
        except nova_exception.DomainNotFound:
            disks = None
        if disks is None:
            continue    # undefined while we looked: nothing to audit
        domains[name] = {"instance_uuid": by_name.get(name, guest.uuid),
                         "active": disks["active"],
                         "disks": disks["disks"]}
        users.update(filter(None, (disk_secret(d.get("xml"))
                                   for d in disks["disks"].values())))
    return domains, users


def read_host(settings, host, by_name, strict=False):
    """One host's ledger (``Snapshot.hosts``' value).

    :param strict: raise instead of recording a libvirtd that does not
        answer (the one host of a one-host machine: the audit cannot
        run, as before there were several).
    """
    out = {"uri": host.libvirt_uri, "first": host.first,
           "initiator": read_initiator(host),
           "domains": None, "secrets": None, "secret_users": set(),
           "iscsi_sessions": None, "error": None}
    if host.first:
        out["iscsi_sessions"] = read_iscsi_sessions(snapshot.template_re(
            settings.target_prefix + settings.volume_name_template))
    conn = libvirt_host.Host(host.libvirt_uri)
    try:
        _connect(conn, getattr(settings, "libvirt_timeout",
                               CONNECT_TIMEOUT))
    except NoAnswer as exc:
        if strict:
            raise
        out["error"] = exc.format_message()
        return out      # not closed: the stuck connect holds its lock
    except Exception as exc:
        if strict or not _libvirt_error(exc):
            raise
        out["error"] = _message(exc)
        conn.close()
        return out
    drv = libvirt_driver.LibvirtDriver(host.compute_conf, host=conn)
    try:
        domains, users = _domains(
            conn, drv, snapshot.template_re(settings.name_template),
            by_name)
        secrets = _secrets(conn, snapshot.template_re(
            settings.target_prefix + settings.volume_name_template))
    except Exception as exc:
        if strict or not _libvirt_error(exc):
            raise
        out["error"] = _message(exc)
    else:
        out.update(domains=domains, secrets=secrets, secret_users=users)
    finally:
        drv.cleanup_host()
    return out


def _message(exc):
    if hasattr(exc, "format_message"):
        return exc.format_message()
    if hasattr(exc, "get_error_message"):
        return exc.get_error_message()
    return str(exc)


def read_libvirt(settings, snap):
    """Every host's libvirtd and initiator into ``snap.hosts``."""
    by_name = {i["domain"]: i["uuid"] for i in (snap.instances or {}
                                                ).values()}
    hosts = settings.hosts
    snap.hosts = {host.name: read_host(settings, host, by_name,
                                       strict=len(hosts) == 1)
                  for host in hosts}


def use_initiator(drv, host):
    """Make a driver that ``init_host`` set up in this machine's own
    namespaces plug disks as ``host``'s initiator (the name its target
    ACLs admit): QEMU logs in itself, as the name in the disk XML. A
    kernel initiator (os-brick, iscsiadm) would log in from here as this
    machine's: refused, that host's own minicompute replugs it."""
    iqn = read_initiator(host)
    if not iqn:
        raise exception.ConfigError(
            reason="the initiator name of %s is not known here" % host.name)
    vol_driver = drv._volume_drivers.get("iscsi")
    if not isinstance(vol_driver, iscsi.LibvirtNetISCSIVolumeDriver):
        raise exception.ConfigError(
            reason="%s logs in with the kernel's initiator: the audit "
                   "cannot plug its disks from this machine; its "
                   "minicompute's reconciler does" % host.name)
    vol_driver.initiator_iqn = iqn
    drv._initiator_iqn = iqn
