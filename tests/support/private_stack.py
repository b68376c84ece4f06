"""One private ministack (minicinder, miniapi, minicompute) for a test module.

The suites that need the whole attach path (``minicompute``, ``recovery``,
``clients``) each run a stack of their own next to the deployed lab and
next to each other, on the lab's broker, LVM volume group, tgtd and
libvirt. What keeps them apart is a run id and a short prefix, from which
every shared name is made:

* RPC: ``control_exchange = <prefix>-<run>`` and compute host
  ``<prefix>-<run>`` (so nobody else's daemons receive our messages);
* libvirt: domains ``instance-<prefix><run>-%08x`` (every nova DB counts
  instance ids from 1);
* LVM and tgt: volumes ``volume-<prefix><run>-<uuid>`` (LV and target
  names);
* files: a state directory under the test's tmp path, with the lab's
  guest image linked into it; the instance directories under the lab's
  ``/var/lib/ministack/tmp``, because QEMU runs as ``libvirt-qemu`` and
  cannot traverse pytest's private (0700) tmp directories.

:class:`PrivateStack` builds the daemons' config sections from those names
(callers add or override options per section), starts the daemons, and
:meth:`PrivateStack.cleanup` stops them and removes whatever of this run a
failed test left behind: domains, LVs (and their loop devices), targets.
A run that was killed cleans nothing: :func:`sweep` (``python -m
tests.support.private_stack``, which ``run_tests.sh`` runs before the
lab's tiers) removes the stacks whose test run is gone.

Usage::

    ps = PrivateStack(tmp_path_factory.mktemp("x"), "fc")
    try:
        cinder = ps.start_cinder()
        api = ps.start_api(cinder)
        compute = ps.start_compute(cinder, {"compute": {...}})
        ...
    finally:
        ps.cleanup()
"""

import contextlib
import glob
import json
import os
import re
import shutil
import signal
import tempfile
import time
import uuid

import pytest

from ministack import exception as ms_exception
from ministack import executor
from tests.support import daemons
from tests.support import journey
from tests.support import waiting

VG = os.environ.get("MINISTACK_VG", "stack-volumes-lvmdriver-1")
IMAGES_ROOT = os.environ.get("MINISTACK_IMAGES",
                             "/var/lib/ministack/images")
VIRT_TYPE_FILE = "/var/lib/ministack/virt_type"
LAB_DATA_DIR = os.path.dirname(VIRT_TYPE_FILE)
LIBVIRT_URI = "qemu:///system"
#: In a private stack's instances directory: the PID of the test run
#: that made it (a killed run's leftovers are swept: sweep()).
OWNER_FILE = "owner.pid"
#: A private stack's domain: instance-<prefix><run>-%08x.
_TAGGED_DOMAIN = re.compile(r"^instance-([a-z]+[0-9a-f]{8})-[0-9a-f]{8}$")


def lab_problems():
    """Why the lab cannot run a private stack (empty list: it can)."""
    problems = []
    import kombu
    try:
        with kombu.Connection(daemons.RABBIT_URL.replace("rabbit://",
                                                         "amqp://"),
                              connect_timeout=3) as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
    except Exception as exc:  # kombu raises many socket errors
        problems.append("broker %s unreachable: %s"
                        % (daemons.RABBIT_URL, exc))
    try:
        executor.execute("vgs", VG)
    except ms_exception.ProcessExecutionError:
        problems.append("volume group %s is missing" % VG)
    if not glob.glob(os.path.join(IMAGES_ROOT, "*", "image.json")):
        problems.append("no guest image registered under %s" % IMAGES_ROOT)
    try:
        executor.execute("virsh", "-c", LIBVIRT_URI, "version")
    except ms_exception.ProcessExecutionError:
        problems.append("libvirt %s is not reachable" % LIBVIRT_URI)
    return problems


def skip_unless_lab():
    problems = lab_problems()
    if problems:
        pytest.skip("lab not up (run devstack/stack.sh): "
                    + "; ".join(problems))


def virt_type():
    """The virt type devstack probed for this machine (qemu by default)."""
    if os.path.exists(VIRT_TYPE_FILE):
        with open(VIRT_TYPE_FILE) as handle:
            return handle.read().strip() or "qemu"
    return "qemu"


def merge(base, overrides):
    """``{section: {option: value}}`` with ``overrides`` laid over base."""
    out = {section: dict(values) for section, values in base.items()}
    for section, values in (overrides or {}).items():
        out.setdefault(section, {}).update(values)
    return out


def smallest_flavor(nova):
    """The id of the flavor with the least RAM (TCG guests are slow)."""
    resp = nova.req("GET", "/flavors/detail")
    assert resp.status_code == 200, resp.text
    flavors = sorted(resp.json()["flavors"], key=lambda f: f["ram"])
    return flavors[0]["id"]


@contextlib.contextmanager
def servers(nova, image_id, name_prefix, count):
    """``count`` ACTIVE servers (ids) of the smallest flavor, deleted, and
    waited for, on exit."""
    flavor = smallest_flavor(nova)
    ids = []
    try:
        for i in range(count):
            ids.append(nova.create_server(
                journey.unique("%s-vm%d" % (name_prefix, i)), image_id,
                flavor))
        yield ids
    finally:
        for sid in ids:
            nova.delete_server(sid)
        for sid in ids:
            try:
                nova.wait_server(sid, "DELETED", timeout=120)
            except waiting.WaitTimeout:
                pass


@contextlib.contextmanager
def volume_factory(cinder):
    """``make(name, volume_type=None, size=1)`` -> a new available
    volume's id; every volume made is force-removed on exit."""
    made = []

    def make(name="vol", volume_type=None, size=1):
        journey.wait_for_vg_space(VG, size)
        vid = cinder.create_volume(journey.unique(name), size=size,
                                   volume_type=volume_type)
        made.append(vid)
        return vid

    try:
        yield make
    finally:
        for vid in made:
            cinder.force_cleanup(vid)


class PrivateStack:
    """The names, configs and daemons of one private stack."""

    def __init__(self, tmp, prefix):
        self.tmp = tmp
        self.prefix = prefix
        self.run = uuid.uuid4().hex[:8]
        self.tag = "%s%s" % (prefix, self.run)
        self.host = "%s-%s" % (prefix, self.run)
        self.name_template = "instance-%s-%%08x" % self.tag
        self.volume_template = "volume-%s-%%s" % self.tag
        self.nova_db = "sqlite:///%s" % (tmp / "nova.sqlite")
        self.cinder_db = "sqlite:///%s" % (tmp / "cinder.sqlite")
        self.state = tmp / "state"
        (self.state / "images").mkdir(parents=True)
        record = sorted(glob.glob(os.path.join(IMAGES_ROOT, "*",
                                               "image.json")))[0]
        with open(record) as handle:
            self.image = json.load(handle)
        os.symlink(os.path.dirname(record),
                   self.state / "images" / self.image["id"])
        self.instances = self._instances_dir()
        self.started = []

    def _instances_dir(self):
        """This run's instances_path, where QEMU can reach it: in the lab's
        state directory (group libvirt-qemu), mode 0750, like the lab's
        own instances directory."""
        lab_tmp = os.path.join(LAB_DATA_DIR, "tmp")
        os.makedirs(lab_tmp, exist_ok=True)
        path = tempfile.mkdtemp(prefix="instances-%s-" % self.tag,
                                dir=lab_tmp)
        with open(os.path.join(path, OWNER_FILE), "w") as handle:
            handle.write(str(os.getpid()))      # stale_tags reads it
        os.chown(path, -1, os.stat(LAB_DATA_DIR).st_gid)
        os.chmod(path, 0o750)
        return path

    def common(self, **extra):
        """``[DEFAULT]`` options every daemon of the stack shares."""
        return dict({"state_path": str(self.state), "my_ip": "127.0.0.1",
                     "transport_url": daemons.RABBIT_URL,
                     "control_exchange": "%s-%s" % (self.prefix, self.run),
                     "debug": "true"}, **extra)

    def cinder_sections(self, overrides=None):
        return merge({
            "DEFAULT": self.common(
                host="%scinder-%s" % (self.prefix, self.run),
                target_ip_address=daemons.PORTAL_IP,
                volume_group=VG, volume_name_template=self.volume_template,
                volume_clear="none"),
            "database": {"connection": self.cinder_db}}, overrides)

    def api_sections(self, cinder_endpoint, overrides=None):
        return merge({
            "DEFAULT": self.common(host="%sapi-%s" % (self.prefix, self.run)),
            "database": {"connection": self.nova_db},
            # The images the compute host boots and registers (a shelve's
            # snapshot), as the lab's miniapi and minicompute share one.
            "api": {"listen": "127.0.0.1",
                    "image_dir": str(self.state / "images")},
            "cinder": {"endpoint_template": cinder_endpoint}}, overrides)

    def compute_sections(self, cinder_endpoint, overrides=None):
        return merge({
            "DEFAULT": self.common(host=self.host,
                                   instance_name_template=self.name_template),
            "database": {"connection": self.nova_db},
            "compute": {"report_interval": 5,
                        "instances_path": self.instances},
            "libvirt": {"virt_type": virt_type(),
                        "iscsi_initiator": "auto",
                        "device_detach_timeout": 15},
            "cinder": {"endpoint_template": cinder_endpoint}}, overrides)

    def started_daemon(self, daemon):
        """Record a daemon started elsewhere, so cleanup stops it."""
        self.started.append(daemon)
        return daemon

    def start_cinder(self, overrides=None):
        return self.started_daemon(daemons.start_daemon(
            "minicinder", self.cinder_sections(overrides),
            self.tmp / "cinder", ready=daemons.http_ready("/"),
            port_option=("DEFAULT", "osapi_volume_listen_port")))

    @staticmethod
    def endpoint(cinder):
        return cinder.url + "/v3/%(project_id)s"

    def start_api(self, cinder, overrides=None):
        return self.started_daemon(daemons.start_daemon(
            "miniapi", self.api_sections(self.endpoint(cinder), overrides),
            self.tmp / "api", ready=daemons.http_ready("/"),
            port_option=("api", "listen_port")))

    def start_page(self, sections):
        """ministack-course (the journey page) on ``sections``' [profiler]
        store, on a free [trace] listen_port."""
        return self.started_daemon(daemons.start_daemon(
            "ministack-course", sections, self.tmp / "page",
            ready=daemons.http_ready("/trace/"),
            port_option=("trace", "listen_port")))

    def start_compute(self, cinder_endpoint, overrides=None):
        return self.started_daemon(daemons.start_daemon(
            "minicompute",
            self.compute_sections(cinder_endpoint, overrides),
            self.tmp / "compute", ready=daemons.log_ready("serving topic"),
            timeout=90))

    def cleanup(self, extra_daemons=()):
        """Stop every daemon (SIGCONT first: a fault test may have left
        one stopped), then remove what this run left behind."""
        for daemon in list(extra_daemons) + list(reversed(self.started)):
            try:
                os.kill(daemon.pid, signal.SIGCONT)
            except OSError:
                pass
            daemon.stop()
        self.remove_leftovers()

    def remove_leftovers(self):
        """Domains, targets and LVs (with their loops) of this run."""
        remove_tagged(self.tag, (str(self.state), self.instances))


def remove_tagged(tag, paths=()):
    """The domains (named with ``tag``, or whose XML names one of
    ``paths``), targets, LVs and instances directories of the private
    stack ``tag``."""
    virsh = ("virsh", "-c", LIBVIRT_URI)
    out, _ = executor.execute(*virsh, "list", "--all", "--name",
                              check_exit_code=False)
    for name in out.split():
        xml, _ = executor.execute(*virsh, "dumpxml", name,
                                  check_exit_code=False)
        if any(path in xml for path in paths) or \
                name.startswith("instance-%s-" % tag):
            executor.execute(*virsh, "destroy", name, check_exit_code=False)
            executor.execute(*virsh, "undefine", name, check_exit_code=False)
    from minicinder.volume.drivers import lvm
    from minicinder.volume.targets import tgt
    adm = tgt.TgtAdm()
    for target in adm.show_targets():
        if "volume-%s-" % tag in target["iqn"]:
            adm.delete_target(target["iqn"])
    out, _ = executor.execute("lvs", "--noheadings", "-o", "lv_name",
                              VG, check_exit_code=False)
    for lv in out.split():
        if lv.startswith("volume-%s-" % tag):
            lvm.LVM(VG).delete_volume(lv)
    for path in glob.glob(os.path.join(LAB_DATA_DIR, "tmp",
                                       "instances-%s-*" % tag)):
        shutil.rmtree(path, ignore_errors=True)


def _owner_alive(instances_dir):
    try:
        with open(os.path.join(instances_dir, OWNER_FILE)) as handle:
            os.kill(int(handle.read()), 0)
    except (OSError, ValueError):
        return False
    return True


def stale_tags():
    """The private stacks a killed test run left behind: an instances
    directory whose owner (the pytest process that made it) is gone, or
    a domain of a stack's name template without a live directory."""
    live, stale = set(), set()
    for path in glob.glob(os.path.join(LAB_DATA_DIR, "tmp", "instances-*")):
        tag = os.path.basename(path).split("-")[1]
        (live if _owner_alive(path) else stale).add(tag)
    out, _ = executor.execute("virsh", "-c", LIBVIRT_URI, "list", "--all",
                              "--name", check_exit_code=False)
    for name in out.split():
        match = _TAGGED_DOMAIN.match(name)
        if match and match.group(1) not in live:
            stale.add(match.group(1))
    return sorted(stale - live)


def _orphaned_daemons():
    """PIDs of private stacks' daemons whose test run is gone: a
    minicinder, miniapi or minicompute with a config outside
    /etc/ministack (the lab's) and no parent left (PPid 1)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                argv = handle.read().decode(errors="replace").split("\0")
            with open("/proc/%s/status" % entry) as handle:
                ppid = [line.split()[1] for line in handle
                        if line.startswith("PPid:")][0]
        except (OSError, IndexError):
            continue            # gone meanwhile, or a kernel thread
        if ppid != "1" or "--config-file" not in argv or len(argv) < 2:
            continue
        conf = argv[argv.index("--config-file") + 1:][:1]
        if os.path.basename(argv[1]) in ("minicinder", "miniapi",
                                         "minicompute") and \
                conf and not conf[0].startswith("/etc/ministack/"):
            pids.append(int(entry))
    return pids


def _stop(pids, timeout=20):
    for sig in (signal.SIGCONT, signal.SIGTERM):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if os.path.exists("/proc/%d" % pid)]
        time.sleep(0.2)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def sweep():
    """Stop the daemons of private stacks whose test run is gone, then
    remove every stale private stack; returns their tags."""
    _stop(_orphaned_daemons())
    tags = stale_tags()
    for tag in tags:
        remove_tagged(tag, glob.glob(os.path.join(
            LAB_DATA_DIR, "tmp", "instances-%s-*" % tag)))
    return tags


if __name__ == "__main__":
    # run_tests.sh, before the lab's tiers: what a killed run left.
    for tag in sweep():
        print("   removed what a killed test run left of private stack %s"
              % tag)
