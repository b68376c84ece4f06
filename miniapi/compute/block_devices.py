"""The block device mappings of a server create (boot from volume).

What nova's ``BlockDeviceDict.from_api``, ``_validate`` and the compute
API's ``_validate_bdm`` check, for the mappings ministack can honour:

* ``volume`` -> ``volume``: a volume the user brought; reserved here
  (``attachment_create`` with no connector) before the build is cast;
* ``image`` -> ``volume`` and ``blank`` -> ``volume``: a volume the
  compute host creates at build (``volume_size`` required);
* ``image`` -> ``local`` with ``boot_index`` 0: the image boot disk.

Every refusal is upstream's 400 "Block Device Mapping is Invalid: ...".
The boot indexes that are set (>= 0) must be exactly 0..n-1. The root
(boot index 0) of a volume-backed server is ``/dev/vda``; the other
volumes get the next free names in the order given, as libvirt ignores
the names users ask for.

:func:`parse` is pure; :class:`BlockDeviceOperations` (mixed into the
compute API) looks volumes up, reserves them and writes the BDM rows.
"""

import logging

from oslo_utils import strutils

from miniapi.compute import images
from minicompute import exception
from minicompute.db import api as db_api
from ministack import exception as ms_exception

LOG = logging.getLogger(__name__)

#: nova's valid ``disk_bus`` values (``InvalidBDMDiskBus`` otherwise).
DISK_BUSES = ("fdc", "ide", "sata", "scsi", "usb", "virtio", "xen", "lxc",
              "uml")

ROOT_DEVICE = "/dev/vda"


def invalid(details=None):
    """Upstream's InvalidBDM family: a 400 with its message."""
    message = "Block Device Mapping is Invalid"
    message += ": %s" % details if details else "."
    return ms_exception.Invalid(message=message)


def _boot_index(raw):
    value = raw.get("boot_index")
    if value is None or value == "":
        return None
    try:
        index = int(value)
    except (TypeError, ValueError):
        raise invalid("Boot index is invalid.") from None
    return index if index >= 0 else None


def _volume_size(raw):
    value = raw.get("volume_size")
    if value is None or value == "":
        return None
    text = str(value)
    if not text.isdigit() or len(text) > 10 or int(text) > 0x7FFFFFFF:
        raise invalid("Invalid volume_size.")
    return int(text)


def _one(raw, image_ref):
    """One API mapping, checked and normalised (nova's from_api)."""
    source = raw.get("source_type")
    if not source:
        raise invalid("Some required fields are missing")
    destination = raw.get("destination_type") or "local"
    uuid = raw.get("uuid")
    if source == "blank" and uuid:
        raise invalid("Invalid device UUID.")
    if source != "blank" and not uuid:
        raise invalid("Missing device UUID.")
    boot_index = _boot_index(raw)
    if source == "image" and destination == "local" and \
            not (image_ref and boot_index == 0):
        raise invalid("Mapping image to local is not supported.")
    if raw.get("volume_type") and destination == "local":
        raise invalid("Specifying a volume_type with destination_type=local "
                      "is not supported.")
    if raw.get("volume_type") and source == "volume":
        raise invalid("Specifying volume type to existing volume is not "
                      "supported.")
    device_name = raw.get("device_name")
    if device_name is not None:
        if not device_name or len(device_name) > 255:
            raise invalid("Device name empty or too long.")
        if " " in device_name:
            raise invalid("Device name contains spaces.")
    disk_bus = raw.get("disk_bus")
    if disk_bus is not None and disk_bus not in DISK_BUSES:
        raise invalid()
    size = _volume_size(raw)
    if source == "image" and destination == "volume" and not size:
        raise invalid("Images with destination_type 'volume' need to have a "
                      "non-zero size specified")
    if source == "blank" and destination == "volume" and not size:
        raise invalid("Blank volumes (source: 'blank', dest: 'volume') need "
                      "to have non-zero size")
    if source == "snapshot":
        # ministack's Cinder has no snapshots, so none can be found.
        raise ms_exception.Invalid(
            message="Snapshot %s could not be found." % uuid)
    if source == "blank" and destination == "local":
        raise ms_exception.Invalid(
            message="Ephemeral and swap disks (source: 'blank', dest: "
                    "'local') are not supported.")
    return {"source_type": source, "destination_type": destination,
            "uuid": uuid, "boot_index": boot_index, "volume_size": size,
            "device_name": device_name, "disk_bus": disk_bus,
            "device_type": raw.get("device_type") or "disk",
            "tag": raw.get("tag"), "volume_type": raw.get("volume_type"),
            "delete_on_termination": strutils.bool_from_string(
                raw.get("delete_on_termination"), default=False)}


def parse(raw_mappings, image_ref):
    """The request's ``block_device_mapping_v2``, checked; [] for none.

    :param image_ref: the request's imageRef ("" when absent).
    :raises Invalid: any mapping or the boot sequence is invalid (400).
    """
    if not raw_mappings:
        return []
    mappings = [_one(raw, image_ref) for raw in raw_mappings]
    indexes = sorted(m["boot_index"] for m in mappings
                     if m["boot_index"] is not None)
    if indexes != list(range(len(indexes))) or not indexes:
        raise invalid("Boot sequence for the instance and image/block "
                      "device mapping combination is not valid.")
    return mappings


def root(mappings):
    """The boot index 0 mapping, or None."""
    return next((m for m in mappings if m["boot_index"] == 0), None)


def volume_mappings(mappings):
    return [m for m in mappings if m["destination_type"] == "volume"]


def is_volume_backed(mappings):
    boot = root(mappings)
    return boot is not None and boot["destination_type"] == "volume"


class BlockDeviceOperations:
    """The API phase of a server's volumes at create; mixed into
    :class:`miniapi.compute.api.API` (``self.volume_api``,
    ``self.image_dir``)."""

    def boot_image(self, ctxt, image_ref, mappings):
        """The registered image the host boots the guest's kernel from.

        For a volume-backed server it is the image of the boot mapping
        (image -> volume), the one the boot volume was made from (its
        ``volume_image_metadata``; the volume must be bootable), or for
        a blank root volume imageRef.

        :raises Invalid: not bootable, not found, no image known (400).
        """
        boot = root(mappings)
        if not is_volume_backed(mappings):
            ref = image_ref or (boot["uuid"] if boot else None)
            try:
                image = images.find_image(ctxt, ref, self.image_dir)
            except exception.ImageNotFound:
                raise ms_exception.Invalid(
                    message="Can not find requested image") from None
            images.check_active(image)
            return image
        if boot["source_type"] == "blank":
            # An empty root volume: the kernel still comes from imageRef.
            ref = image_ref
        elif boot["source_type"] == "image":
            ref = boot["uuid"]
        else:
            volume = self._mapped_volume(ctxt, boot["uuid"])
            if not strutils.bool_from_string(volume.get("bootable")):
                raise ms_exception.Invalid(
                    message="Block Device %s is not bootable." %
                            boot["uuid"])
            ref = (volume.get("volume_image_metadata") or {}).get("image_id")
        try:
            return images.find_image(ctxt, ref, self.image_dir)
        except exception.ImageNotFound:
            raise invalid("failed to get image %s." % (ref or "")) from None

    def _mapped_volume(self, ctxt, volume_id):
        try:
            return self.volume_api.get(ctxt, volume_id)
        except exception.VolumeNotFound:
            raise ms_exception.Invalid(
                message="Volume %s could not be found." % volume_id) \
                from None

    def check_mapped_volumes(self, ctxt, mappings, multiattach_ok):
        """Every volume the user brought exists (400) and, if
        multiattach, the microversion allows it (400)."""
        for mapping in volume_mappings(mappings):
            if mapping["source_type"] != "volume":
                continue
            volume = self._mapped_volume(ctxt, mapping["uuid"])
            if volume.get("multiattach") and not multiattach_ok:
                raise ms_exception.Invalid(
                    message="Multiattach volumes are only supported "
                            "starting with compute API version 2.60.")
            mapping["volume_size"] = volume.get("size")

    def reserve_mapped_volumes(self, ctxt, mappings, instance_uuid):
        """attachment_create (no connector) for each volume the user
        brought; each mapping gets its ``attachment_id``. All or none: a
        refusal deletes the attachments already made.

        :raises InvalidVolume: Cinder refused one (in use...) (400).
        """
        try:
            for mapping in volume_mappings(mappings):
                if mapping["source_type"] == "volume":
                    mapping["attachment_id"] = self._reserve_volume(
                        ctxt, mapping["uuid"], instance_uuid)
        except Exception:
            self.release_mapped_volumes(ctxt, mappings)
            raise

    def release_mapped_volumes(self, ctxt, mappings):
        """Undo :meth:`reserve_mapped_volumes` (its errors are logged)."""
        for mapping in mappings:
            attachment_id = mapping.pop("attachment_id", None)
            if not attachment_id:
                continue
            try:
                self.volume_api.attachment_delete(ctxt, attachment_id)
            except exception.VolumeAttachmentNotFound:
                pass
            except Exception:
                LOG.exception("Could not delete attachment %s while undoing "
                              "a server create", attachment_id)

    @staticmethod
    def write_bdms(ctxt, instance_uuid, mappings):
        """The BDM rows of the new server's volume mappings."""
        used = set() if is_volume_backed(mappings) else {ROOT_DEVICE}
        names = ("/dev/vd%s" % c for c in "abcdefghijklmnopqrstuvwxyz")
        for mapping in volume_mappings(mappings):
            if mapping["boot_index"] == 0:
                name = ROOT_DEVICE
            else:
                name = next(n for n in names
                            if n not in used and n != ROOT_DEVICE)
            used.add(name)
            source = mapping["source_type"]
            db_api.bdm_create(ctxt, {
                "instance_uuid": instance_uuid,
                "source_type": source, "destination_type": "volume",
                "volume_id": mapping["uuid"] if source == "volume" else None,
                "image_id": mapping["uuid"] if source == "image" else None,
                "attachment_id": mapping.get("attachment_id"),
                "boot_index": mapping["boot_index"],
                "volume_size": mapping["volume_size"],
                "volume_type": mapping["volume_type"],
                "device_name": name, "disk_bus": mapping["disk_bus"],
                "device_type": mapping["device_type"], "tag": mapping["tag"],
                "delete_on_termination": mapping["delete_on_termination"]})

    @staticmethod
    def destroy_bdms(ctxt, instance_uuid):
        for bdm in db_api.bdm_get_all_by_instance(ctxt, instance_uuid):
            db_api.bdm_destroy(ctxt, bdm.id)
