"""A real stack tuned for fault tests, and the audit every test ends with.

Same daemons as tests/functional/minicompute (real RabbitMQ, SQLite,
LVM/tgt, libvirt), with settings that make faults quick to observe:

* miniapi's ``rpc_call_timeout`` is 8 s (recovery path 3);
* minicinder checks its exports every 2 s (rebuilt after a tgtd restart);
* the RPC queues are durable (ministack's default ``amqp_durable_queues``);
* minicompute detaches with 2 attempts of 4 s (path 4), gives Cinder
  10 s per request with one retry, reconciles every 3 s with a 10 s
  grace, and has the test-only fault injection ON (paths 1 and 2; it only
  fires for volumes named ``inject-fault-<point>``).

One guest for the whole module (2 cores): every test leaves it with only
its root disk. ``audit_clean`` runs ``ministack-audit --json`` on this
stack's configs and checks that nothing of ours leaked.
"""

import glob
import json
import os
import subprocess
import uuid

import pytest

from tests.functional import daemons
from tests.functional.minicompute import conftest as mc
from tests.functional.minicompute import journey

VG = mc.VG


class Stack(dict):
    """The daemons plus helpers to fault them."""

    def restart(self, name, timeout=90):
        """Start daemon ``name`` again with its config (after a stop)."""
        old = self[name]
        ready = daemons.log_ready("serving topic") if name == "compute" \
            else daemons.http_ready("/")
        marker = len(old.log())
        out = open(old.log_path + ".stdout", "a")
        import subprocess as sp
        proc = sp.Popen([daemons.binary_path(old.name), "--config-file",
                         old.conf_path], stdout=out, stderr=sp.STDOUT,
                        start_new_session=True)
        out.close()
        new = daemons.Daemon(old.name, proc, old.conf_path, old.log_path,
                             old.port)
        if name == "compute":
            journey.wait_for("%s ready" % name,
                             lambda: "serving topic" in new.log()[marker:],
                             timeout=timeout)
        else:
            journey.wait_for("%s ready" % name, lambda: ready(new),
                             timeout=timeout)
        self[name] = new
        return new

    def audit(self, *extra):
        """``ministack-audit --json`` on this stack: (rc, report)."""
        proc = subprocess.run(
            [daemons.binary_path("ministack-audit"), "--json",
             "--own-loops-only", "--compute-config",
             self["compute"].conf_path, "--cinder-config",
             self["cinder"].conf_path, *extra],
            capture_output=True, text=True, timeout=300)
        assert proc.returncode != 3, proc.stderr
        return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    problems = mc._lab_problems()
    if problems:
        pytest.skip("lab not up (run devstack/stack.sh): "
                    + "; ".join(problems))
    tmp = tmp_path_factory.mktemp("recovery")
    state = tmp / "state"
    (state / "images").mkdir(parents=True)
    image_json = sorted(glob.glob(os.path.join(mc.IMAGES_ROOT, "*",
                                               "image.json")))[0]
    image = json.load(open(image_json))
    os.symlink(os.path.dirname(image_json), state / "images" / image["id"])
    run = uuid.uuid4().hex[:8]
    host = "rc-%s" % run
    name_template = "instance-rc%s-%%08x" % run
    nova_db = "sqlite:///%s" % (tmp / "nova.sqlite")
    common = {"state_path": str(state), "my_ip": "127.0.0.1",
              "transport_url": daemons.RABBIT_URL,
              "control_exchange": "recovery-%s" % run, "debug": "true"}
    virt_type = "qemu"
    if os.path.exists(mc.VIRT_TYPE_FILE):
        virt_type = open(mc.VIRT_TYPE_FILE).read().strip() or "qemu"
    stack = Stack(run=run, host=host, image=image, nova_db=nova_db,
                  name_template=name_template, state=str(state))
    started = []
    try:
        cinder = daemons.start_daemon(
            "minicinder", {
                "DEFAULT": dict(common, host="rcinder-%s" % run,
                                volume_group=VG,
                                volume_name_template="volume-rc%s-%%s" % run,
                                volume_clear="none",
                                export_check_interval=2),
                "database": {"connection": "sqlite:///%s"
                             % (tmp / "cinder.sqlite")}},
            tmp / "cinder", ready=daemons.http_ready("/"),
            port_option=("DEFAULT", "osapi_volume_listen_port"))
        started.append(cinder)
        endpoint = cinder.url + "/v3/%(project_id)s"
        api = daemons.start_daemon(
            "miniapi", {
                "DEFAULT": dict(common, host="rapi-%s" % run,
                                rpc_call_timeout=8),
                "database": {"connection": nova_db},
                "api": {"listen": "127.0.0.1"},
                "cinder": {"endpoint_template": endpoint}},
            tmp / "api", ready=daemons.http_ready("/"),
            port_option=("api", "listen_port"))
        started.append(api)
        compute = daemons.start_daemon(
            "minicompute", {
                "DEFAULT": dict(common, host=host,
                                instance_name_template=name_template),
                "database": {"connection": nova_db},
                "compute": {"report_interval": 5, "reconcile_interval": 3,
                            "reconcile_grace": 10},
                "libvirt": {"virt_type": virt_type,
                            "iscsi_initiator": "auto",
                            "device_detach_attempts": 2,
                            "device_detach_timeout": 4},
                "cinder": {"endpoint_template": endpoint,
                           "http_timeout": 10, "http_retries": 1},
                "fault_injection": {"enabled": "true"}},
            tmp / "compute", ready=daemons.log_ready("serving topic"),
            timeout=90)
        started.append(compute)
        stack.update(cinder=cinder, api=api, compute=compute,
                     cinder_api=journey.Cinder(cinder.url),
                     nova=journey.Nova(api.url),
                     probe=journey.Probe(nova_db, name_template))
        yield stack
        stack["probe"].close()
    finally:
        for name in ("compute", "api", "cinder"):
            daemon = stack.get(name)
            if daemon is not None:
                try:
                    os.kill(daemon.pid, 18)  # SIGCONT: a test may have
                except OSError:              # left it stopped
                    pass
                daemon.stop()
        for daemon in started:
            daemon.stop()
        mc._remove_leftovers(run, str(state))
        _remove_targets(run)


def _remove_targets(run):
    from minicinder.volume import tgt
    adm = tgt.TgtAdm()
    for target in adm.show_targets():
        if "volume-rc%s-" % run in target["iqn"]:
            adm.delete_target(target["iqn"])


@pytest.fixture(scope="module")
def guest(stack):
    """One ACTIVE server on our compute host, deleted at module end."""
    nova = stack["nova"]
    flavor = mc._smallest_flavor(nova)
    sid = nova.create_server(journey.unique("rc%s-vm" % stack["run"]),
                             stack["image"]["id"], flavor)
    try:
        yield sid
    finally:
        nova.delete_server(sid)
        try:
            nova.wait_server(sid, "DELETED", timeout=120)
        except journey.TimedOut:
            pass


@pytest.fixture
def volumes(stack):
    """Factory of volumes force-removed after the test."""
    cinder = stack["cinder_api"]
    made = []

    def make(name="vol"):
        journey.wait_for_vg_space(VG, 1)
        vid = cinder.create_volume(journey.unique(name), size=1)
        made.append(vid)
        return vid

    yield make
    for vid in made:
        cinder.force_cleanup(vid)
