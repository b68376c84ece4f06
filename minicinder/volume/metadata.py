"""A volume's metadata, and the flags kept beside it.

User metadata (``/volumes/{id}/metadata``) is the owner's key/value
store; image metadata (what a volume made from an image recorded of it,
``volume_image_metadata``) is changed through the
``os-set/show/unset_image_metadata`` actions. ``bootable``
(``os-set_bootable``) is a column; ``readonly``
(``os-update_readonly_flag``) is admin metadata, as upstream keeps it,
and it is enforced: a read-only volume is connected ``ro`` and refuses a
read-write ``os-attach``.
"""

import logging

from minicinder import exception
from minicinder.db import api as db
from minicinder.db import metadata as metadata_db
from minicinder.db import volume_reads
from minicinder.volume import states

LOG = logging.getLogger(__name__)

# Admin metadata users see inside the volume's "metadata" (upstream's
# add_visible_admin_metadata).
VISIBLE_ADMIN_KEYS = ("readonly", "attached_mode")


def is_readonly(volume):
    """Whether ``volume`` (a model or a read record) is flagged read-only."""
    return any(item.key == "readonly" and item.value == "True"
               for item in volume.volume_admin_metadata)


def visible_metadata(volume):
    """The ``metadata`` a volume view shows: the user's, with the
    visible admin keys on top (they win a clash, as upstream)."""
    shown = {item.key: item.value for item in volume.volume_metadata}
    for item in volume.volume_admin_metadata:
        if item.key in VISIBLE_ADMIN_KEYS:
            shown[item.key] = item.value
    return shown


class VolumeMetadataAPI:
    """Metadata and flags of volumes the caller can see."""

    def __init__(self, database):
        self.database = database

    def get(self, ctx, volume_id):
        """:raises VolumeNotFound:"""
        with self.database.read() as session:
            volume_reads.volume_state(session, ctx, volume_id)
            return metadata_db.metadata_get(session, volume_id)

    def update(self, ctx, volume_id, metadata, delete=False):
        """Merge ``metadata`` in, or with ``delete`` make it the whole
        metadata. :returns: the metadata afterwards.

        :raises InvalidVolume: the volume is in maintenance (400).
        """
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            _not_in_maintenance(volume, "Updating volume metadata")
            return metadata_db.metadata_update(session, volume_id,
                                               metadata, delete)

    def get_item(self, ctx, volume_id, key):
        """:raises VolumeMetadataNotFound:"""
        metadata = self.get(ctx, volume_id)
        if key not in metadata:
            raise exception.VolumeMetadataNotFound(volume_id=volume_id,
                                                   metadata_key=key)
        return metadata[key]

    def delete_item(self, ctx, volume_id, key):
        """:raises VolumeMetadataNotFound:"""
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            _not_in_maintenance(volume, "Deleting volume metadata")
            if not metadata_db.metadata_delete(session, volume_id, key):
                raise exception.VolumeMetadataNotFound(
                    volume_id=volume_id, metadata_key=key)

    def set_bootable(self, ctx, volume_id, bootable):
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            _not_in_maintenance(volume, "Updating the bootable flag")
            db.volume_update(session, volume_id, {"bootable": bootable})

    def set_readonly(self, ctx, volume_id, readonly):
        """:raises InvalidVolume: the volume is not available (400)."""
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            if volume.status != states.AVAILABLE:
                raise exception.InvalidVolume(
                    reason="Volume status must be available to update "
                           "readonly flag.")
            metadata_db.admin_metadata_update(
                session, volume_id, {"readonly": str(bool(readonly))})
        LOG.info("Volume %s readonly=%s", volume_id, bool(readonly))


    # --- image metadata (os-set/show/unset_image_metadata) ---

    def image_metadata_get(self, ctx, volume_id):
        """:raises VolumeNotFound:"""
        with self.database.read() as session:
            volume_reads.volume_state(session, ctx, volume_id)
            return metadata_db.image_metadata_get(session, volume_id)

    def image_metadata_update(self, ctx, volume_id, metadata):
        """Merge keys in. :returns: the image metadata afterwards."""
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            _not_in_maintenance(volume, "Updating volume image metadata")
            return metadata_db.image_metadata_update(session, volume_id,
                                                     metadata)

    def image_metadata_delete(self, ctx, volume_id, key):
        """:raises GlanceMetadataNotFound: no such key (404)."""
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            _not_in_maintenance(volume, "Deleting volume image metadata")
            if not metadata_db.image_metadata_delete(session, volume_id,
                                                     key):
                raise exception.GlanceMetadataNotFound(id=volume_id)


def _not_in_maintenance(volume, what):
    if volume.status == states.MAINTENANCE:
        raise exception.InvalidVolume(
            reason="%s is not allowed for volumes in %s status."
            % (what, volume.status))
