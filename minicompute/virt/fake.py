"""An in-memory hypervisor with the real driver interface, for unit tests.

It keeps each instance's power state and attached devices in dicts and
can be told to fail the next attach or detach (``fail_attach`` /
``fail_detach``), which is how unit tests reach every undo path of the
attach and detach flows without libvirt. A paused guest (``pause``)
refuses every detach, as a real one cannot answer the unplug request.
"""

import os
import tempfile
import threading

from minicompute import exception
from minicompute import power_state
from minicompute.virt import driver
from ministack import image_store

FAKE_RESOURCES = {
    "vcpus": 4, "memory_mb": 8192, "local_gb": 100,
    "disk_available_least": 90, "hypervisor_type": "QEMU",
    "hypervisor_version": 7002022,
    "cpu_info": '{"arch": "x86_64", "model": "fake", "vendor": "Fake", '
                '"topology": {"cells": 1, "sockets": 1, "cores": 4, '
                '"threads": 1}, "features": ["fpu"]}',
}
#: host name -> its FakeDriver (``init_host``): where a fake live
#: migration moves the guest to.
HOSTS = {}

FAKE_UPTIME = " 10:00:00 up 3 days,  1:02,  1 user,  load average: 0.10"


class FakeDriver(driver.ComputeDriver):
    supports_multiattach = True

    def __init__(self, host="fake-host"):
        self.host = host
        self.instances = {}   # uuid -> {"power": int, "devices": {dev: ci}}
        self.fail_attach = None   # an exception to raise on the next attach
        self.fail_detach = None   # an exception to raise on the next detach
        self.fail_spawn = None    # an exception to raise on the next spawn
        self.calls = []
        self.kept = set()   # uuids whose disk a resize keeps aside
        self._lock = threading.Lock()
        # What the node reports (tests change them per host).
        self.resources = dict(FAKE_RESOURCES)
        self.uptime = FAKE_UPTIME

    def check_host(self):
        """Nothing to check: the fake hypervisor is always there."""

    def init_host(self, host):
        self.host = host
        HOSTS[host] = self

    def get_available_resource(self, nodename):
        return dict(self.resources, hypervisor_hostname=nodename)

    def get_host_uptime(self):
        return self.uptime

    def spawn(self, ctxt, instance, image, flavor, block_device_info=None):
        """A running guest with the volumes of ``block_device_info`` as
        its devices; ``fail_spawn`` (an exception) fails the next one
        after they were "connected"."""
        self.calls.append(("spawn", instance["uuid"]))
        devices = {v["mount_device"].rpartition("/")[2]: v["connection_info"]
                   for v in block_device_info or ()}
        if self.fail_spawn is not None:
            exc, self.fail_spawn = self.fail_spawn, None
            raise exc
        self.instances[instance["uuid"]] = {
            "power": power_state.RUNNING, "devices": devices}

    def destroy(self, ctxt, instance, block_device_info=None):
        self.calls.append(("destroy", instance["uuid"]))
        if block_device_info:
            self.calls.append(("disconnect", instance["uuid"],
                               [v["volume_id"] for v in block_device_info]))
        self.instances.pop(instance["uuid"], None)

    def snapshot(self, ctxt, instance, record, images_root):
        """Empty files uploaded for real into the snapshot image."""
        self.calls.append(("snapshot", instance["uuid"], record["id"]))
        self._get(instance)
        with tempfile.TemporaryDirectory() as scratch:
            files = {}
            for key in ("disk", "kernel", "initrd"):
                files[key] = os.path.join(scratch, key)
                open(files[key], "w").close()
            return image_store.upload_files(record["id"], files,
                                            root=images_root)

    def power_off(self, instance, timeout=0):
        self._get(instance)["power"] = power_state.SHUTDOWN

    def power_on(self, ctxt, instance):
        self.calls.append(("power_on", instance["uuid"]))
        self._get(instance)["power"] = power_state.RUNNING

    def pause(self, instance):
        self.calls.append(("pause", instance["uuid"]))
        self._get(instance)["power"] = power_state.PAUSED

    def unpause(self, instance):
        self.calls.append(("unpause", instance["uuid"]))
        self._get(instance)["power"] = power_state.RUNNING

    def suspend(self, ctxt, instance):
        """The fake's managed save: shut off, the devices kept."""
        self.calls.append(("suspend", instance["uuid"]))
        self._get(instance)["power"] = power_state.SHUTDOWN

    def resume(self, ctxt, instance):
        self.calls.append(("resume", instance["uuid"]))
        self._get(instance)["power"] = power_state.RUNNING

    def reboot(self, ctxt, instance, reboot_type):
        self.calls.append(("reboot", instance["uuid"], reboot_type))
        self._get(instance)["power"] = power_state.RUNNING

    def get_console_output(self, instance):
        self._get(instance)
        return b"fake console line 1\nfake console line 2\n"

    def get_power_state(self, instance):
        entry = self.instances.get(instance["uuid"])
        return entry["power"] if entry else power_state.NOSTATE

    def instance_exists(self, instance):
        return instance["uuid"] in self.instances

    def get_volume_connector(self, instance):
        return {"ip": "127.0.0.1", "host": self.host, "multipath": False,
                "initiator": "iqn.2004-10.org.fake:%s" % self.host,
                "platform": "x86_64", "os_type": "linux"}

    def attach_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        self.calls.append(("attach_volume", instance["uuid"], mountpoint))
        if self.fail_attach is not None:
            exc, self.fail_attach = self.fail_attach, None
            raise exc
        dev = mountpoint.rpartition("/")[2]
        with self._lock:
            devices = self._get(instance)["devices"]
            if dev in devices:
                raise exception.DevicePathInUse(path=mountpoint)
            devices[dev] = connection_info

    def extend_volume(self, ctxt, connection_info, instance, new_size,
                      mountpoint):
        self.calls.append(("extend_volume", instance["uuid"], mountpoint,
                           new_size))
        if getattr(self, "fail_extend", None) is not None:
            exc, self.fail_extend = self.fail_extend, None
            raise exc

    def detach_volume(self, ctxt, connection_info, instance, mountpoint):
        self.calls.append(("detach_volume", instance["uuid"], mountpoint))
        if self.fail_detach is not None:
            exc, self.fail_detach = self.fail_detach, None
            raise exc
        dev = mountpoint.rpartition("/")[2]
        if self._get(instance)["power"] == power_state.PAUSED:
            raise exception.DeviceDetachFailed(
                device=dev, reason="the paused guest did not release it")
        devices = self._get(instance)["devices"]
        if dev not in devices:
            raise exception.DiskNotFound(location=mountpoint)
        del devices[dev]

    def get_attached_devices(self, instance):
        return sorted(self._get(instance)["devices"])

    def list_volume_disks(self, instance):
        entry = self.instances.get(instance["uuid"])
        if entry is None:
            return None
        return {"active": entry["power"] == power_state.RUNNING, "disks": {
            dev: {"serial": (ci or {}).get("serial"), "live": True,
                  "config": True, "xml": ""}
            for dev, ci in entry["devices"].items()}}

    def unplug_disk(self, ctxt, instance, dev):
        self.calls.append(("unplug_disk", instance["uuid"], dev))
        devices = self._get(instance)["devices"]
        if dev not in devices:
            raise exception.DiskNotFound(location=dev)
        del devices[dev]

    def replug_volume(self, ctxt, connection_info, instance, mountpoint,
                      disk_bus=None, device_type=None):
        self.calls.append(("replug_volume", instance["uuid"], mountpoint))
        self._get(instance)["devices"][mountpoint.rpartition("/")[2]] = \
            connection_info

    # -- resize and cold migration -

    def migrate_disk_and_power_off(self, ctxt, instance, flavor,
                                   block_device_info=None):
        """The guest goes (its volumes disconnected); its disk is kept
        aside under ``self.kept`` until a confirm or a revert."""
        self.calls.append(("migrate_disk", instance["uuid"]))
        self._get(instance)
        self.destroy(ctxt, instance, block_device_info)
        self.kept.add(instance["uuid"])
        return {"disk_dir": "fake:%s_resize" % instance["uuid"]}

    def finish_migration(self, ctxt, instance, disk_info, image, flavor,
                         block_device_info=None, power_on=True):
        self.calls.append(("finish_migration", instance["uuid"],
                           flavor["memory_mb"], flavor["vcpus"]))
        self._respawn(ctxt, instance, image, flavor, block_device_info,
                      power_on)

    def confirm_migration(self, ctxt, instance):
        self.calls.append(("confirm_migration", instance["uuid"]))
        self.kept.discard(instance["uuid"])

    def finish_revert_migration(self, ctxt, instance, image, flavor,
                                block_device_info=None, power_on=True):
        self.calls.append(("finish_revert_migration", instance["uuid"],
                           flavor["memory_mb"], flavor["vcpus"]))
        self._respawn(ctxt, instance, image, flavor, block_device_info,
                      power_on)
        self.kept.discard(instance["uuid"])

    def _respawn(self, ctxt, instance, image, flavor, block_device_info,
                 power_on):
        self.spawn(ctxt, instance, image, flavor, block_device_info)
        entry = self.instances[instance["uuid"]]
        entry["flavor"] = (flavor["memory_mb"], flavor["vcpus"])
        if not power_on:
            entry["power"] = power_state.SHUTDOWN

    def _get(self, instance):
        try:
            return self.instances[instance["uuid"]]
        except KeyError:
            raise exception.InstanceNotFound(instance_id=instance["uuid"])

    # -- live migration -

    def check_can_live_migrate_destination(self, ctxt, instance):
        return {"peer_uri": "fake://%s" % self.host,
                "inbound_addr": "127.0.0.1", "dest_dir": "/fake/dest"}

    def check_can_live_migrate_source(self, ctxt, instance):
        self._get(instance)
        return {"source_dir": "/fake/source",
                "local_disks": list(getattr(self, "local_disks", ["vda"])),
                "kernel": None, "initrd": None}

    def pre_live_migration(self, ctxt, instance, migrate_data, volumes):
        self.calls.append(("pre_live_migration", instance["uuid"],
                           [v["volume_id"] for v in volumes]))
        fail = getattr(self, "fail_pre_live_migration", None)
        if fail is not None:
            self.fail_pre_live_migration = None
            raise fail
        self.incoming = {v["mount_device"].rpartition("/")[2]:
                         v["connection_info"] for v in volumes}
        return {"volume_disks": {v["volume_id"]: "<disk/>"
                                 for v in volumes}}

    def live_migration(self, ctxt, instance, migrate_data):
        self.calls.append(("live_migration", instance["uuid"],
                           migrate_data["dest_host"]))
        fail = getattr(self, "fail_live_migration", None)
        if fail is not None:
            self.fail_live_migration = None
            raise fail
        dest = HOSTS[migrate_data["dest_host"]]
        entry = self.instances.pop(instance["uuid"])
        dest.instances[instance["uuid"]] = dict(
            entry, devices=dict(getattr(dest, "incoming", {})))

    def post_live_migration_at_source(self, ctxt, instance, volumes):
        self.calls.append(("post_live_migration_at_source",
                           instance["uuid"],
                           [v["volume_id"] for v in volumes]))

    def remove_volume_connection(self, ctxt, instance, connection_info):
        self.calls.append(("remove_volume_connection", instance["uuid"],
                           connection_info.get("serial")))

    def rollback_live_migration_at_destination(self, ctxt, instance,
                                               volumes=()):
        self.calls.append(("rollback_live_migration_at_destination",
                           instance["uuid"]))

    def live_migration_abort(self, instance):
        self.calls.append(("live_migration_abort", instance["uuid"]))

    def live_migration_force_complete(self, instance):
        self.calls.append(("live_migration_force_complete",
                           instance["uuid"]))
