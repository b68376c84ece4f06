"""A second machine on this one, for the subnode path of docs/multinode.md.

A real subnode is another machine with the repository checked out and a
``devstack/local.conf`` that enables only ``n-cpu``; ``bash
devstack/stack.sh`` there deploys a compute host that joins the
controller. :class:`Machine` makes such a machine out of namespaces so
that the very same stack.sh runs on it:

* a UTS namespace: its own hostname (what stack.sh names the compute host);
* a network namespace on the lab's bridge, with its own address;
* a mount namespace in which the machine has its own state, as a new
  machine has: ``/etc/ministack``, ``/var/lib/ministack``,
  ``/opt/stack/status``, ``/opt/stack/logs``, the libvirt and iSCSI
  directories, and the repository's ``devstack/local.conf``, each
  bind-mounted from the machine's directory. The packages, the venv and
  the repository itself are the machine's too: they are the same files
  (a subnode installs the same versions).

The process and user namespaces stay shared (root is root), which is all
the lab needs: each daemon's PID file is in the machine's own status
directory. The machine's only network is the lab's link: the kernel
package a real subnode downloads for its guest image is put in its cache
from the controller's (``/var/lib/ministack/cache``).
"""

import os
import shutil
import subprocess

from tests.support.login_shell import LOGIN_ENV

ROOT = "/var/lib/ministack-subnodes"
NS_DIR = "/run/ministack/subnodes"
BRIDGE = "ministack0"
CONTROLLER_CACHE = "/var/lib/ministack/cache"
PRIVATE = ("/etc/ministack", "/var/lib/ministack", "/opt/stack/status",
           "/opt/stack/logs", "/etc/libvirt", "/var/lib/libvirt",
           "/run/libvirt", "/var/log/libvirt", "/etc/iscsi", "/etc/nvme")


def _run(*argv, check=True, **kwargs):
    return subprocess.run(argv, check=check, capture_output=True, text=True,
                          timeout=120, **kwargs)


class Machine:
    """The machine ``name`` at ``address`` (a /24 on the lab's bridge)."""

    def __init__(self, name, address, repo):
        self.name, self.address, self.repo = name, address, repo
        self.root = os.path.join(ROOT, name)
        self.netns = "ministack-%s" % name
        self.veth = "ms-%s" % name
        self.uts = os.path.join(NS_DIR, name + ".uts")
        self.mnt = os.path.join(NS_DIR, name + ".mnt")
        self.local_conf = os.path.join(repo, "devstack", "local.conf")
        self._made_local_conf = False

    # -- making it -----------------------------------------------------

    def create(self):
        for path in PRIVATE:
            os.makedirs(self.root + path, exist_ok=True)
        # What a real subnode would download from Debian's mirror.
        cache = self.root + "/var/lib/ministack/cache"
        os.makedirs(cache, exist_ok=True)
        for name in os.listdir(CONTROLLER_CACHE):
            if name.endswith(".deb"):
                shutil.copy2(os.path.join(CONTROLLER_CACHE, name), cache)
        # A new machine's /etc/libvirt: the package's files, no guests.
        _run("rsync", "-a", "--exclude", "/qemu/", "--exclude", "/secrets/",
             "--exclude", "/storage/", "/etc/libvirt/",
             self.root + "/etc/libvirt/")
        self._network()
        self._namespaces()

    def _network(self):
        _run("ip", "netns", "add", self.netns)
        _run("ip", "link", "add", self.veth, "type", "veth", "peer", "name",
             self.veth + "-in")
        _run("ip", "link", "set", self.veth + "-in", "netns", self.netns)
        _run("ip", "-n", self.netns, "link", "set", self.veth + "-in",
             "name", "eth0")
        _run("ip", "link", "set", self.veth, "master", BRIDGE, "up")
        _run("ip", "-n", self.netns, "addr", "add", self.address + "/24",
             "dev", "eth0")
        _run("ip", "-n", self.netns, "link", "set", "eth0", "up")
        _run("ip", "-n", self.netns, "link", "set", "lo", "up")

    def _namespaces(self):
        os.makedirs(NS_DIR, exist_ok=True)
        if _run("mountpoint", "-q", NS_DIR, check=False).returncode:
            _run("mount", "--bind", NS_DIR, NS_DIR)
            _run("mount", "--make-private", NS_DIR)
        for path in (self.uts, self.mnt):
            open(path, "w").close()
        _run("unshare", "--uts=" + self.uts, "--mount=" + self.mnt,
             "--propagation", "private", "true")
        if not os.path.exists(self.local_conf):
            open(self.local_conf, "w").close()       # the bind's target
            self._made_local_conf = True
        open(self.root + "/local.conf", "a").close()
        binds = ["mount --bind %s%s %s" % (self.root, p, p) for p in PRIVATE]
        binds.append("mount --bind %s/local.conf %s" % (self.root,
                                                         self.local_conf))
        self._enter(["sh", "-c", " && ".join(
            ["hostname %s" % self.name] + binds)])

    def write_local_conf(self, text):
        with open(self.root + "/local.conf", "w") as handle:
            handle.write(text)
        os.chmod(self.root + "/local.conf", 0o600)

    # -- using it ------------------------------------------------------

    def _enter(self, argv, **kwargs):
        return _run("nsenter", "--net=/run/netns/" + self.netns,
                    "--mount=" + self.mnt, "--uts=" + self.uts, "--",
                    *argv, **kwargs)

    def run(self, commands, timeout=1800):
        """``commands`` in a new root login shell on the machine, from the
        repository (as a person who logged in there types them)."""
        script = "set -e -o pipefail\ncd %s\n%s" % (self.repo, commands)
        return subprocess.run(
            ["nsenter", "--net=/run/netns/" + self.netns,
             "--mount=" + self.mnt, "--uts=" + self.uts, "--",
             "bash", "-lc", script], env=dict(LOGIN_ENV),
            capture_output=True, text=True, timeout=timeout, cwd="/root")

    # -- taking it away --------------------------------------------------

    def _pids(self):
        """Processes still in the machine's mount namespace."""
        target = os.readlink("/proc/self/ns/mnt")
        found = []
        ours = set()
        if os.path.exists(self.mnt):
            ours.add(_run("stat", "-L", "-c", "%i", self.mnt,
                          check=False).stdout.strip())
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                link = os.readlink("/proc/%s/ns/mnt" % pid)
            except OSError:
                continue
            if link != target and link.strip("mnt:[]") in ours:
                found.append(int(pid))
        return found

    def destroy(self):
        """Whatever is left of it: its processes, namespaces, veth, files
        (the test runs clean.sh on it first; this is the backstop)."""
        for pid in self._pids():
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        _run("ip", "link", "del", self.veth, check=False)
        _run("ip", "netns", "del", self.netns, check=False)
        for path in (self.mnt, self.uts):
            _run("umount", path, check=False)
            if os.path.exists(path):
                os.unlink(path)
        if self._made_local_conf and os.path.exists(self.local_conf) and \
                os.path.getsize(self.local_conf) == 0:
            os.unlink(self.local_conf)
        shutil.rmtree(self.root, ignore_errors=True)
