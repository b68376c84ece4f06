"""The libvirt compute driver: real QEMU guests and hot-plugged volumes.

Guests are direct-kernel-boot domains named ``instance-%08x`` that boot
from their own files in ``<instances_path>/<uuid>/`` (a qcow2 overlay over
the registered image's disk, so the image is never written, and copies of
its kernel and ramdisk; ``instance_files.py`` says why and with which
permissions). XML comes from ``config.py``; libvirt only via ``host.py``.

Volumes: a per-``driver_volume_type`` volume driver connects the volume on
the host and builds the ``<disk>``; this module hot-plugs it live and into
the persistent config (``VIR_DOMAIN_AFFECT_LIVE|CONFIG``), and detaches it
with retries, waiting for libvirt's device-removed event each time,
because QEMU only removes a disk once the guest kernel let go of it.
"""

import os
import shutil

from oslo_log import log as logging

from minicompute import exception
from minicompute import power_state
from minicompute.virt import device_names
from minicompute.virt import driver
from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import console
from minicompute.virt.libvirt import detach
from minicompute.virt.libvirt import guest_agent
from minicompute.virt.libvirt import host as libvirt_host
from minicompute.virt.libvirt import host_connector
from minicompute.virt.libvirt import initiator
from minicompute.virt.libvirt import instance_files
from minicompute.virt.libvirt import live_migration
from minicompute.virt.libvirt import migrate_disk
from minicompute.virt.libvirt import node
from minicompute.virt.libvirt import pause_suspend
from minicompute.virt.libvirt import reboot as reboot_mod
from minicompute.virt.libvirt.volume import iscsi
from minicompute.virt.libvirt.volume import local
from ministack import executor

LOG = logging.getLogger(__name__)


class LibvirtDriver(pause_suspend.PauseSuspendMixin,
                    live_migration.LiveMigrationMixin,
                    migrate_disk.MigrateDiskMixin, driver.ComputeDriver):
    supports_multiattach = True

    def __init__(self, conf, host=None):
        self.conf = conf
        self.host = host or libvirt_host.Host(conf.libvirt.connection_uri)
        self._initiator_iqn = None
        self._connector = None
        self._volume_drivers = None
        self._detacher = detach.DiskDetacher(self.host, conf)

    # -- start-up -

    def check_host(self):
        """Fail start-up early: tools missing or libvirt unreachable."""
        executor.require_tools("qemu-img")
        self.host.get_connection()

    def init_host(self, host):
        self.host.get_connection()
        initiator.setup_os_brick(self.conf.state_path)
        mode = self.conf.libvirt.iscsi_initiator
        if mode == "auto":
            mode = "kernel" if initiator.kernel_available() else "qemu"
        self._initiator_iqn = initiator.get_initiator_iqn(
            self.conf.state_path)
        self._connector = host_connector.HostConnector(
            self.conf.my_ip, self.conf.host, self._initiator_iqn)
        self._connector.get()   # the first attach does not wait for it
        net_iscsi = iscsi.LibvirtNetISCSIVolumeDriver(self.host,
                                                      self._initiator_iqn)
        self._volume_drivers = {
            "iscsi": (iscsi.LibvirtISCSIVolumeDriver(self.host)
                      if mode == "kernel" else net_iscsi),
            "local": local.LibvirtLocalVolumeDriver(self.host),
        }
        LOG.info("libvirt driver ready: %s, %s guests, iSCSI via the %s "
                 "initiator as %s", self.conf.libvirt.connection_uri,
                 self.conf.libvirt.virt_type, mode, self._initiator_iqn)

    def cleanup_host(self):
        self.host.close()

    def get_available_resource(self, nodename):
        return node.available_resource(self.host.get_node_info(), nodename,
                                       self.conf.compute.instances_path)

    def get_host_uptime(self):
        return node.host_uptime()

    # -- instances -

    def _instance_dir(self, instance):
        return os.path.join(self.conf.compute.instances_path,
                            instance["uuid"])

    def spawn(self, ctxt, instance, image, flavor, block_device_info=None):
        """Overlay disk, define, start, and wait for the guest agent.

        The volumes of ``block_device_info`` are connected on this host
        first (the same volume drivers a hot-plug uses) and the domain is
        defined with them; one at ``vda`` is the root, and then no local
        overlay is made (boot from volume). The kernel and initrd still
        come from ``image``: these guests boot their kernel directly.
        A failure leaves the connections made for :meth:`destroy`, which
        the manager calls with the same ``block_device_info``.
        """
        if not isinstance(image, dict) or "disk" not in image:
            # The API may send only the image id; the record is local.
            from ministack import images
            image_id = image.get("id") if isinstance(image, dict) else image
            image = images.get_image(
                image_id, root=os.path.join(self.conf.state_path, "images"))
        volumes = list(block_device_info or ())
        volume_root = any(device_names.strip_dev(v["mount_device"]) == "vda"
                          for v in volumes)
        inst_dir = self._instance_dir(instance)
        try:
            instance_files.make_instance_dir(inst_dir)
            files = instance_files.create_boot_files(
                image, inst_dir, root_disk=not volume_root)
            disks = [self._connected_disk(v, instance) for v in volumes]
            xml = config.domain_xml(
                instance["name"], instance["uuid"], kernel=files["kernel"],
                initrd=files["initrd"], cmdline=image["cmdline"],
                root_disk=files["disk"], memory_mib=flavor["memory_mb"],
                vcpus=flavor["vcpus"],
                virt_type=self.conf.libvirt.virt_type,
                console_log=os.path.join(inst_dir, "console.log"),
                disks=disks)
            guest = self.host.define_guest(xml)
            guest.launch()
            took = guest_agent.wait_for_agent(
                guest.domain, timeout=self.conf.compute.build_timeout)
        except Exception as exc:
            reason = exc.format_message() if hasattr(exc, "format_message") \
                else str(exc)
            raise exception.InstanceBuildFailed(
                instance_uuid=instance["uuid"], reason=reason) from exc
        LOG.info("Guest %s booted%s; agent answered after %.1fs",
                 instance["name"], " from volume" if volume_root else "",
                 took)

    def _connected_disk(self, volume, instance):
        """Connect one volume of a new guest; its ``<disk>`` Element."""
        connection_info = volume["connection_info"]
        vol_driver = self._volume_driver(connection_info)
        vol_driver.connect_volume(connection_info, instance)
        return vol_driver.get_config(connection_info, {
            "dev": device_names.strip_dev(volume["mount_device"]),
            "bus": volume.get("disk_bus") or "virtio",
            "type": volume.get("device_type") or "disk"})

    def destroy(self, ctxt, instance, block_device_info=None):
        """Power off and undefine the guest, remove its files, and
        disconnect the volumes of ``block_device_info`` on this host
        (those the guest was defined with; a hot-plugged volume is
        detached by the manager before)."""
        try:
            guest = self.host.get_guest(instance["name"])
        except exception.InstanceNotFound:
            guest = None
        if guest is not None and guest.uuid != instance["uuid"]:
            # The name is taken by another server's domain (a second nova
            # database on this libvirt with the same name template): never
            # destroy what is not ours.
            LOG.warning("Domain %s belongs to %s, not to instance %s; "
                        "leaving it alone", instance["name"], guest.uuid,
                        instance["uuid"])
            guest = None
        if guest is not None:
            guest.poweroff()
            guest.undefine()
        shutil.rmtree(self._instance_dir(instance), ignore_errors=True)
        for volume in block_device_info or ():
            connection_info = volume["connection_info"]
            vol_driver = self._volume_driver(connection_info)
            vol_driver.disconnect_volume(
                connection_info, instance,
                still_used=self._still_used(vol_driver, connection_info,
                                            instance["uuid"]))

    def snapshot(self, ctxt, instance, record, images_root):
        from ministack import image_store
        inst_dir = self._instance_dir(instance)
        return image_store.upload_files(record["id"], {
            key: os.path.join(inst_dir, name) for key, name in (
                ("disk", instance_files.DISK),
                ("kernel", instance_files.KERNEL),
                ("initrd", instance_files.RAMDISK))}, root=images_root)

    def power_off(self, instance, timeout=0):
        self.host.get_guest(instance["name"]).poweroff()

    def power_on(self, ctxt, instance):
        guest = self.host.get_guest(instance["name"])
        if not guest.is_active():
            guest.launch()
            guest_agent.wait_for_agent(
                guest.domain, timeout=self.conf.compute.build_timeout)
        else:
            guest.resume()      # a paused one; a running one is left

    def pause(self, instance):
        self.host.get_guest(instance["name"]).pause()

    def reboot(self, ctxt, instance, reboot_type):
        """SOFT: ACPI power button, wait, start (HARD if it will not stop);
        HARD: power off and on. The persistent definition keeps the
        attached volumes, so they come back with the guest."""
        guest = self.host.get_guest(instance["name"])
        done = reboot_mod.reboot(guest, reboot_type,
                                 self.conf.libvirt.wait_soft_reboot_seconds)
        guest_agent.wait_for_agent(guest.domain,
                                   timeout=self.conf.compute.build_timeout)
        LOG.info("Guest %s rebooted (%s)", instance["name"], done)

    def get_console_output(self, instance):
        return console.read_log(self.host.get_guest(instance["name"]))

    def get_power_state(self, instance):
        try:
            return self.host.get_guest(instance["name"]).get_power_state()
        except exception.InstanceNotFound:
            return power_state.NOSTATE

    def instance_exists(self, instance):
        return self.host.guest_exists(instance["name"])

    # -- volumes -

    def get_volume_connector(self, instance):
        """os-brick's host properties (reused for a while:
        :mod:`host_connector`), with the initiator we log in as."""
        return self._connector.get()

    def _volume_driver(self, connection_info):
        kind = connection_info.get("driver_volume_type")
        try:
            return self._volume_drivers[kind]
        except KeyError:
            raise exception.VolumeDriverNotFound(driver_type=kind)

    def _still_used(self, vol_driver, connection_info, except_uuid):
        """Whether another guest on this host uses the same connection.

        Only a multiattach volume can be (its one target serves every
        guest); for any other the guests' XML is not read (one XMLDesc per
        guest, on every detach), as upstream's
        ``_should_disconnect_target`` asks first."""
        if not connection_info.get("multiattach"):
            return False
        key = vol_driver.source_key(connection_info)
        if key is None:
            return False
        for guest, disks in self._all_disks():
            if guest.uuid == except_uuid:
                continue
            for disk in disks:
                source = disk.find("source")
                if source is not None and iscsi.same_source(key, source):
                    return True
        return False

    def _all_disks(self):
        """``(guest, [<disk>...])`` for every domain on this host.

        A domain that disappears during the scan (another guest being
        deleted) is skipped: it no longer uses anything.
        """
        for guest in self.host.list_guests():
            try:
                disks = guest.get_disks(inactive=True).values()
            except exception.DomainNotFound:
                continue
            yield guest, list(disks)

    def attach_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        guest = self.host.get_guest(instance["name"])
        vol_driver = self._volume_driver(connection_info)
        dev = device_names.strip_dev(mountpoint)
        if dev in guest.get_disks() or dev in guest.get_disks(inactive=True):
            raise exception.DevicePathInUse(path=mountpoint)
        vol_driver.connect_volume(connection_info, instance)
        try:
            disk = vol_driver.get_config(connection_info, {
                "dev": dev, "bus": disk_bus or "virtio",
                "type": device_type or "disk"})
            guest.attach_device(config.to_xml(disk), persistent=True,
                                live=guest.is_active())
        except Exception:
            vol_driver.disconnect_volume(
                connection_info, instance,
                still_used=self._still_used(vol_driver, connection_info,
                                            guest.uuid))
            raise
        LOG.info("Attached %s to %s as %s", connection_info.get("serial"),
                 instance["name"], dev)

    def detach_volume(self, ctxt, connection_info, instance, mountpoint):
        guest = self.host.get_guest(instance["name"])
        vol_driver = self._volume_driver(connection_info)
        dev = device_names.strip_dev(mountpoint)
        self._detacher.detach(guest, dev)
        vol_driver.disconnect_volume(
            connection_info, instance,
            still_used=self._still_used(vol_driver, connection_info,
                                        guest.uuid))

    def extend_volume(self, ctxt, connection_info, instance, new_size,
                      mountpoint):
        """Grow the volume's disk in the running guest
        (``Guest.resize_disk``); for QEMU's network disks, as nova's net
        volume driver, there is nothing to do on the host first."""
        guest = self.host.get_guest(instance["name"])
        guest.resize_disk(device_names.strip_dev(mountpoint), new_size)

    def get_attached_devices(self, instance):
        return sorted(self.host.get_guest(instance["name"]).get_disks())

    # -- reconciliation (minicompute.reconcile) -

    def list_volume_disks(self, instance):
        """The guest's disks as the reconciler compares them with BDMs.

        :returns: None without a domain, else ``{"active": bool, "disks":
            {dev: {"serial", "live", "config", "xml"}}}``.
        """
        try:
            guest = self.host.get_guest(instance["name"])
        except exception.InstanceNotFound:
            return None
        active = guest.is_active()
        live = guest.get_disks() if active else {}
        persistent = guest.get_disks(inactive=True)
        disks = {}
        for dev in set(live) | set(persistent):
            element = live.get(dev) if dev in live else persistent[dev]
            serial = element.find("serial")
            disks[dev] = {
                "serial": serial.text if serial is not None else None,
                "live": dev in live, "config": dev in persistent,
                "xml": config.to_xml(persistent.get(dev, element))}
        return {"active": active, "disks": disks}

    def unplug_disk(self, ctxt, instance, dev):
        """Take disk ``dev`` out of the guest and its definition, and drop
        its CHAP secret unless another guest uses the same target.

        For a disk no BDM describes (so there is no connection_info): the
        secret is found from the disk's own ``<auth>``.

        :raises DeviceDetachFailed: the guest kept it.
        :raises DiskNotFound: there is no such disk.
        """
        guest = self.host.get_guest(instance["name"])
        disks = guest.get_disks(inactive=True)
        disks.update(guest.get_disks() if guest.is_active() else {})
        disk = disks.get(dev)
        self._detacher.detach(guest, dev)
        source = disk.find("source") if disk is not None else None
        secret = disk.find("source/auth/secret") if disk is not None \
            else None
        if secret is None or not secret.get("usage"):
            return
        key = source.get("name")
        for _other, other_disks in self._all_disks():
            for d in other_disks:
                src = d.find("source")
                if src is not None and src.get("name") == key:
                    return
        self.host.delete_secret("iscsi", secret.get("usage"))

    def replug_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        """Plug a wired volume back where the guest lost it (live and/or
        persistent), from the BDM's connection_info."""
        guest = self.host.get_guest(instance["name"])
        dev = device_names.strip_dev(mountpoint)
        vol_driver = self._volume_driver(connection_info)
        vol_driver.connect_volume(connection_info, instance)
        xml = config.to_xml(vol_driver.get_config(connection_info, {
            "dev": dev, "bus": disk_bus or "virtio",
            "type": device_type or "disk"}))
        if dev not in guest.get_disks(inactive=True):
            guest.attach_device(xml, persistent=True, live=False)
        if guest.is_active() and dev not in guest.get_disks():
            guest.attach_device(xml, persistent=False, live=True)
        LOG.info("Re-plugged %s into %s as %s",
                 connection_info.get("serial"), instance["name"], dev)
