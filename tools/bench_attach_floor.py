"""The raw floor of tools/bench_attach.py: the same disk, by hand.

:class:`Floor` attaches the same kind of disk the stack attaches -- an LV,
a tgt target with CHAP and an initiator ACL, a libvirt CHAP secret and
``attachDevice`` of the QEMU iSCSI network disk -- with the project's
adapters (:class:`minicinder.volume.drivers.lvm.LVM`,
:class:`minicinder.volume.targets.tgt.TgtAdm` over tgtd's socket, as minicinder
drives it, the libvirt XML builders of
``minicompute.virt.libvirt.config``) into a guest booted from the same
image and flavor, outside nova (its domain name does not match
``instance_name_template``, so neither the reconciler nor the audit looks
at it). Nothing on its path waits for anything correctness does not need:
it is what the hardware and the components cost.

On a lab of several compute hosts the bench hands it the connection to
the libvirtd of the host it runs on (``bench_attach_hosts``), the portal
the lab's tgtd listens on and the initiator name its disks present: its
guest, secrets and iSCSI logins are then that host's.
"""

import os
import secrets
import shutil
import tempfile
import time
import uuid

import libvirt

from bench_attach_hosts import DEFAULT_PORTAL
from bench_attach_probes import STATE_DIR
from bench_attach_probes import GuestWaiter
from minicinder.volume.drivers import lvm
from minicinder.volume.targets import tgt
from minicinder.volume.targets import tgtd_socket
from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import guest_agent
from minicompute.virt.libvirt import instance_files


class Floor:
    """The raw floor: LV + tgt target (CHAP, ACL) + secret + attachDevice.

    Keeps what it created so :meth:`cleanup` can undo it after a failure.
    """

    DEV = "vdb"

    def __init__(self, conn, vg, run, portal=DEFAULT_PORTAL, initiator=None):
        """:param portal: ``(address, port)`` of the lab's tgtd.
        :param initiator: the IQN the disks present (default: the
            bench's own, ``...:bench-RUN``)."""
        self.conn, self.run = conn, run
        self.lvm = lvm.LVM(vg)
        # Over tgtd's socket, as minicinder sends them: a tgtadm process
        # per request would slow the floor, not measure the hardware.
        self.tgt = tgt.TgtAdm(execute=tgtd_socket.execute)
        self.portal = tuple(portal)
        self.initiator = initiator or \
            "iqn.2004-10.org.ministack:bench-%s" % run
        self.tmp = None
        self.domain = None
        self.lvs, self.targets, self.secrets = set(), set(), set()

    def boot(self, image, memory_mb, virt_type, wait=True):
        """A transient guest like nova's (same builder, image, flavor);
        ``wait=False`` returns once it is started, before its agent
        answers (the concurrent floor boots several, then waits)."""
        # In the lab's tmp directory, which QEMU's group may traverse.
        self.tmp = tempfile.mkdtemp(prefix="bench-floor-",
                                    dir=os.path.join(STATE_DIR, "tmp"))
        os.chmod(self.tmp, 0o750)
        files = instance_files.create_boot_files(image, self.tmp)
        xml = config.domain_xml(
            "bench-floor-%s" % self.run, str(uuid.uuid4()),
            kernel=files["kernel"], initrd=files["initrd"],
            cmdline=image["cmdline"], root_disk=files["disk"],
            memory_mib=memory_mb,
            virt_type=virt_type)
        self.domain = self.conn.createXML(xml, 0)
        if wait:
            guest_agent.wait_for_agent(self.domain, timeout=180)
        return self.domain

    def round(self, dom, i):
        """One attach and detach; returns seconds (attached, visible,
        gone, undone)."""
        name = "bench-floor-%s-%d" % (self.run, i)
        iqn = "iqn.2010-10.org.openstack:%s" % name
        usage = "bench-floor-chap-%s" % iqn
        user, password = "bench%s" % secrets.token_hex(4), \
            secrets.token_urlsafe(12)
        serial = ("bf%s%d" % (self.run, i))[:20]
        self.lvs.add(name)
        self.lvm.create_volume(name, 1)
        path = self.lvm.get_device_path(name)
        waiter = GuestWaiter(dom, serial, present=True)
        start = time.perf_counter()
        self.targets.add(iqn)
        self.tgt.create_target(iqn, path, lun=1, chap=(user, password),
                               initiators=[self.initiator])
        self.secrets.add(usage)
        secret = self.conn.secretDefineXML(config.iscsi_secret_xml(usage))
        secret.setValue(password.encode())
        disk = self.disk_xml(self.DEV, iqn, serial, user, usage)
        dom.attachDeviceFlags(disk, libvirt.VIR_DOMAIN_AFFECT_LIVE)
        attached = time.perf_counter() - start
        visible = waiter.wait() - start
        waiter = GuestWaiter(dom, serial, present=False)
        start = time.perf_counter()
        dom.detachDeviceFlags(disk, libvirt.VIR_DOMAIN_AFFECT_LIVE)
        gone = waiter.wait() - start
        while self.DEV in config.disk_target_devs(dom.XMLDesc(0)):
            time.sleep(0.01)   # QEMU reports the unplug after the guest
        self.tgt.delete_target(iqn)
        self.targets.discard(iqn)
        secret.undefine()
        self.secrets.discard(usage)
        undone = time.perf_counter() - start
        self.lvm.delete_volume(name)
        self.lvs.discard(name)
        return attached, visible, gone, undone

    def disk_xml(self, dev, iqn, serial, user, usage):
        """The QEMU iSCSI network disk of target ``iqn``'s LUN 1 at the
        lab's portal, logged in as :attr:`initiator` with CHAP ``user``
        (the password in the libvirt secret ``usage``)."""
        return config.iscsi_disk_xml(
            dev, iqn=iqn, lun=1, host=self.portal[0], port=self.portal[1],
            serial=serial, initiator_iqn=self.initiator,
            auth_username=user, secret_usage=usage)

    def shutdown(self):
        if self.domain is not None:
            try:
                self.domain.destroy()
            except libvirt.libvirtError:
                pass
            self.domain = None

    def cleanup(self):
        self.shutdown()   # transient: destroying it also drops the disk
        for iqn in list(self.targets):
            self.tgt.delete_target(iqn)
        for usage in list(self.secrets):
            try:
                self.conn.secretLookupByUsage(
                    libvirt.VIR_SECRET_USAGE_TYPE_ISCSI, usage).undefine()
            except libvirt.libvirtError:
                pass
        for name in list(self.lvs):
            self.lvm.delete_volume(name)
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
