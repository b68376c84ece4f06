"""The compute hosts of this machine, and how to reach each one's libvirtd.

A lab with more than one compute host (``COMPUTE_HOSTS=N``,
devstack/lib/compute_hosts) runs each extra host's minicompute and
libvirtd in network and mount namespaces of their own. Each host's
minicompute config says who it is and where its libvirtd listens: the
first host's ``minicompute.conf``, the others' ``minicompute@HOST.conf``,
all in the lab's config directory. ``[libvirt] connection_uri`` of an
extra host names its libvirtd's socket
(``qemu:///system?socket=.../hosts/HOST/run/libvirt/libvirt-sock``), which
works from this machine's own namespaces too: the operator's tools (the
audit, ``ministack-guest``, the journey) use it to look at any host.
"""

import configparser
import glob
import os

CONF_DIR = "/etc/ministack"
DEFAULT_URI = "qemu:///system"


class ComputeHost:
    """One compute host: its name, address, libvirt URI and config file."""

    def __init__(self, name, my_ip, libvirt_uri, config_file):
        self.name = name
        self.my_ip = my_ip
        self.libvirt_uri = libvirt_uri
        self.config_file = config_file

    def __repr__(self):
        return "ComputeHost(%r, %r, %r)" % (self.name, self.my_ip,
                                            self.libvirt_uri)


def _read(path):
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read(path)
    name = parser.get("DEFAULT", "host", fallback=None)
    if not name:
        return None
    return ComputeHost(name, parser.get("DEFAULT", "my_ip", fallback=None),
                       parser.get("libvirt", "connection_uri",
                                  fallback=DEFAULT_URI),
                       path)


def compute_hosts(conf_dir=CONF_DIR):
    """{host name: ComputeHost} of every minicompute config in
    ``conf_dir``; the first host's (``minicompute.conf``) first."""
    paths = [os.path.join(conf_dir, "minicompute.conf")]
    paths += sorted(glob.glob(os.path.join(conf_dir, "minicompute@*.conf")))
    hosts = {}
    for path in paths:
        if os.path.exists(path):
            host = _read(path)
            if host is not None:
                hosts.setdefault(host.name, host)
    return hosts


def libvirt_uri(host, conf_dir=CONF_DIR, default=DEFAULT_URI):
    """The URI of ``host``'s libvirtd, or ``default`` for a host this
    machine has no config of (a real subnode's)."""
    found = compute_hosts(conf_dir).get(host)
    return found.libvirt_uri if found else default
