"""The whole nova side plus Cinder, for real, once per test module.

``stack`` starts minicinder, miniapi and minicompute as subprocesses with
generated configs: real RabbitMQ (a control exchange unique to this run,
and a unique compute host name, so other engineers' daemons never receive
our messages), real SQLite files, real LVM/tgt volumes and real libvirt
guests booted from the registered guest image. ``guests`` boots two
servers once per module (TCG guests on 2 cores are precious); tests
attach and detach on them and must leave them as they found them.

Everything created is removed at the end even when a test fails: servers
(through the API, then any domain left over with virsh), volumes (their
attachments first), the volume type, and the daemons. The checks at the
end of the module assert nothing of ours is left (no domain, no LV, no
tgt target).
"""

import glob
import json
import os
import uuid

import pytest

from tests.functional import daemons
from tests.functional.minicompute import journey
from ministack import context
from ministack import exception as ms_exception
from ministack import executor

VG = os.environ.get("MINISTACK_VG", "stack-volumes-lvmdriver-1")
IMAGES_ROOT = os.environ.get("MINISTACK_IMAGES",
                             "/var/lib/ministack/images")
VIRT_TYPE_FILE = "/var/lib/ministack/virt_type"


def _lab_problems():
    """Why the lab cannot run these tests (empty list: it can)."""
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
        executor.execute("virsh", "-c", "qemu:///system", "version")
    except ms_exception.ProcessExecutionError:
        problems.append("libvirt qemu:///system is not reachable")
    return problems


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    problems = _lab_problems()
    if problems:
        pytest.skip("lab not up (run devstack/stack.sh): "
                    + "; ".join(problems))
    tmp = tmp_path_factory.mktemp("journey")
    state = tmp / "state"
    (state / "images").mkdir(parents=True)
    image_dir = sorted(glob.glob(os.path.join(IMAGES_ROOT, "*",
                                              "image.json")))[0]
    image = json.load(open(image_dir))
    os.symlink(os.path.dirname(image_dir), state / "images" / image["id"])
    run = uuid.uuid4().hex[:8]
    host = "fc-%s" % run
    # Other engineers' stacks share this libvirt with their own nova DBs
    # (ids from 1 too): our domains get names of their own.
    name_template = "instance-fc%s-%%08x" % run
    nova_db = "sqlite:///%s" % (tmp / "nova.sqlite")
    common = {"state_path": str(state), "my_ip": "127.0.0.1",
              "transport_url": daemons.RABBIT_URL,
              "control_exchange": "journey-%s" % run, "debug": "true"}
    virt_type = "qemu"
    if os.path.exists(VIRT_TYPE_FILE):
        virt_type = open(VIRT_TYPE_FILE).read().strip() or "qemu"
    started = []
    try:
        cinder = daemons.start_daemon(
            "minicinder", {
                "DEFAULT": dict(common, host="fcinder-%s" % run,
                                volume_group=VG,
                                volume_name_template="volume-fc%s-%%s" % run,
                                volume_clear="none"),
                "database": {"connection": "sqlite:///%s"
                             % (tmp / "cinder.sqlite")}},
            tmp / "cinder", ready=daemons.http_ready("/"),
            port_option=("DEFAULT", "osapi_volume_listen_port"))
        started.append(cinder)
        endpoint = cinder.url + "/v3/%(project_id)s"
        api = daemons.start_daemon(
            "miniapi", {
                "DEFAULT": dict(common, host="fapi-%s" % run),
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
                "compute": {"report_interval": 5},
                "libvirt": {"virt_type": virt_type,
                            "iscsi_initiator": "auto",
                            "device_detach_timeout": 15},
                "cinder": {"endpoint_template": endpoint}},
            tmp / "compute", ready=daemons.log_ready("serving topic"),
            timeout=90)
        started.append(compute)
        stack = {"cinder": journey.Cinder(cinder.url),
                 "nova": journey.Nova(api.url),
                 "probe": journey.Probe(nova_db, name_template),
                 "image": image,
                 "host": host, "run": run, "daemons": started,
                 "transport_url": daemons.RABBIT_URL,
                 "control_exchange": common["control_exchange"],
                 "nova_db": nova_db, "endpoint": endpoint}
        yield stack
        stack["probe"].close()
    finally:
        for daemon in reversed(started):
            daemon.stop()
        _remove_leftovers(run, str(state))


def _remove_leftovers(run, state):
    """Whatever a crashed test left: domains, LVs and targets of this run."""
    out, _ = executor.execute("virsh", "-c", "qemu:///system", "list",
                              "--all", "--name", check_exit_code=False)
    # Domains are instance-%08x of our own nova DB ids; the DB is gone, so
    # match by the instances directory under our state path instead.
    for name in out.split():
        xml, _ = executor.execute("virsh", "-c", "qemu:///system",
                                  "dumpxml", name, check_exit_code=False)
        if state in xml or name.startswith("instance-fc%s-" % run):
            executor.execute("virsh", "-c", "qemu:///system", "destroy",
                             name, check_exit_code=False)
            executor.execute("virsh", "-c", "qemu:///system", "undefine",
                             name, check_exit_code=False)
    out, _ = executor.execute("lvs", "--noheadings", "-o", "lv_name", VG,
                              check_exit_code=False)
    for lv in out.split():
        if "fc%s" % run in lv:
            executor.execute("lvremove", "-f", "%s/%s" % (VG, lv),
                             check_exit_code=False)


@pytest.fixture(scope="module")
def guests(stack):
    """Two ACTIVE servers on our compute host, deleted at module end."""
    nova = stack["nova"]
    flavor = _smallest_flavor(nova)
    ids = []
    try:
        for i in range(2):
            ids.append(nova.create_server(
                journey.unique("fc%s-vm%d" % (stack["run"], i)),
                stack["image"]["id"], flavor))
        yield ids
    finally:
        for sid in ids:
            nova.delete_server(sid)
        for sid in ids:
            try:
                nova.wait_server(sid, "DELETED", timeout=120)
            except journey.TimedOut:
                pass


def _smallest_flavor(nova):
    resp = nova.req("GET", "/flavors/detail")
    assert resp.status_code == 200, resp.text
    flavors = sorted(resp.json()["flavors"], key=lambda f: f["ram"])
    return flavors[0]["id"]


@pytest.fixture
def volumes(stack):
    """Factory of volumes that are force-removed after the test."""
    cinder = stack["cinder"]
    made = []

    def make(name="vol", volume_type=None, size=1):
        journey.wait_for_vg_space(VG, size)
        vid = cinder.create_volume(journey.unique(name), size=size,
                                   volume_type=volume_type)
        made.append(vid)
        return vid

    yield make
    for vid in made:
        cinder.force_cleanup(vid)


@pytest.fixture(scope="module")
def multiattach_type(stack):
    """A volume type with multiattach="<is> True" (deleted at the end)."""
    cinder = stack["cinder"]
    type_id = cinder.create_type(journey.unique("multi"), multiattach=True)
    yield type_id
    cinder.delete_type(type_id)


@pytest.fixture
def admin_ctxt():
    return context.RequestContext(user_id="admin", project_id=journey.PROJECT,
                                  roles=["admin"])
