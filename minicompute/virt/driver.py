"""The contract between the compute manager and a hypervisor driver.

The manager owns the flow and the database; a driver owns the hypervisor.
Nothing under ``minicompute/virt`` imports the database (nova's hacking
rule N307): the manager passes plain values in and stores what comes back.
``instance`` arguments are the instance's dict primitive (``uuid``,
``id``, ``name`` (``instance-%08x``), ``memory_mb``, ``vcpus``...).

Two implementations: :mod:`minicompute.virt.libvirt.driver` (real guests)
and :mod:`minicompute.virt.fake` (unit tests). This class declares every
method the manager, the attach flow (``virt/block_device.py``), the
reconciler and the service call, so a new driver knows what it owes.
"""


class ComputeDriver:
    """Abstract hypervisor driver; every method raises NotImplementedError."""

    #: whether one volume may be attached to several instances at once
    supports_multiattach = False

    def check_host(self):
        """Fail start-up early, before anything is served: the tools the
        driver shells out to are missing or the hypervisor is unreachable.

        :raises MissingTool:
        :raises HypervisorUnavailable:
        """
        raise NotImplementedError()

    def init_host(self, host):
        """Connect to the hypervisor; raise a MinistackException if not."""
        raise NotImplementedError()

    def cleanup_host(self):
        """Release the hypervisor connection at shutdown."""

    # -- the node ------------------------------------------------------------

    def get_available_resource(self, nodename):
        """The node's totals and facts, as the resource tracker stores
        them in ``compute_nodes`` (nova's driver method of that name).

        :returns: ``{"vcpus", "memory_mb", "local_gb" (GiB of the file
            system holding instance disks), "disk_available_least" (its
            free GiB), "hypervisor_type", "hypervisor_version" (major *
            1000000 + minor * 1000 + micro), "cpu_info" (JSON text),
            "hypervisor_hostname" (``nodename``)}``.
        """
        raise NotImplementedError()

    def get_host_uptime(self):
        """The host's ``uptime`` line (NotImplementedError: not known)."""
        raise NotImplementedError()

    # -- instances ---------------------------------------------------------

    def spawn(self, ctxt, instance, image, flavor, block_device_info=None):
        """Create the instance's disk and domain and boot it.

        :param image: ``ministack.images`` image dict (``path``, ``format``).
        :raises InstanceBuildFailed:
        """
        raise NotImplementedError()

    def destroy(self, ctxt, instance, block_device_info=None):
        """Power off and remove the domain and the instance's local disk.

        Volumes are not touched: the manager detaches them first.
        """
        raise NotImplementedError()

    def snapshot(self, ctxt, instance, record, images_root):
        """Upload the powered-off guest's root disk, kernel and ramdisk
        into the ``queued`` snapshot image ``record`` (``id``, ``name``,
        properties) the API created under ``images_root``
        (``ministack.image_store.upload_files``).

        :returns: the registered image record.
        """
        raise NotImplementedError()

    def power_off(self, instance, timeout=0):
        """Stop the guest: ask it to shut down for up to ``timeout``
        seconds (0: at once), then pull the plug."""
        raise NotImplementedError()

    def power_on(self, ctxt, instance):
        """Start the defined guest; volumes in its definition come back
        with it. A paused guest (:meth:`pause`) is resumed."""
        raise NotImplementedError()

    def pause(self, instance):
        """Stop the running guest's vCPUs (``virsh suspend``): it keeps
        its memory and devices but answers nothing, an unplug request
        included, until :meth:`power_on` resumes it. ``detach-refused``
        of ``ministack-fault`` makes a real guest refuse a detach so."""
        raise NotImplementedError()

    def unpause(self, instance):
        """Run the paused guest's vCPUs again (``virsh resume``)."""
        raise NotImplementedError()

    def suspend(self, ctxt, instance):
        """Save the running guest's memory to disk and stop it (libvirt's
        managed save). Its volumes stay in its definition and connected
        on the host."""
        raise NotImplementedError()

    def resume(self, ctxt, instance):
        """Start the suspended guest from its saved memory; it runs on
        where it was, with the volumes it had."""
        raise NotImplementedError()

    def reboot(self, ctxt, instance, reboot_type):
        """Reboot the guest: ``SOFT`` (ask it, fall back to HARD) or
        ``HARD`` (power cycle). Attached volumes stay attached; the guest
        is running when this returns.
        """
        raise NotImplementedError()

    def get_console_output(self, instance):
        """The guest's serial console log (bytes; its last 100 KiB).

        :raises ConsoleNotAvailable: the guest has no logged console.
        """
        raise NotImplementedError()

    def get_power_state(self, instance):
        """One of :mod:`minicompute.power_state`."""
        raise NotImplementedError()

    def instance_exists(self, instance):
        """Whether the hypervisor has a domain for ``instance``."""
        raise NotImplementedError()

    # -- volumes -------------------------------------------------------------

    def get_volume_connector(self, instance):
        """The host connector sent to Cinder (os-brick properties).

        Its ``initiator`` must be the one the driver really logs in with,
        because Cinder's target ACL admits exactly that name.
        """
        raise NotImplementedError()

    def attach_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        """Connect the volume on the host and hot-plug it into the guest.

        Must leave nothing behind when it raises.
        """
        raise NotImplementedError()

    def detach_volume(self, ctxt, connection_info, instance, mountpoint):
        """Unplug the device from the guest, then disconnect it on the host.

        :raises DeviceDetachFailed: the guest did not release the device
            within the configured attempts (the device is still attached).
        :raises DiskNotFound: the guest has no such device (already gone).
        """
        raise NotImplementedError()

    def get_attached_devices(self, instance):
        """Target names (``vdb``...) of the disks the guest has now."""
        raise NotImplementedError()

    def extend_volume(self, ctxt, connection_info, instance, new_size,
                      mountpoint):
        """Make the running guest see its volume at ``mountpoint`` grown
        to ``new_size`` bytes (a ``volume-extended`` event)."""
        raise NotImplementedError()

    # -- reconciliation (minicompute.reconcile, the attach flow's undo) ------

    def list_volume_disks(self, instance):
        """The guest's disks as the reconciler compares them with BDMs.

        :returns: None when the instance has no domain, else ``{"active":
            bool, "disks": {dev: {"serial", "live", "config", "xml"}}}``
            (``live``: in the running guest; ``config``: in its persistent
            definition; ``serial``: the volume id for a volume disk).
        """
        raise NotImplementedError()

    def unplug_disk(self, ctxt, instance, dev):
        """Take disk ``dev`` out of the guest and its definition, for a
        disk that may have no BDM (so no connection_info): whatever the
        driver holds for it on the host is found from the disk itself.

        :raises DeviceDetachFailed: the guest kept it.
        :raises DiskNotFound: there is no such disk.
        """
        raise NotImplementedError()

    def replug_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        """Plug a wired volume back where the guest lost it (live and/or
        persistent) from the BDM's ``connection_info``; a no-op for the
        halves that still have it."""
        raise NotImplementedError()

    # -- resize and cold migration (minicompute.resize) -

    def migrate_disk_and_power_off(self, ctxt, instance, flavor,
                                   block_device_info=None):
        """On the source: power the guest off, take its domain away with
        the volumes of ``block_device_info`` disconnected on this host,
        and keep its local disk aside for the destination and a revert.

        :param flavor: the new flavor (a dict).
        :returns: ``disk_info`` for :meth:`finish_migration` (where the
            kept disk is).
        """
        raise NotImplementedError()

    def finish_migration(self, ctxt, instance, disk_info, image, flavor,
                         block_device_info=None, power_on=True):
        """On the destination: the kept disk (``disk_info``) copied here
        and grown to ``flavor``'s root_gb, the volumes of
        ``block_device_info`` connected, the guest defined with
        ``flavor``'s memory and vCPUs and started (stopped again when
        ``power_on`` is False)."""
        raise NotImplementedError()

    def confirm_migration(self, ctxt, instance):
        """On the source, after a confirm: remove the kept disk."""
        raise NotImplementedError()

    def finish_revert_migration(self, ctxt, instance, image, flavor,
                                block_device_info=None, power_on=True):
        """On the source, after a revert: the guest defined again from its
        kept disk with ``flavor`` (the old one) and the volumes of
        ``block_device_info`` connected, started unless ``power_on`` is
        False; the kept disk's directory removed."""
        raise NotImplementedError()
