"""A fake Cinder (the minicompute.volume.cinder.API interface) for tests.

It keeps volumes and attachments in dicts and moves statuses the way
upstream Cinder's attachment API does, so unit tests can assert the
volume's journey (available -> reserved -> attaching -> in-use ...).
"""

import uuid

from minicompute import exception
from ministack import exception as ms_exception


class FakeVolumeAPI:
    def __init__(self):
        self.volumes = {}
        self.attachments = {}
        self.calls = []
        self.fail = {}   # method name -> exception to raise once

    def create(self, multiattach=False):
        vid = str(uuid.uuid4())
        self.volumes[vid] = {"id": vid, "status": "available",
                             "multiattach": multiattach, "size": 1}
        return vid

    def _check(self, name):
        self.calls.append(name)
        if name in self.fail:
            raise self.fail.pop(name)

    def _vol(self, volume_id):
        try:
            return self.volumes[volume_id]
        except KeyError:
            raise exception.VolumeNotFound(volume_id=volume_id)

    def _recompute(self, volume_id):
        live = [a["attach_status"] for a in self.attachments.values()
                if a["volume_id"] == volume_id]
        order = ["attached", "attaching", "detaching", "reserved"]
        status = next((s for s in order if s in live), "detached")
        self.volumes[volume_id]["status"] = {
            "attached": "in-use", "detached": "available"}.get(status,
                                                              status)

    def get(self, ctxt, volume_id):
        self._check("get")
        vol = dict(self._vol(volume_id))
        vol["attachments"] = {
            a["instance_uuid"]: {"attachment_id": aid}
            for aid, a in self.attachments.items()
            if a["volume_id"] == volume_id
            and a["attach_status"] == "attached"}
        return vol

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mountpoint=None):
        self._check("attachment_create")
        vol = self._vol(volume_id)
        ok = ("available", "in-use") if vol["multiattach"] else \
            ("available",)
        if vol["status"] not in ok:
            raise ms_exception.InvalidInput(reason="volume not available")
        aid = str(uuid.uuid4())
        self.attachments[aid] = {"volume_id": volume_id,
                                 "instance_uuid": instance_uuid,
                                 "attach_status": "reserved"}
        vol["status"] = "reserved"
        return {"id": aid}

    def _att(self, aid):
        try:
            return self.attachments[aid]
        except KeyError:
            raise exception.VolumeAttachmentNotFound(attachment_id=aid)

    def attachment_list(self, ctxt, instance_id=None, volume_id=None):
        self._check("attachment_list")
        return [{"id": aid, "volume_id": a["volume_id"],
                 "instance": a["instance_uuid"],
                 "status": a["attach_status"]}
                for aid, a in self.attachments.items()
                if instance_id in (None, a["instance_uuid"])
                and volume_id in (None, a["volume_id"])]

    def attachment_get(self, ctxt, attachment_id):
        self._check("attachment_get")
        att = self._att(attachment_id)
        return {"id": attachment_id, "status": att["attach_status"],
                "volume_id": att["volume_id"]}

    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        self._check("attachment_update")
        att = self._att(attachment_id)
        att["attach_status"] = "attaching"
        self.volumes[att["volume_id"]]["status"] = "attaching"
        return {"id": attachment_id, "connection_info": {
            "driver_volume_type": "iscsi",
            "data": {"target_iqn": "iqn.x:%s" % att["volume_id"],
                     "target_lun": 1, "access_mode": "rw"}}}

    def attachment_complete(self, ctxt, attachment_id):
        self._check("attachment_complete")
        att = self._att(attachment_id)
        att["attach_status"] = "attached"
        self._recompute(att["volume_id"])

    def attachment_delete(self, ctxt, attachment_id):
        self._check("attachment_delete")
        att = self._att(attachment_id)
        del self.attachments[attachment_id]
        self._recompute(att["volume_id"])

    def begin_detaching(self, ctxt, volume_id):
        self._check("begin_detaching")
        vol = self._vol(volume_id)
        if vol["status"] != "in-use":
            raise ms_exception.InvalidInput(reason="not in-use")
        vol["status"] = "detaching"

    def roll_detaching(self, ctxt, volume_id):
        self._check("roll_detaching")
        vol = self._vol(volume_id)
        if vol["status"] == "detaching":
            vol["status"] = "in-use"

    def reset_status(self, ctxt, volume_id, status, attach_status=None):
        self._check("reset_status")
        self._vol(volume_id)["status"] = status

    def reserve_volume(self, ctxt, volume_id):
        self._check("reserve_volume")
        self._vol(volume_id)["status"] = "attaching"

    def unreserve_volume(self, ctxt, volume_id):
        self._check("unreserve_volume")
        self._vol(volume_id)["status"] = "available"

    def initialize_connection(self, ctxt, volume_id, connector):
        self._check("initialize_connection")
        return {"driver_volume_type": "iscsi", "data": {"access_mode": "rw"}}

    def terminate_connection(self, ctxt, volume_id, connector):
        self._check("terminate_connection")

    def attach(self, ctxt, volume_id, instance_uuid, mountpoint, mode="rw"):
        self._check("attach")
        self._vol(volume_id)["status"] = "in-use"

    def detach(self, ctxt, volume_id, instance_uuid=None,
               attachment_id=None):
        self._check("detach")
        self._vol(volume_id)["status"] = "available"

    def delete(self, ctxt, volume_id):
        self._check("delete")
        del self.volumes[volume_id]
