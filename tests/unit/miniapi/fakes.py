"""Fakes with the real interfaces, for miniapi's unit tests.

* :class:`FakeVolumeAPI` has the methods of
  ``minicompute.volume.cinder.API`` that miniapi calls and keeps Cinder's
  volume/attachment states (as upstream Cinder moves them) in dicts,
  raising the same domain exceptions the real adapter raises.
* :class:`FakeComputeManager` is served over a real oslo.messaging
  ``fake:/`` transport with the real ``minicompute.rpcapi.ComputeAPI`` as
  client, so the API's CALL/CAST path (serialisation, context, remote
  exceptions) runs for real; it reserves device names and creates BDMs as
  the compute manager does and records the casts it receives.
"""

import threading
import uuid

import oslo_messaging as messaging

from minicompute import exception
from ministack import exception as ms_exception
from minicompute.db import api as db_api
from tests.support import waiting


class FakeVolumeAPI:
    def __init__(self):
        self.volumes = {}       # id -> volume dict (Cinder's shape)
        self.attachments = {}   # id -> {volume_id, instance, status}
        self.calls = []
        self.fail = {}          # method name -> exception to raise once
        self._lock = threading.Lock()

    def create_volume(self, project_id="p1", status="available",
                      multiattach=False):
        volume_id = str(uuid.uuid4())
        self.volumes[volume_id] = {"id": volume_id, "status": status,
                                   "multiattach": multiattach, "size": 1,
                                   "project_id": project_id,
                                   "migration_status": None}
        return volume_id

    def get_all(self, ctxt):
        """The project's volumes, as ``get`` shows each (os-volumes)."""
        self._maybe_fail("get_all")
        return [self.get(ctxt, vid) for vid, v in self.volumes.items()
                if ctxt.is_admin or v["project_id"] == ctxt.project_id]

    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None):
        self._maybe_fail("create")
        volume_id = self.create_volume(project_id=ctxt.project_id)
        self.volumes[volume_id].update({
            "size": size, "display_name": name, "description": description,
            "volume_type": volume_type or "lvmdriver-1",
            "metadata": dict(metadata or {}),
            "availability_zone": availability_zone or "nova",
            "created_at": "2026-12-02T10:00:00.000000",
            "snapshot_id": snapshot_id})
        return self.get(ctxt, volume_id)

    def _maybe_fail(self, name):
        self.calls.append(name)
        exc = self.fail.pop(name, None)
        if exc is not None:
            raise exc

    def _volume(self, ctxt, volume_id):
        volume = self.volumes.get(volume_id)
        if volume is None or (not ctxt.is_admin and
                              volume["project_id"] != ctxt.project_id):
            raise exception.VolumeNotFound(volume_id=volume_id)
        return volume

    def get(self, ctxt, volume_id):
        self._maybe_fail("get")
        volume = dict(self._volume(ctxt, volume_id))
        volume.setdefault("created_at", "2026-12-02T10:00:00.000000")
        volume.setdefault("availability_zone", "nova")
        volume["attachments"] = {
            a["instance"]: {"attachment_id": aid, "mountpoint": None}
            for aid, a in self.attachments.items()
            if a["volume_id"] == volume_id and a["status"] == "attached"}
        volume["attach_status"] = "attached" if volume["attachments"] \
            else "detached"
        return volume

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mountpoint=None):
        self._maybe_fail("attachment_create")
        with self._lock:
            volume = self._volume(ctxt, volume_id)
            allowed = ("available", "in-use") if volume["multiattach"] \
                else ("available",)
            if volume["status"] not in allowed:
                raise ms_exception.InvalidInput(
                    reason="Volume %s status must be available to reserve, "
                           "but the current status is %s."
                           % (volume_id, volume["status"]))
            volume["status"] = "reserved"
            attachment_id = str(uuid.uuid4())
            self.attachments[attachment_id] = {
                "volume_id": volume_id, "instance": instance_uuid,
                "status": "reserved"}
        return {"id": attachment_id, "status": "reserved",
                "instance": instance_uuid, "volume_id": volume_id,
                "attach_mode": "null", "connection_info": {}}

    def attachment_delete(self, ctxt, attachment_id):
        self._maybe_fail("attachment_delete")
        attachment = self.attachments.pop(attachment_id, None)
        if attachment is None:
            raise exception.VolumeAttachmentNotFound(
                attachment_id=attachment_id)
        self._recompute(attachment["volume_id"])

    def complete(self, attachment_id):
        """What the compute host's handshake ends with (test helper)."""
        attachment = self.attachments[attachment_id]
        attachment["status"] = "attached"
        self.volumes[attachment["volume_id"]]["status"] = "in-use"

    def _recompute(self, volume_id):
        statuses = sorted(a["status"] for a in self.attachments.values()
                          if a["volume_id"] == volume_id)
        status = statuses[0] if statuses else "detached"
        self.volumes[volume_id]["status"] = {
            "attached": "in-use", "detached": "available"}.get(status,
                                                               status)

    def begin_detaching(self, ctxt, volume_id):
        self._maybe_fail("begin_detaching")
        volume = self._volume(ctxt, volume_id)
        if volume["status"] != "in-use":
            raise ms_exception.InvalidInput(
                reason="Invalid volume: Unable to detach volume. Volume "
                       "status must be 'in-use' and attach_status must be "
                       "'attached' to detach.")
        volume["status"] = "detaching"

    def roll_detaching(self, ctxt, volume_id):
        self._maybe_fail("roll_detaching")
        volume = self._volume(ctxt, volume_id)
        if volume["status"] == "detaching":
            volume["status"] = "in-use"

    def detach(self, ctxt, volume_id, instance_uuid=None,
               attachment_id=None):
        self._maybe_fail("detach")
        for aid, att in list(self.attachments.items()):
            if att["volume_id"] == volume_id and \
                    att["instance"] == instance_uuid:
                del self.attachments[aid]
        self._recompute(volume_id)

    def delete(self, ctxt, volume_id):
        self._maybe_fail("delete")
        self._volume(ctxt, volume_id)
        del self.volumes[volume_id]


class FakeComputeManager:
    """RPC endpoint with the compute manager's method names."""

    target = messaging.Target(version="1.1")

    def __init__(self, host):
        self.host = host
        self.reset()

    def reset(self):
        self.casts = []
        self.fail_reserve = None
        self.delay_reserve = None   # threading.Event to wait on
        self.received = threading.Event()

    def reserve_block_device_name(self, ctxt, instance, device, volume_id,
                                  disk_bus=None, device_type=None, tag=None,
                                  multiattach=False):
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

    def attach_volume(self, ctxt, instance, bdm):
        self._record("attach_volume", instance=instance, bdm=bdm,
                     request_id=ctxt.request_id)

    def detach_volume(self, ctxt, instance, volume_id, attachment_id=None):
        self._record("detach_volume", instance=instance,
                     volume_id=volume_id, attachment_id=attachment_id)

    def build_and_run_instance(self, ctxt, instance, image, flavor):
        self._record("build_and_run_instance", instance=instance,
                     image=image, flavor=flavor)

    def stop_instance(self, ctxt, instance):
        self._record("stop_instance", instance=instance)

    def start_instance(self, ctxt, instance):
        self._record("start_instance", instance=instance)

    def terminate_instance(self, ctxt, instance):
        self._record("terminate_instance", instance=instance)

    def reboot_instance(self, ctxt, instance, reboot_type):
        self._record("reboot_instance", instance=instance,
                     reboot_type=reboot_type)

    def get_console_output(self, ctxt, instance, tail_length=None):
        """Three lines and a trailing newline, tailed as the host does."""
        from minicompute import utils
        output = b"line one\nline two\x07\nline three\n"
        if tail_length is not None:
            output = utils.tail_lines(output, int(tail_length))
        return output.decode("ascii", "replace")

    def _casts_for(self, instance_uuid):
        return [(name, kwargs) for name, kwargs in list(self.casts)
                if kwargs["instance"]["uuid"] == instance_uuid]

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
