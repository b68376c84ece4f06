"""The one Cinder fake of the unit tests: ``minicompute.volume.cinder.API``
without the HTTP.

:class:`FakeCinder` has every method of the real adapter, with the same
signatures, results in the same shapes (``get`` keys ``attachments`` by
instance uuid; ``attachment_list`` returns Cinder's attachment summaries;
``attachment_update`` returns ``connection_info`` nested) and the same
domain exceptions the adapter translates Cinder's faults to
(VolumeNotFound, VolumeAttachmentNotFound, InvalidInput). It moves
volume and attachment statuses as upstream Cinder's attachment API does
(available -> reserved -> attaching -> in-use -> detaching ...), and it
scopes volumes by project as Cinder does: a volume of another project is
not found unless the context is admin. Both sides of the attach use it:
miniapi (the API phase) and the compute manager and reconciler.

Tests arrange and inspect through a small public API, never through the
fake's dicts:

* arrange: :meth:`add_volume`, :meth:`set_volume_fields`,
  :meth:`fail_next`, :meth:`complete_attachment` (the compute host's end
  of the handshake, for API tests that have no host) and
  :meth:`drop_attachments` (Cinder's ledger losing attachments behind
  nova's back, for the reconciler);
* inspect: :meth:`status`, :meth:`has_volume`, :meth:`volume_ids`,
  :meth:`attachment_ids`, :meth:`attachment_status` and :attr:`calls`
  (the adapter methods called, in order).
"""

import threading
import uuid

from minicompute import exception
from ministack import exception as ms_exception

CREATED_AT = "2026-12-02T10:00:00.000000"

# A volume's status follows its liveliest attachment (Cinder's
# _attachment_reserve / attachment_delete recompute).
_ATTACH_ORDER = ("attached", "attaching", "detaching", "reserved")
_VOLUME_STATUS = {"attached": "in-use", "detached": "available"}


class FakeCinder:
    """Cinder's volumes and attachments in dicts, behind the adapter's API.

    :ivar calls: names of the adapter methods called, in call order
        (arrange/inspect helpers are not recorded).
    """

    def __init__(self):
        self.calls = []
        self._volumes = {}       # id -> volume dict (Cinder's fields)
        self._attachments = {}   # id -> {volume_id, instance, status, ...}
        self._fail = {}          # method name -> exception, raised once
        #: the status the next created volume starts in (None: available)
        self.create_status = None
        #: called with (volume_id, image_id) after a reimage_volume
        self.on_reimage = None
        self._lock = threading.RLock()

    # -- arrange ---------------------------------------------------------

    def add_volume(self, project_id="p1", status="available",
                   multiattach=False, name=None, size=1):
        """A volume as if made in Cinder beforehand; returns its id."""
        volume_id = str(uuid.uuid4())
        with self._lock:
            self._volumes[volume_id] = {
                "id": volume_id, "status": status, "size": size,
                "multiattach": multiattach, "project_id": project_id,
                "name": name, "migration_status": None,
                "created_at": CREATED_AT, "updated_at": None,
                "availability_zone": "nova"}
        return volume_id

    def set_volume_fields(self, volume_id, **fields):
        """Change stored fields of a volume (``name``, ``updated_at``...)."""
        with self._lock:
            self._volumes[volume_id].update(fields)

    def fail_next(self, method, exc):
        """The next call of adapter method ``method`` raises ``exc``."""
        self._fail[method] = exc

    def complete_attachment(self, attachment_id):
        """The compute host's end of the handshake: attached, in-use."""
        with self._lock:
            attachment = self._attachments[attachment_id]
            attachment["status"] = "attached"
            self._recompute(attachment["volume_id"])

    def drop_attachments(self, instance_uuid=None, recompute=False):
        """Cinder's ledger loses attachments (of ``instance_uuid``, or
        all) without anyone being told. ``recompute=False`` leaves the
        volumes' statuses as they were, as a lost row does."""
        with self._lock:
            gone = [aid for aid, a in self._attachments.items()
                    if instance_uuid in (None, a["instance"])]
            volume_ids = {self._attachments.pop(aid)["volume_id"]
                          for aid in gone}
            if recompute:
                for volume_id in volume_ids:
                    self._recompute(volume_id)

    # -- inspect ---------------------------------------------------------

    def status(self, volume_id):
        """The volume's status (KeyError if there is no such volume)."""
        return self._volumes[volume_id]["status"]

    def has_volume(self, volume_id):
        return volume_id in self._volumes

    def volume_ids(self):
        return list(self._volumes)

    def attachment_ids(self, volume_id=None, instance_uuid=None):
        """Live attachments' ids, optionally of one volume or instance."""
        return [aid for aid, a in list(self._attachments.items())
                if volume_id in (None, a["volume_id"])
                and instance_uuid in (None, a["instance"])]

    def attachment_status(self, attachment_id):
        return self._attachments[attachment_id]["status"]

    # -- plumbing --------------------------------------------------------

    def _called(self, name):
        self.calls.append(name)
        exc = self._fail.pop(name, None)
        if exc is not None:
            raise exc

    def _volume(self, ctxt, volume_id):
        volume = self._volumes.get(volume_id)
        if volume is None or not (ctxt.is_admin or
                                  volume["project_id"] == ctxt.project_id):
            raise exception.VolumeNotFound(volume_id=volume_id)
        return volume

    def _attachment(self, attachment_id):
        try:
            return self._attachments[attachment_id]
        except KeyError:
            raise exception.VolumeAttachmentNotFound(
                attachment_id=attachment_id) from None

    def _recompute(self, volume_id):
        live = {a["status"] for a in self._attachments.values()
                if a["volume_id"] == volume_id}
        status = next((s for s in _ATTACH_ORDER if s in live), "detached")
        self._volumes[volume_id]["status"] = _VOLUME_STATUS.get(status,
                                                                status)

    def _attachment_view(self, attachment_id):
        attachment = self._attachments[attachment_id]
        view = {"id": attachment_id, "status": attachment["status"],
                "instance": attachment["instance"],
                "volume_id": attachment["volume_id"],
                "attach_mode": attachment["attach_mode"],
                "connection_info": {}}
        if attachment["connector"] is not None:
            view["connection_info"] = {
                "driver_volume_type": "iscsi",
                "data": {"target_iqn": "iqn.2010-10.org.openstack:%s"
                                       % attachment["volume_id"],
                         "target_lun": 1, "access_mode": "rw"}}
        return view

    # -- volumes ---------------------------------------------------------

    def get(self, ctxt, volume_id):
        """:raises VolumeNotFound:"""
        self._called("get")
        with self._lock:
            volume = dict(self._volume(ctxt, volume_id))
            attachments = {
                a["instance"]: {"attachment_id": aid,
                                "mountpoint": a["mountpoint"],
                                "host_name": None}
                for aid, a in self._attachments.items()
                if a["volume_id"] == volume_id and a["status"] == "attached"}
        volume.update({"display_name": volume["name"],
                       "attachments": attachments,
                       "attach_status": "attached" if attachments
                       else "detached"})
        return volume

    def get_all(self, ctxt):
        """The caller's volumes (every project's for an admin)."""
        self._called("get_all")
        return [self.get(ctxt, vid) for vid, v in list(self._volumes.items())
                if ctxt.is_admin or v["project_id"] == ctxt.project_id]

    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None, image_id=None):
        """A new available volume (``create_status`` makes it start in
        that status), shown as ``get``."""
        self._called("create")
        volume_id = self.add_volume(project_id=ctxt.project_id, size=size,
                                    name=name)
        if image_id:
            self.set_volume_fields(
                volume_id, bootable="true",
                volume_image_metadata={"image_id": image_id})
        status, self.create_status = self.create_status, None
        if status:
            self.set_volume_fields(volume_id, status=status)
        self.set_volume_fields(
            volume_id, description=description,
            volume_type=volume_type or "lvmdriver-1",
            metadata=dict(metadata or {}),
            availability_zone=availability_zone or "nova",
            snapshot_id=snapshot_id)
        return self.get(ctxt, volume_id)

    def reimage_volume(self, ctxt, volume_id, image_id,
                       reimage_reserved=False):
        """os-reimage: the volume records ``image_id`` and
        :attr:`on_reimage` (if set) is called with ``(volume_id,
        image_id)``, as Cinder's event would reach nova. :raises
        InvalidInput: not available/error (or reserved, if allowed)."""
        self._called("reimage_volume")
        with self._lock:
            volume = self._volume(ctxt, volume_id)
            allowed = ("available", "error") + (
                ("reserved",) if reimage_reserved else ())
            if volume["status"] not in allowed:
                raise ms_exception.InvalidInput(
                    reason="Volume %s status must be %s, but current "
                           "status is %s." % (volume_id, " or ".join(allowed),
                                              volume["status"]))
            volume["volume_image_metadata"] = {"image_id": image_id}
        if self.on_reimage is not None:
            self.on_reimage(volume_id, image_id)

    def check_attached(self, ctxt, volume):
        """:raises InvalidVolume: the volume is not in-use."""
        if volume["status"] != "in-use":
            raise exception.InvalidVolume(
                reason="volume '%s' status must be 'in-use'. Currently in "
                       "'%s' status" % (volume["id"], volume["status"]))

    def delete(self, ctxt, volume_id):
        self._called("delete")
        with self._lock:
            self._volume(ctxt, volume_id)
            del self._volumes[volume_id]

    # -- the 3.44 attachment handshake -------------------------------------

    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mountpoint=None):
        """Reserve the volume. :raises InvalidInput: not available (or,
        multiattach, not available/in-use)."""
        self._called("attachment_create")
        with self._lock:
            volume = self._volume(ctxt, volume_id)
            allowed = ("available", "in-use") if volume["multiattach"] \
                else ("available",)
            # As Cinder (LP 1694530): the same instance may reserve a
            # volume it already holds; the volume's status is kept.
            same_instance = any(
                a["volume_id"] == volume_id and a["instance"] ==
                instance_uuid for a in self._attachments.values())
            if volume["status"] not in allowed and not same_instance:
                raise ms_exception.InvalidInput(
                    reason="Volume %s status must be available to reserve, "
                           "but the current status is %s."
                           % (volume_id, volume["status"]))
            attachment_id = str(uuid.uuid4())
            self._attachments[attachment_id] = {
                "volume_id": volume_id, "instance": instance_uuid,
                "status": "reserved", "connector": None,
                "mountpoint": mountpoint, "attach_mode": "null"}
            if not same_instance:
                volume["status"] = "reserved"
            if connector is not None:
                # Created with a connector (a live migration's
                # destination): exported at once, as Cinder does.
                self._attachments[attachment_id].update(
                    connector=dict(connector), status="attaching",
                    attach_mode="rw")
                self._recompute(volume_id)
            return self._attachment_view(attachment_id)

    def attachment_get(self, ctxt, attachment_id):
        """:raises VolumeAttachmentNotFound:"""
        self._called("attachment_get")
        with self._lock:
            self._attachment(attachment_id)
            return self._attachment_view(attachment_id)

    def attachment_list(self, ctxt, instance_id=None, volume_id=None):
        """Cinder's attachment summaries (every project), filtered."""
        self._called("attachment_list")
        with self._lock:
            return [{"id": aid, "volume_id": a["volume_id"],
                     "instance": a["instance"], "status": a["status"],
                     "attached_at": None}
                    for aid in self.attachment_ids(volume_id, instance_id)
                    for a in [self._attachments[aid]]]

    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        """Export to the connector: attaching, with connection_info."""
        self._called("attachment_update")
        with self._lock:
            attachment = self._attachment(attachment_id)
            attachment.update(connector=dict(connector or {}),
                              status="attaching", attach_mode="rw")
            if mountpoint:
                attachment["mountpoint"] = mountpoint
            self._recompute(attachment["volume_id"])
            return self._attachment_view(attachment_id)

    def attachment_complete(self, ctxt, attachment_id):
        self._called("attachment_complete")
        with self._lock:
            self._attachment(attachment_id)
            self.complete_attachment(attachment_id)

    def attachment_delete(self, ctxt, attachment_id):
        """:raises VolumeAttachmentNotFound:"""
        self._called("attachment_delete")
        with self._lock:
            attachment = self._attachment(attachment_id)
            del self._attachments[attachment_id]
            self._recompute(attachment["volume_id"])

    # -- volume actions (detach bookkeeping and the legacy flow) -----------

    def begin_detaching(self, ctxt, volume_id):
        """in-use -> detaching. :raises InvalidInput: not in-use."""
        self._called("begin_detaching")
        with self._lock:
            volume = self._volume(ctxt, volume_id)
            if volume["status"] != "in-use":
                raise ms_exception.InvalidInput(
                    reason="Invalid volume: Unable to detach volume. Volume "
                           "status must be 'in-use' and attach_status must "
                           "be 'attached' to detach.")
            volume["status"] = "detaching"

    def roll_detaching(self, ctxt, volume_id):
        self._called("roll_detaching")
        with self._lock:
            volume = self._volume(ctxt, volume_id)
            if volume["status"] == "detaching":
                volume["status"] = "in-use"

    def reset_status(self, ctxt, volume_id, status, attach_status=None):
        self._called("reset_status")
        with self._lock:
            self._volume(ctxt, volume_id)["status"] = status

    def reserve_volume(self, ctxt, volume_id):
        self._called("reserve_volume")
        with self._lock:
            self._volume(ctxt, volume_id)["status"] = "attaching"

    def unreserve_volume(self, ctxt, volume_id):
        self._called("unreserve_volume")
        with self._lock:
            self._volume(ctxt, volume_id)["status"] = "available"

    def initialize_connection(self, ctxt, volume_id, connector):
        self._called("initialize_connection")
        self._volume(ctxt, volume_id)
        return {"driver_volume_type": "iscsi",
                "data": {"target_iqn": "iqn.2010-10.org.openstack:%s"
                                       % volume_id,
                         "target_lun": 1, "access_mode": "rw"}}

    def terminate_connection(self, ctxt, volume_id, connector):
        self._called("terminate_connection")
        self._volume(ctxt, volume_id)

    def attach(self, ctxt, volume_id, instance_uuid, mountpoint, mode="rw"):
        """Legacy os-attach: an attached attachment; volume in-use."""
        self._called("attach")
        with self._lock:
            self._volume(ctxt, volume_id)
            self._attachments[str(uuid.uuid4())] = {
                "volume_id": volume_id, "instance": instance_uuid,
                "status": "attached", "connector": {},
                "mountpoint": mountpoint, "attach_mode": mode}
            self._recompute(volume_id)

    def detach(self, ctxt, volume_id, instance_uuid=None,
               attachment_id=None):
        """Legacy os-detach of the attachment (or the instance's)."""
        self._called("detach")
        with self._lock:
            self._volume(ctxt, volume_id)
            for aid in self.attachment_ids(volume_id):
                if attachment_id in (None, aid) and instance_uuid in (
                        None, self._attachments[aid]["instance"]):
                    del self._attachments[aid]
            self._recompute(volume_id)
