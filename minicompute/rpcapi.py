"""Client side of the compute RPC API.

This is the only module that knows the topic (``compute``) and the method
names the compute manager serves (with :mod:`minicompute.rpcapi_moves`,
the methods that move a server between hosts, mixed in here); miniapi
(and the tests) call these methods, never ``oslo_messaging`` directly.
Every message goes to the compute host that owns the instance
(``server=instance['host']``), or to the host it names
(``get_host_uptime``, the fault calls), or, for
:meth:`ComputeAPI.drop_fault_everywhere`, to every host (fanout).

Arguments are keyword-only on the wire. ``instance`` and ``bdm`` travel as
plain dicts (``minicompute.db.api.to_dict``); the manager reloads the
rows from the database by uuid / id, so a stale dict cannot overwrite newer
state.
"""

import oslo_messaging as messaging

from minicompute import exception
from minicompute import rpcapi_moves
from minicompute.rpc_wire import host_of as _host
from minicompute.rpc_wire import primitive as _primitive
from ministack import rpc

# The topic every compute host listens on; the server name is its
# ``[DEFAULT] host``, so a message reaches exactly one host.
RPC_TOPIC = "compute"

#: Seconds a fault CALL waits for its host: an operator's command, not an
#: attach, and a host that does not answer is reported, not waited for.
FAULT_CALL_TIMEOUT = 10

class ComputeAPI(rpcapi_moves.MoveAPI):
    """Client side of the compute RPC API.

    API version history:

    * 1.0 - Initial version: reserve_block_device_name (call),
      attach_volume, detach_volume, build_and_run_instance, stop_instance,
      start_instance, terminate_instance (casts).
    * 1.1 - reboot_instance (cast), get_console_output (call).
    * 1.2 - attach_volume takes the volume's ``multiattach`` flag: the
      API has just read the volume, so the host need not GET it again.
    * 1.3 - get_host_uptime (call), for os-hypervisors.
    * 1.4 - arm_fault, list_faults, disarm_faults (calls) and
      disarm_faults as a fanout cast: ministack-fault's faults, held in
      each host's memory (``minicompute.faults``).
    * 1.5 - external_instance_event (cast): server external events
      (``volume-extended``), to the host of the instances named.
    * 1.6 - rebuild_instance (cast): respawn from a new image on the same
      host, volumes kept (a volume-backed one's root re-imaged at 2.93).
    * 1.7 - shelve_instance, shelve_offload_instance, unshelve_instance
      (casts): shelve, offload and unshelve (``minicompute.shelve``).
    * 1.8 - pause_instance, unpause_instance, suspend_instance,
      resume_instance (casts).
    * 1.9 - live migration: check_can_live_migrate_destination,
      check_can_live_migrate_source, pre_live_migration,
      post_live_migration_at_destination, remove_volume_connection
      (calls); live_migration, rollback_live_migration_at_destination,
      live_migration_abort, live_migration_force_complete (casts).
    * 1.10 - prep_resize, resize_instance, finish_resize, confirm_resize,
      revert_resize, finish_revert_resize (casts): resize and cold
      migration (``minicompute.resize``), each to the host whose step it
      is (the destination or the source).
    """

    VERSION = "1.10"

    def __init__(self, transport, timeout=None):
        """:param timeout: seconds a CALL waits (``rpc_call_timeout``)."""
        target = messaging.Target(topic=RPC_TOPIC, version=self.VERSION)
        self.client = rpc.get_client(transport, target,
                                     version_cap=self.VERSION,
                                     timeout=timeout)

    def _prepare(self, instance, version="1.0", **kwargs):
        """Each method is sent at the version that introduced it, so a
        host still serving an older version takes the older methods."""
        return self.client.prepare(server=_host(instance), version=version,
                                   **kwargs)

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  disk_bus=None, device_type=None, tag=None,
                                  multiattach=False):
        """CALL: pick a free device name and create the BDM; return it.

        :returns: the new BDM as a dict (``id``, ``uuid``, ``device_name``,
            ``attachment_id`` (None), ``connection_info`` (None)...).
        :raises MessagingTimeout: the host did not answer in time.
        """
        cctxt = self._prepare(instance)
        return rpc.call(cctxt, ctxt, "reserve_block_device_name",
                          instance=_primitive(instance), device=device,
                          volume_id=volume_id, disk_bus=disk_bus,
                          device_type=device_type, tag=tag,
                          multiattach=multiattach)

    def attach_volume(self, ctxt, instance, bdm, multiattach=None):
        """CAST: wire the reserved BDM's volume into the instance.

        :param multiattach: the volume's flag as the API read it; a host
            older than 1.2 (or None here) reads the volume itself.
        """
        kwargs = {"instance": _primitive(instance), "bdm": _primitive(bdm)}
        version = "1.0"
        if multiattach is not None and self.client.can_send_version("1.2"):
            version = "1.2"
            kwargs["multiattach"] = bool(multiattach)
        cctxt = self._prepare(instance, version=version)
        rpc.cast(cctxt, ctxt, "attach_volume", **kwargs)

    def detach_volume(self, ctxt, instance, volume_id, attachment_id=None):
        """CAST: unplug ``volume_id`` and delete its Cinder attachment."""
        cctxt = self._prepare(instance)
        rpc.cast(cctxt, ctxt, "detach_volume", instance=_primitive(instance),
                   volume_id=volume_id, attachment_id=attachment_id)

    def build_and_run_instance(self, ctxt, instance, image, flavor):
        """CAST: create the disk and domain and boot the instance."""
        cctxt = self._prepare(instance)
        rpc.cast(cctxt, ctxt, "build_and_run_instance",
                   instance=_primitive(instance), image=image,
                   flavor=_primitive(flavor))

    def stop_instance(self, ctxt, instance):
        """CAST: power the instance off."""
        cctxt = self._prepare(instance)
        rpc.cast(cctxt, ctxt, "stop_instance", instance=_primitive(instance))

    def start_instance(self, ctxt, instance):
        """CAST: power the instance on."""
        cctxt = self._prepare(instance)
        rpc.cast(cctxt, ctxt, "start_instance", instance=_primitive(instance))

    def terminate_instance(self, ctxt, instance):
        """CAST: detach every volume, destroy the domain and the disk."""
        cctxt = self._prepare(instance)
        rpc.cast(cctxt, ctxt, "terminate_instance",
                   instance=_primitive(instance))

    def reboot_instance(self, ctxt, instance, reboot_type):
        """CAST: reboot the guest, ``reboot_type`` SOFT or HARD."""
        cctxt = self._prepare(instance, version="1.1")
        rpc.cast(cctxt, ctxt, "reboot_instance", instance=_primitive(instance),
                   reboot_type=reboot_type)

    def rebuild_instance(self, ctxt, instance, image, flavor,
                         reimage_boot_volume=False):
        """CAST: respawn the guest from ``image`` (the image record),
        its volumes re-attached; ``reimage_boot_volume``: Cinder first
        writes the image over a volume-backed server's root volume."""
        cctxt = self._prepare(instance, version="1.6")
        rpc.cast(cctxt, ctxt, "rebuild_instance",
                 instance=_primitive(instance), image=image,
                 flavor=_primitive(flavor),
                 reimage_boot_volume=reimage_boot_volume)

    def shelve_instance(self, ctxt, instance, image):
        """CAST: power off, snapshot into ``image`` (the record the API
        made), shelve; offload too when the host's
        ``shelved_offload_time`` is 0."""
        cctxt = self._prepare(instance, version="1.7")
        rpc.cast(cctxt, ctxt, "shelve_instance",
                 instance=_primitive(instance), image=image)

    def shelve_offload_instance(self, ctxt, instance):
        """CAST: destroy the guest, park its volumes, leave the host."""
        cctxt = self._prepare(instance, version="1.7")
        rpc.cast(cctxt, ctxt, "shelve_offload_instance",
                 instance=_primitive(instance))

    def unshelve_instance(self, ctxt, instance, image=None):
        """CAST to the instance's host (the one the API scheduled, for an
        offloaded server): spawn or power on, boot ``image``."""
        cctxt = self._prepare(instance, version="1.7")
        rpc.cast(cctxt, ctxt, "unshelve_instance",
                 instance=_primitive(instance), image=image)

    def pause_instance(self, ctxt, instance):
        """CAST: stop the guest's vCPUs, its memory kept in place."""
        cctxt = self._prepare(instance, version="1.8")
        rpc.cast(cctxt, ctxt, "pause_instance", instance=_primitive(instance))

    def unpause_instance(self, ctxt, instance):
        """CAST: run the paused guest's vCPUs again."""
        cctxt = self._prepare(instance, version="1.8")
        rpc.cast(cctxt, ctxt, "unpause_instance",
                 instance=_primitive(instance))

    def suspend_instance(self, ctxt, instance):
        """CAST: save the guest's memory to disk and stop it."""
        cctxt = self._prepare(instance, version="1.8")
        rpc.cast(cctxt, ctxt, "suspend_instance",
                 instance=_primitive(instance))

    def resume_instance(self, ctxt, instance):
        """CAST: restore the suspended guest from its saved memory."""
        cctxt = self._prepare(instance, version="1.8")
        rpc.cast(cctxt, ctxt, "resume_instance",
                 instance=_primitive(instance))

    def external_instance_event(self, ctxt, instances, events, host):
        """CAST: ``events`` (``name``, ``server_uuid``, ``tag``,
        ``status``) for ``instances``, all on compute host ``host``."""
        cctxt = self.client.prepare(server=host, version="1.5")
        rpc.cast(cctxt, ctxt, "external_instance_event",
                   instances=[_primitive(i) for i in instances],
                   events=events)

    def get_host_uptime(self, ctxt, host):
        """CALL: the ``uptime`` line of compute host ``host``.

        :raises NotImplementedError: its driver cannot tell.
        :raises MessagingTimeout: the host did not answer in time.
        """
        cctxt = self.client.prepare(server=host, version="1.3")
        return rpc.call(cctxt, ctxt, "get_host_uptime")

    def get_console_output(self, ctxt, instance, tail_length=None):
        """CALL: the guest's serial console log (its last lines).

        :raises ConsoleNotAvailable: the guest logs no console.
        :raises MessagingTimeout: the host did not answer in time.
        """
        cctxt = self._prepare(instance, version="1.1")
        return rpc.call(cctxt, ctxt, "get_console_output",
                          instance=_primitive(instance),
                          tail_length=tail_length)

    # -- ministack-fault (1.4) -

    def _fault_call(self, ctxt, host, method, **kwargs):
        cctxt = self.client.prepare(server=host, version="1.4",
                                    timeout=FAULT_CALL_TIMEOUT)
        try:
            return rpc.call(cctxt, ctxt, method, **kwargs)
        except messaging.MessagingTimeout:
            raise exception.ComputeServiceUnavailable(host=host) from None

    def arm_fault(self, ctxt, host, fault):
        """CALL: arm ``fault`` (the record miniapi built) on ``host``.

        :returns: the fault as the host holds it.
        :raises ComputeServiceUnavailable: the host did not answer in time.
        """
        return self._fault_call(ctxt, host, "arm_fault", fault=fault)

    def list_faults(self, ctxt, host):
        """CALL: ``{"host", "armed": [...], "fired": [...]}`` of ``host``.

        :raises ComputeServiceUnavailable: the host did not answer in time.
        """
        return self._fault_call(ctxt, host, "list_faults")

    def disarm_faults(self, ctxt, host, name=None, fault_id=None,
                      reason=None):
        """CALL: disarm ``name``'s faults (or ``fault_id``, or all) on
        ``host``; returns those removed.

        :raises ComputeServiceUnavailable: the host did not answer in time.
        """
        return self._fault_call(ctxt, host, "disarm_faults", name=name,
                                fault_id=fault_id, reason=reason)

    def drop_fault_everywhere(self, ctxt, fault_id, reason):
        """CAST to every compute host (fanout): forget fault ``fault_id``
        (a one-shot fault fired on one host; the others drop their copy)."""
        cctxt = self.client.prepare(fanout=True, version="1.4")
        rpc.cast(cctxt, ctxt, "disarm_faults", fault_id=fault_id,
                 reason=reason)
