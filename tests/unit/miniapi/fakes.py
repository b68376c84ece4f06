"""The fake compute host of miniapi's unit tests (Cinder's fake is the
shared ``tests.support.fake_cinder``).

:class:`FakeComputeManager` is served over a real oslo.messaging
``fake:/`` transport with the real ``minicompute.rpcapi.ComputeAPI`` as
client, so the API's CALL/CAST path (serialisation, context, remote
exceptions) runs for real; it reserves device names and creates BDMs as
the compute manager does and records the casts it receives.
"""

import threading

import oslo_messaging as messaging

from minicompute.db import api as db_api
from minicompute.virt import fake as fake_driver
from ministack import context
from tests.support import waiting

UPTIME = fake_driver.FAKE_UPTIME


def report_node(host, host_ip="192.0.2.10", **facts):
    """What ``host``'s resource tracker writes: its node ``host`` in
    ``compute_nodes`` with the fake driver's facts (``facts`` override
    them); returns the row."""
    values = dict(fake_driver.FAKE_RESOURCES, host_ip=host_ip, **facts)
    return db_api.compute_node_report(context.get_admin_context(), host,
                                      host, values)


def heartbeat(host):
    """``host``'s compute service reports in (created when new)."""
    db_api.service_heartbeat(context.get_admin_context(), host,
                             "nova-compute", "compute")


class FakeComputeManager:
    """RPC endpoint with the compute manager's method names."""

    target = messaging.Target(version="1.10")

    def __init__(self, host):
        self.host = host
        self._in_flight = 0
        self._idle = threading.Condition()
        self.reset()

    def wait_idle(self, timeout=15):
        """Let a delayed reservation go and wait until none runs: one
        still writing its BDM when the test's in-memory database is
        disposed would use a closed SQLite connection (a segfault)."""
        if self.delay_reserve is not None:
            self.delay_reserve.set()
        with self._idle:
            return self._idle.wait_for(lambda: not self._in_flight, timeout)

    def reset(self):
        self.casts = []
        self.uptime_calls = []
        # what get_host_uptime answers (None: NotImplementedError, as a
        # driver without the feature)
        self.uptime = UPTIME
        self.fail_reserve = None
        # what check_can_live_migrate_destination raises (None: passes)
        self.fail_live_migration_check = None
        self.delay_reserve = None   # threading.Event to wait on
        self.received = threading.Event()

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  disk_bus=None, device_type=None, tag=None,
                                  multiattach=False):
        with self._idle:
            self._in_flight += 1
        try:
            return self._reserve(ctxt, instance, volume_id, disk_bus,
                                 device_type, tag)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def _reserve(self, ctxt, instance, volume_id, disk_bus, device_type,
                 tag):
        if self.delay_reserve is not None:
            self.delay_reserve.wait(10)
        if self.fail_reserve is not None:
            exc, self.fail_reserve = self.fail_reserve, None
            raise exc
        used = {b.device_name for b in
                db_api.bdm_get_all_by_instance(ctxt, instance["uuid"])}
        used.add("/dev/vda")
        name = next("/dev/vd%s" % c for c in "bcdefghijklmnopqrstuvwxyz"
                    if "/dev/vd%s" % c not in used)
        bdm = db_api.bdm_create(ctxt, {
            "instance_uuid": instance["uuid"], "volume_id": volume_id,
            "source_type": "volume", "destination_type": "volume",
            "device_name": name, "tag": tag, "disk_bus": disk_bus,
            "device_type": device_type, "delete_on_termination": False})
        return db_api.to_dict(bdm)

    def _record(self, name, **kwargs):
        self.casts.append((name, kwargs))
        self.received.set()

    def attach_volume(self, ctxt, instance, bdm, multiattach=None):
        self._record("attach_volume", instance=instance, bdm=bdm,
                     multiattach=multiattach, request_id=ctxt.request_id)

    def external_instance_event(self, ctxt, instances, events):
        self._record("external_instance_event",
                     instances=[i["uuid"] for i in instances], events=events,
                     request_id=ctxt.request_id)

    def detach_volume(self, ctxt, instance, volume_id, attachment_id=None):
        self._record("detach_volume", instance=instance,
                     volume_id=volume_id, attachment_id=attachment_id)

    def build_and_run_instance(self, ctxt, instance, image, flavor):
        self._record("build_and_run_instance", instance=instance,
                     image=image, flavor=flavor)

    def stop_instance(self, ctxt, instance):
        self._record("stop_instance", instance=instance)

    def rebuild_instance(self, ctxt, instance, image, flavor,
                         reimage_boot_volume=False):
        self._record("rebuild_instance", instance=instance, image=image,
                     flavor=flavor, reimage_boot_volume=reimage_boot_volume)

    def start_instance(self, ctxt, instance):
        self._record("start_instance", instance=instance)

    def terminate_instance(self, ctxt, instance):
        self._record("terminate_instance", instance=instance)

    def shelve_instance(self, ctxt, instance, image):
        self._record("shelve_instance", instance=instance, image=image)

    def shelve_offload_instance(self, ctxt, instance):
        self._record("shelve_offload_instance", instance=instance)

    def unshelve_instance(self, ctxt, instance, image=None):
        self._record("unshelve_instance", instance=instance, image=image)

    @messaging.expected_exceptions(Exception)
    def check_can_live_migrate_destination(self, ctxt, instance,
                                           block_migration=None):
        self._record("check_can_live_migrate_destination",
                     instance=instance, block_migration=block_migration)
        if self.fail_live_migration_check is not None:
            raise self.fail_live_migration_check
        return {"dest_host": self.host, "block_migration":
                block_migration if block_migration is not None else True}

    def live_migration(self, ctxt, instance, dest, migrate_data,
                       migration=None):
        self._record("live_migration", instance=instance, dest=dest,
                     migrate_data=migrate_data, migration=migration)

    def live_migration_abort(self, ctxt, instance, migration_id):
        self._record("live_migration_abort", instance=instance,
                     migration_id=migration_id)

    def live_migration_force_complete(self, ctxt, instance):
        self._record("live_migration_force_complete", instance=instance)

    def pause_instance(self, ctxt, instance):
        self._record("pause_instance", instance=instance)

    def unpause_instance(self, ctxt, instance):
        self._record("unpause_instance", instance=instance)

    def suspend_instance(self, ctxt, instance):
        self._record("suspend_instance", instance=instance)

    def resume_instance(self, ctxt, instance):
        self._record("resume_instance", instance=instance)

    def prep_resize(self, ctxt, instance, migration, image, flavor):
        self._record("prep_resize", instance=instance, migration=migration,
                     image=image, flavor=flavor, host=self.host)

    def confirm_resize(self, ctxt, instance, migration):
        self._record("confirm_resize", instance=instance,
                     migration=migration, host=self.host)

    def revert_resize(self, ctxt, instance, migration, image):
        self._record("revert_resize", instance=instance,
                     migration=migration, image=image, host=self.host)

    def reboot_instance(self, ctxt, instance, reboot_type):
        self._record("reboot_instance", instance=instance,
                     reboot_type=reboot_type)

    def get_host_uptime(self, ctxt):
        self.uptime_calls.append(self.host)
        if self.uptime is None:
            raise NotImplementedError()
        return self.uptime

    def get_console_output(self, ctxt, instance, tail_length=None):
        """Three lines and a trailing newline, tailed as the host does."""
        from minicompute import utils
        output = b"line one\nline two\x07\nline three\n"
        if tail_length is not None:
            output = utils.tail_lines(output, int(tail_length))
        return output.decode("ascii", "replace")

    def _casts_for(self, instance_uuid):
        """The casts about one instance (a cast of several instances, as
        ``external_instance_event``'s, names them in ``instances``; some
        casts name an instance by its uuid alone)."""
        def about(kwargs):
            named = [kwargs["instance"]] if "instance" in kwargs else \
                kwargs.get("instances") or []
            return any((i.get("uuid") if isinstance(i, dict) else i)
                       == instance_uuid for i in named)
        return [(name, kwargs) for name, kwargs in list(self.casts)
                if about(kwargs)]

    def wait_for_cast(self, name, instance_uuid, timeout=5):
        """The kwargs of the first cast of ``name`` for the instance.

        Scoped to one instance: the RPC server lives for the whole
        session, so a cast an earlier test sent may land during this one.
        """
        def first():
            for cast_name, kwargs in self._casts_for(instance_uuid):
                if cast_name == name:
                    return kwargs
        return waiting.wait_for(
            "a %s cast for %s" % (name, instance_uuid), first,
            lambda kwargs: kwargs is not None, timeout=timeout,
            interval=0.01)

    def wait_for_casts(self, count, instance_uuid, timeout=5):
        """Casts are asynchronous even on fake:/; wait for ``count`` of
        the instance's and return them (casts may reorder)."""
        try:
            waiting.wait_for(
                "%d casts for %s" % (count, instance_uuid),
                lambda: len(self._casts_for(instance_uuid)) >= count,
                timeout=timeout, interval=0.01)
        except waiting.WaitTimeout:
            pass   # the caller asserts on what came
        return self._casts_for(instance_uuid)
