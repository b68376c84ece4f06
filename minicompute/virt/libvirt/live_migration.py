"""Live migration of a libvirt guest between two compute hosts, as
upstream's libvirt driver does it, peer to peer.

* source checks: which of the guest's disks are local files in its
  instance directory (its root overlay: copied by a block migration,
  since the hosts' instance directories are not shared) and what the
  destination needs to recreate the guest's files;
* destination, before the guest moves: its instance directory (which
  must not exist yet: ``DestinationDiskExists``), an empty overlay over
  the same backing image, the kernel and initrd, and every volume
  connected with the destination's own connection_info;
* the move: ``virDomainMigrateToURI3`` from the source's libvirtd to the
  destination's (``VIR_MIGRATE_PEER2PEER|LIVE|PERSIST_DEST|
  UNDEFINE_SOURCE``, plus ``NON_SHARED_INC`` with only the local disks
  listed for a block migration), the destination XML rewritten
  (:mod:`.migration`), memory and disks sent to the destination's
  ``live_migration_inbound_addr``;
* after: the source disconnects its volumes and removes its files; a
  rollback disconnects the destination's and removes its files.

Mixed into :class:`.driver.LibvirtDriver`.
"""

import json
import os
import shutil
import xml.etree.ElementTree as ET

import libvirt
from oslo_log import log as logging

from minicompute import exception
from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import instance_files
from minicompute.virt.libvirt import migration
from ministack import executor
from ministack.trace.profiler import span

LOG = logging.getLogger(__name__)

_FLAGS = (libvirt.VIR_MIGRATE_LIVE | libvirt.VIR_MIGRATE_PEER2PEER |
          libvirt.VIR_MIGRATE_PERSIST_DEST |
          libvirt.VIR_MIGRATE_UNDEFINE_SOURCE)


def _os_path(xml_text, tag):
    node = ET.fromstring(xml_text).find("os/%s" % tag)
    return node.text if node is not None else None


class LiveMigrationMixin:
    """The live-migration steps of the driver contract."""

    # -- checks -

    def check_can_live_migrate_destination(self, ctxt, instance):
        """What the source needs to reach this host."""
        lv = self.conf.libvirt
        return {"peer_uri": lv.live_migration_peer_uri or lv.connection_uri,
                "inbound_addr": lv.live_migration_inbound_addr or
                self.conf.my_ip,
                "dest_dir": self._instance_dir(instance)}

    def check_can_live_migrate_source(self, ctxt, instance):
        """The guest's local disks and the files the destination makes."""
        guest = self.host.get_guest(instance["name"])
        xml = guest.get_xml_desc(inactive=True)
        source_dir = self._instance_dir(instance)
        data = {"source_dir": source_dir,
                "local_disks": migration.local_disk_targets(xml, source_dir),
                "kernel": _os_path(xml, "kernel"),
                "initrd": _os_path(xml, "initrd")}
        disk = os.path.join(source_dir, instance_files.DISK)
        if data["local_disks"]:
            out, _err = executor.execute(
                "qemu-img", "info", "-U", "--output=json", disk)
            info = json.loads(out)
            data.update(backing_file=info.get("backing-filename"),
                        backing_format=info.get("backing-filename-format"),
                        virtual_size=info["virtual-size"])
        return data

    # -- destination -

    def pre_live_migration(self, ctxt, instance, migrate_data, volumes):
        """Make the guest's files here and connect its volumes.

        :param volumes: block_device_info with this host's
            connection_info.
        :returns: ``{"volume_disks": {serial: <disk> XML}}``.
        :raises DestinationDiskExists: the instance directory exists.
        """
        dest_dir = self._instance_dir(instance)
        if os.path.exists(dest_dir):
            raise exception.DestinationDiskExists(path=dest_dir)
        connected = []
        try:
            instance_files.make_instance_dir(dest_dir)
            self._copy_boot_files(migrate_data, dest_dir)
            disks = {}
            for volume in volumes:
                disk = self._connected_disk(volume, instance)
                connected.append(volume)
                disks[volume["connection_info"].get("serial") or
                      volume["volume_id"]] = config.to_xml(disk)
        except Exception:
            self._remove_migration_files(instance, connected)
            raise
        return {"volume_disks": disks}

    def _copy_boot_files(self, migrate_data, dest_dir):
        for key, name in (("kernel", instance_files.KERNEL),
                          ("initrd", instance_files.RAMDISK)):
            if migrate_data.get(key):
                target = os.path.join(dest_dir, name)
                shutil.copyfile(migrate_data[key], target)
                os.chmod(target, 0o600)
        if migrate_data.get("local_disks"):
            disk = os.path.join(dest_dir, instance_files.DISK)
            cmd = ["qemu-img", "create", "-q", "-f", "qcow2"]
            if migrate_data.get("backing_file"):
                cmd += ["-F", migrate_data.get("backing_format") or "qcow2",
                        "-b", migrate_data["backing_file"]]
            executor.execute(*cmd, disk, str(migrate_data["virtual_size"]))
            os.chmod(disk, 0o600)

    def _remove_migration_files(self, instance, volumes):
        for volume in volumes:
            self.remove_volume_connection(ctxt=None, instance=instance,
                                          connection_info=volume[
                                              "connection_info"])
        shutil.rmtree(self._instance_dir(instance), ignore_errors=True)

    def remove_volume_connection(self, ctxt, instance, connection_info):
        """Disconnect one volume on this host (its disk is not, or no
        longer, in a guest here). Errors are logged."""
        try:
            vol_driver = self._volume_driver(connection_info)
            vol_driver.disconnect_volume(
                connection_info, instance,
                still_used=self._still_used(vol_driver, connection_info,
                                            instance["uuid"]))
        except Exception:
            LOG.exception("Could not disconnect volume %s of %s",
                          connection_info.get("serial"), instance["uuid"])

    def rollback_live_migration_at_destination(self, ctxt, instance,
                                               volumes=()):
        """Undo :meth:`pre_live_migration`: a domain the failed migration
        left here (not running), the files, the volumes given."""
        try:
            guest = self.host.get_guest(instance["name"])
        except exception.InstanceNotFound:
            guest = None
        if guest is not None and guest.uuid == instance["uuid"] and \
                not guest.is_active():
            guest.undefine()
        self._remove_migration_files(instance, volumes)

    # -- source -

    def live_migration(self, ctxt, instance, migrate_data):
        """Move the running (or paused) guest to the destination.

        :raises LiveMigrationFailed: libvirt refused or the job failed;
            the guest still runs here.
        """
        guest = self.host.get_guest(instance["name"])
        xml = guest.domain.XMLDesc(libvirt.VIR_DOMAIN_XML_MIGRATABLE)
        dest_xml = migration.updated_guest_xml(
            xml, migrate_data.get("volume_disks") or {},
            migrate_data["source_dir"], migrate_data["dest_dir"])
        addr = migrate_data["inbound_addr"]
        # The destination's persistent definition too: without it libvirt
        # persists the source's, with the source's paths and connections.
        params = {libvirt.VIR_MIGRATE_PARAM_DEST_XML: dest_xml,
                  libvirt.VIR_MIGRATE_PARAM_PERSIST_XML: dest_xml,
                  libvirt.VIR_MIGRATE_PARAM_URI: "tcp://%s" % addr}
        flags = _FLAGS
        if migrate_data.get("block_migration"):
            flags |= libvirt.VIR_MIGRATE_NON_SHARED_INC
            params[libvirt.VIR_MIGRATE_PARAM_MIGRATE_DISKS] = \
                migrate_data["local_disks"]
            params[libvirt.VIR_MIGRATE_PARAM_DISKS_URI] = "tcp://%s" % addr
        LOG.info("Live-migrating %s to %s (%s)%s", instance["name"],
                 migrate_data["peer_uri"], addr,
                 " with its disks %s" % migrate_data["local_disks"]
                 if migrate_data.get("block_migration") else "")
        try:
            with span("libvirt", "LIBRARY", "virDomainMigrateToURI3",
                      actor="libvirt", details=lambda: {
                          "peer_uri": migrate_data["peer_uri"],
                          "migrate_uri": "tcp://%s" % addr,
                          "block_migration": bool(
                              migrate_data.get("block_migration"))}):
                guest.domain.migrateToURI3(migrate_data["peer_uri"], params,
                                           flags)
        except libvirt.libvirtError as exc:
            raise exception.LiveMigrationFailed(
                instance_uuid=instance["uuid"],
                reason=exc.get_error_message())

    def post_live_migration_at_source(self, ctxt, instance, volumes):
        """The guest left: disconnect its volumes here, remove its
        files (libvirt undefined the domain)."""
        for volume in volumes:
            self.remove_volume_connection(ctxt, instance,
                                          volume["connection_info"])
        shutil.rmtree(self._instance_dir(instance), ignore_errors=True)

    def live_migration_abort(self, instance):
        """Abort the guest's running migration job (it keeps running
        here)."""
        guest = self.host.get_guest(instance["name"])
        try:
            guest.domain.abortJob()
        except libvirt.libvirtError as exc:
            raise exception.InternalError(
                err="abort of the migration of %s failed: %s"
                % (instance["name"], exc.get_error_message()))

    def live_migration_force_complete(self, instance):
        """Pause the guest: its memory stops changing, the migration
        converges, and libvirt runs it on the destination."""
        self.host.get_guest(instance["name"]).pause()
