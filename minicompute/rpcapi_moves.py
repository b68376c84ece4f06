"""Client side of the compute RPC methods that move a server between
hosts: live migration (1.9) and resize and cold migration (1.10).

Part of :class:`minicompute.rpcapi.ComputeAPI` (mixed in; its version
history and ``_prepare`` are there): each message goes to the host whose
step it is, the source (the server's host) or the destination named.
"""

from minicompute.rpc_wire import host_of as _host
from minicompute.rpc_wire import primitive as _primitive
from ministack import rpc

#: Seconds a live migration's CALLs between hosts wait: they connect
#: volumes and copy files (nova's ``long_rpc_timeout`` plays this part).
LONG_CALL_TIMEOUT = 300


class MoveAPI:
    """The move methods of :class:`minicompute.rpcapi.ComputeAPI`."""

    # -- live migration (1.9) -

    def check_can_live_migrate_destination(self, ctxt, instance, dest,
                                           block_migration=None):
        """CALL to ``dest``: may the instance come there? (It asks the
        source.) Returns the migrate data.

        :raises MigrationPreCheckError, UnableToMigrateToSelf,
            InvalidSharedStorage, InvalidLocalStorage:
        :raises MessagingTimeout: the host did not answer in time.
        """
        cctxt = self.client.prepare(server=dest, version="1.9",
                                    timeout=LONG_CALL_TIMEOUT)
        return rpc.call(cctxt, ctxt, "check_can_live_migrate_destination",
                        instance=_primitive(instance),
                        block_migration=block_migration)

    def check_can_live_migrate_source(self, ctxt, instance,
                                      dest_check_data):
        """CALL to the instance's host: what the destination needs."""
        cctxt = self._prepare(instance, version="1.9")
        return rpc.call(cctxt, ctxt, "check_can_live_migrate_source",
                        instance=_primitive(instance),
                        dest_check_data=dest_check_data)

    def live_migration(self, ctxt, instance, dest, migrate_data,
                       migration=None):
        """CAST to the instance's host: move the guest to ``dest``."""
        cctxt = self._prepare(instance, version="1.9")
        rpc.cast(cctxt, ctxt, "live_migration",
                 instance=_primitive(instance), dest=dest,
                 migrate_data=migrate_data, migration=migration)

    def pre_live_migration(self, ctxt, instance, dest, migrate_data):
        """CALL to ``dest``: new attachments, volumes connected, files
        made there; returns the migrate data with the volumes' disks."""
        cctxt = self.client.prepare(server=dest, version="1.9",
                                    timeout=LONG_CALL_TIMEOUT)
        return rpc.call(cctxt, ctxt, "pre_live_migration",
                        instance=_primitive(instance),
                        migrate_data=migrate_data)

    def post_live_migration_at_destination(self, ctxt, instance, dest,
                                           node=None):
        """CALL to ``dest``: the instance is that host's now."""
        cctxt = self.client.prepare(server=dest, version="1.9",
                                    timeout=LONG_CALL_TIMEOUT)
        return rpc.call(cctxt, ctxt, "post_live_migration_at_destination",
                        instance=_primitive(instance), node=node)

    def remove_volume_connection(self, ctxt, instance, volume_id, dest):
        """CALL to ``dest``: disconnect the volume there."""
        cctxt = self.client.prepare(server=dest, version="1.9",
                                    timeout=LONG_CALL_TIMEOUT)
        return rpc.call(cctxt, ctxt, "remove_volume_connection",
                        instance=_primitive(instance), volume_id=volume_id)

    def rollback_live_migration_at_destination(self, ctxt, instance, dest):
        """CAST to ``dest``: remove the guest's files made there."""
        cctxt = self.client.prepare(server=dest, version="1.9")
        rpc.cast(cctxt, ctxt, "rollback_live_migration_at_destination",
                 instance=_primitive(instance))

    def live_migration_abort(self, ctxt, instance, migration_id):
        """CAST to the instance's host: cancel its live migration."""
        cctxt = self._prepare(instance, version="1.9")
        rpc.cast(cctxt, ctxt, "live_migration_abort",
                 instance=_primitive(instance), migration_id=migration_id)

    def live_migration_force_complete(self, ctxt, instance):
        """CAST to the instance's host: pause the guest so its running
        migration completes."""
        cctxt = self._prepare(instance, version="1.9")
        rpc.cast(cctxt, ctxt, "live_migration_force_complete",
                 instance=_primitive(instance))

    # -- resize and cold migration (1.10) -

    def _to(self, host):
        return self.client.prepare(server=host, version="1.10")

    def prep_resize(self, ctxt, instance, migration, image, flavor, host):
        """CAST to the destination ``host``: get ready for the server
        (``flavor``, the new one), then tell the source to send it."""
        rpc.cast(self._to(host), ctxt, "prep_resize",
                 instance=_primitive(instance), migration=migration,
                 image=image, flavor=flavor)

    def resize_instance(self, ctxt, instance, migration, image, flavor):
        """CAST to the source (the server's host): power off, park the
        volumes, hand the disk over, then finish on the destination."""
        rpc.cast(self._to(_host(instance)), ctxt, "resize_instance",
                 instance=_primitive(instance), migration=migration,
                 image=image, flavor=flavor)

    def finish_resize(self, ctxt, instance, migration, image, disk_info,
                 host):
        """CAST to the destination ``host``: connect the volumes, start
        the guest with the new flavor (VERIFY_RESIZE)."""
        rpc.cast(self._to(host), ctxt, "finish_resize",
                 instance=_primitive(instance), migration=migration,
                 image=image, disk_info=disk_info)

    def confirm_resize(self, ctxt, instance, migration, host):
        """CAST to the source ``host``: remove what the move left there."""
        rpc.cast(self._to(host), ctxt, "confirm_resize",
                 instance=_primitive(instance), migration=migration)

    def revert_resize(self, ctxt, instance, migration, image):
        """CAST to the destination (the server's host): destroy the
        guest there, park the volumes, then finish on the source."""
        rpc.cast(self._to(_host(instance)), ctxt, "revert_resize",
                 instance=_primitive(instance), migration=migration,
                 image=image)

    def finish_revert_resize(self, ctxt, instance, migration, image, host):
        """CAST to the source ``host``: the server back with its old
        flavor, its volumes connected there."""
        rpc.cast(self._to(host), ctxt, "finish_revert_resize",
                 instance=_primitive(instance), migration=migration,
                 image=image)

