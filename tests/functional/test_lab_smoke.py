"""Lab smoke test: the attach journey's moving parts, all real, by hand.

Without any ministack daemon, this drives the pieces the services are
built on, in the order an attach uses them:

1. boot the guest image under libvirt (transient domain, qcow2 overlay);
2. carve a contiguous LV in the lab's volume group and get a block device
   for it (``minicinder.volume.drivers.lvm``);
3. export it with tgt, CHAP and an initiator-name ACL
   (``minicinder.volume.targets.tgt``);
4. hot-plug it into the running guest through QEMU's own iSCSI
   initiator, the CHAP password in a libvirt secret
   (``minicompute.virt.libvirt.config``);
5. inside the guest, through the guest agent
   (``minicompute.virt.libvirt.guest_agent``): see ``vdb`` with the right
   size and serial, write a pattern with ``dd`` and read it back (and
   find it on the host side of the LV too);
6. hot-unplug it and see it disappear in the guest and in libvirt;
7. tear everything down and check that nothing is left.

Every resource is registered for cleanup right after it is created, so
a failure at any step still removes the domain, secret, target, loop
device, LV and overlay.

Needs the lab from ``devstack/stack.sh`` (root, libvirtd, tgtd, the VG,
the guest image). Without it the test is skipped, unless
``MINISTACK_REQUIRE_LAB=1`` (CI) turns that into a failure.
"""

import os
import secrets
import shutil
import tempfile
import time
import uuid

import pytest

from ministack import images
from tests.support import daemons
from tests.support import waiting

libvirt = pytest.importorskip("libvirt")

from minicinder.volume.drivers import lvm as lvm_adapter  # noqa: E402
from minicinder.volume.targets import tgt as tgt_adapter  # noqa: E402
from minicompute.virt.libvirt import config  # noqa: E402
from minicompute.virt.libvirt import guest_agent  # noqa: E402
from minicompute.virt.libvirt import instance_files  # noqa: E402

URI = os.environ.get("MINISTACK_LIBVIRT_URI", "qemu:///system")
STATE_DIR = os.environ.get("MINISTACK_STATE_DIR", "/var/lib/ministack")
VOLUME_GROUP = os.environ.get("MINISTACK_VOLUME_GROUP",
                              "stack-volumes-lvmdriver-1")
IMAGE = os.environ.get("MINISTACK_IMAGE", "ministack-guest")
PORTAL = (daemons.PORTAL_IP,
          int(os.environ.get("MINISTACK_ISCSI_PORT", "3260")))
IQN_PREFIX = "iqn.2010-10.org.openstack:volume-"

BOOT_TIMEOUT = 180      # TCG on a busy 2-core CI machine
DEVICE_TIMEOUT = 60     # hot-plug / hot-unplug seen by the guest
GiB = 1024 ** 3


class Cleanups:
    """Undo steps, run in reverse order; every step runs even if one fails."""

    def __init__(self):
        self._steps = []

    def add(self, description, fn, *args):
        self._steps.append((description, fn, args))

    def run(self):
        errors = []
        while self._steps:
            description, fn, args = self._steps.pop()
            try:
                fn(*args)
            except Exception as exc:  # noqa: BLE001 - report them all
                errors.append("%s: %r" % (description, exc))
        assert not errors, "cleanup failed: %s" % "; ".join(errors)


def _lab_problem():
    """Why the lab is not usable here, or None."""
    if os.geteuid() != 0:
        return "needs root"
    try:
        libvirt.open(URI).close()
    except libvirt.libvirtError as exc:
        return "libvirtd not reachable at %s: %s" % (URI, exc)
    try:
        images.get_image(IMAGE, root=os.path.join(STATE_DIR, "images"))
    except images.ImageNotFound:
        return "guest image %s not built" % IMAGE
    try:
        lvm_adapter.LVM(VOLUME_GROUP).list_volumes()
        tgt_adapter.TgtAdm().show_targets()
    except Exception as exc:  # noqa: BLE001 - any reason means "no lab"
        return "VG %s or tgtd not available: %s" % (VOLUME_GROUP, exc)
    return None


@pytest.fixture(scope="module")
def lab():
    problem = _lab_problem()
    if problem:
        message = "lab from devstack/stack.sh not available: " + problem
        if os.environ.get("MINISTACK_REQUIRE_LAB"):
            pytest.fail(message)
        pytest.skip(message)
    # libvirt prints every error to stderr; the ones we expect (agent not
    # connected yet) would drown the useful output.
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    conn = libvirt.open(URI)
    yield conn
    conn.close()


@pytest.fixture
def cleanups():
    steps = Cleanups()
    yield steps
    steps.run()


def wait_until(predicate, timeout, what, interval=0.3):
    """Poll ``predicate`` until true; fail naming ``what`` on timeout."""
    try:
        waiting.wait_for(what, predicate, timeout=timeout,
                         interval=interval)
    except waiting.WaitTimeout:
        pytest.fail("%s not seen within %ss" % (what, timeout))
    return True


def guest_run(domain, *argv, **kwargs):
    """Run argv in the guest; fail the test on a non-zero exit."""
    code, out, err = guest_agent.guest_exec(domain, list(argv), **kwargs)
    assert code == 0, "%s exited %s: %r" % (argv, code, err)
    return out


def guest_has(domain, dev):
    code, _, _ = guest_agent.guest_exec(domain, ["test", "-e",
                                                 "/sys/block/" + dev])
    return code == 0


def virt_type():
    try:
        with open(os.path.join(STATE_DIR, "virt_type")) as f:
            return f.read().strip() or "qemu"
    except FileNotFoundError:
        return "qemu"


def _destroy(conn, name):
    try:
        conn.lookupByName(name).destroy()
    except libvirt.libvirtError as exc:
        if exc.get_error_code() != libvirt.VIR_ERR_NO_DOMAIN:
            raise


def _detach_if_attached(domain, disk_xml, dev):
    try:
        if dev in config.disk_target_devs(domain.XMLDesc()):
            domain.detachDeviceFlags(disk_xml, libvirt.VIR_DOMAIN_AFFECT_LIVE)
    except libvirt.libvirtError as exc:
        if exc.get_error_code() != libvirt.VIR_ERR_NO_DOMAIN:
            raise


def test_iscsi_volume_hotplug_round_trip(lab, cleanups):
    """A CHAP-protected LV hot-plugs into a live guest as vdb, carries data,
    hot-unplugs, and every resource is gone afterwards."""
    conn = lab
    timings = {}
    suffix = uuid.uuid4().hex[:8]
    name = "ministack-smoke-" + suffix
    volume_id = str(uuid.uuid4())
    lv_name = "smoke-" + volume_id
    iqn = IQN_PREFIX + "smoke-" + volume_id
    initiator = "iqn.1994-05.org.ministack:smoke-" + suffix
    chap_user, chap_password = "smoke" + suffix, secrets.token_hex(8)
    secret_usage = "ministack-smoke-" + suffix
    image = images.get_image(IMAGE, root=os.path.join(STATE_DIR, "images"))

    # 1. Boot. The work dir sits in the lab's state dir, not a 0700 /tmp
    # dir, so QEMU could read it even if it ran unprivileged.
    tmp_root = os.path.join(STATE_DIR, "tmp")
    os.makedirs(tmp_root, exist_ok=True)
    work_dir = tempfile.mkdtemp(prefix="smoke-%s-" % suffix, dir=tmp_root)
    cleanups.add("remove work dir", shutil.rmtree, work_dir)
    os.chmod(work_dir, 0o755)
    files = instance_files.create_boot_files(image, work_dir)
    xml = config.domain_xml(
        name, str(uuid.uuid4()), kernel=files["kernel"],
        initrd=files["initrd"], cmdline=image["cmdline"],
        root_disk=files["disk"],
        virt_type=virt_type(),
        console_log=os.path.join(work_dir, "console.log"))
    start = time.monotonic()
    domain = conn.createXML(xml, 0)
    cleanups.add("destroy domain", _destroy, conn, name)
    guest_agent.wait_for_agent(domain, BOOT_TIMEOUT)
    timings["boot_to_agent"] = time.monotonic() - start
    assert not guest_has(domain, "vdb"), "fresh guest already has vdb"

    # 2. The volume and a block device for it.
    lvm = lvm_adapter.LVM(VOLUME_GROUP)
    lvm.create_volume(lv_name, 1)
    cleanups.add("delete LV", lvm.delete_volume, lv_name)
    device = lvm.get_device_path(lv_name)
    cleanups.add("release LV device", lvm.release_device, lv_name)
    extent_range = None if lvm.device_mapper else lvm.extent_range(lv_name)

    # 3. The export: CHAP + initiator-name ACL.
    tgt = tgt_adapter.TgtAdm()
    tgt.create_target(iqn, device, chap=(chap_user, chap_password),
                      initiators=[initiator])
    cleanups.add("delete target", tgt.delete_target, iqn)
    target = tgt.find_target(iqn)
    assert target["acls"] == [initiator]
    assert target["accounts"] == [chap_user]
    assert [lun["backing_store"] for lun in target["luns"]] == [None, device]

    # 4. The CHAP secret, then the hot-plug through QEMU's initiator.
    secret = conn.secretDefineXML(config.iscsi_secret_xml(
        secret_usage, description="ministack smoke test"))
    cleanups.add("undefine secret", secret.undefine)
    secret.setValue(chap_password.encode())
    disk_xml = config.iscsi_disk_xml(
        "vdb", iqn=iqn, lun=1, host=PORTAL[0], port=PORTAL[1],
        serial=volume_id, initiator_iqn=initiator, auth_username=chap_user,
        secret_usage=secret_usage)
    start = time.monotonic()
    domain.attachDeviceFlags(disk_xml, libvirt.VIR_DOMAIN_AFFECT_LIVE)
    cleanups.add("detach disk", _detach_if_attached, domain, disk_xml, "vdb")
    wait_until(lambda: guest_has(domain, "vdb"), DEVICE_TIMEOUT,
               "vdb in the guest")
    timings["hotplug"] = time.monotonic() - start
    sessions = tgt.find_target(iqn)["sessions"]
    assert [s["initiator"] for s in sessions] == [initiator]

    # 5. Inside the guest: size, serial (virtio-blk keeps 20 characters),
    # lsblk, then data through dd.
    sectors = int(guest_run(domain, "cat", "/sys/block/vdb/size"))
    assert sectors * 512 == 1 * GiB
    assert guest_run(domain, "cat", "/sys/block/vdb/serial").strip() \
        == volume_id[:20]
    assert "vdb" in guest_run(domain, "lsblk")
    # 256 KiB at 1 MiB (away from sector 0), written in two commands: the
    # agent takes at most guest_agent.MAX_INPUT_BYTES of input per command.
    pattern = os.urandom(256 * 1024)
    offset = 1024 * 1024
    for i, seek in enumerate((16, 18)):     # in 64 KiB blocks
        chunk = pattern[i * 128 * 1024:(i + 1) * 128 * 1024]
        guest_run(domain, "dd", "of=/dev/vdb", "bs=64k", "seek=%d" % seek,
                  "iflag=fullblock", "oflag=direct", "conv=fsync,notrunc",
                  input_data=chunk)
    read_back = guest_run(domain, "dd", "if=/dev/vdb", "bs=64k", "skip=16",
                          "count=4", "iflag=direct", text=False)
    assert read_back == pattern
    # The same bytes are on the LV's host device: the data really went
    # guest -> QEMU libiscsi -> tgtd -> LV.
    with open(device, "rb") as f:
        f.seek(offset)
        assert f.read(len(pattern)) == pattern

    # 6. Hot-unplug.
    start = time.monotonic()
    domain.detachDeviceFlags(disk_xml, libvirt.VIR_DOMAIN_AFFECT_LIVE)
    wait_until(lambda: not guest_has(domain, "vdb"), DEVICE_TIMEOUT,
               "vdb gone from the guest")
    wait_until(lambda: "vdb" not in config.disk_target_devs(
        domain.XMLDesc()), DEVICE_TIMEOUT, "vdb gone from the domain XML")
    wait_until(lambda: not tgt.find_target(iqn)["sessions"], DEVICE_TIMEOUT,
               "QEMU's iSCSI session logged out")
    timings["hotunplug"] = time.monotonic() - start
    assert "vdb" not in guest_run(domain, "lsblk")

    # 7. Tear down now (not at fixture teardown) so leaks can be checked.
    cleanups.run()
    names = [d.name() for d in conn.listAllDomains()]
    assert name not in names
    with pytest.raises(libvirt.libvirtError):
        conn.secretLookupByUsage(libvirt.VIR_SECRET_USAGE_TYPE_ISCSI,
                                 secret_usage)
    assert tgt.find_target(iqn) is None
    assert chap_user not in tgt.list_accounts()
    assert not lvm.volume_exists(lv_name)
    if extent_range is not None:
        assert lvm.find_loops(*extent_range) == []
    assert not os.path.exists(work_dir)
    print("timings: " + ", ".join("%s %.1fs" % kv for kv in timings.items()))
