"""The volume API: what a request may do to volumes and volume types.

This is cinder's ``volume/api.py`` role at mini scale: it checks
preconditions and ownership, writes the new state with a compare-and-swap
and hands slow work to the :class:`~minicinder.volume.manager.VolumeManager`.
HTTP never appears here; the blueprints in ``minicinder/api`` translate.
"""

import logging
import uuid

from minicinder import exception
from minicinder.db import api as db
from minicinder.db import reads
from minicinder.volume import states
from ministack import db as ms_db

LOG = logging.getLogger(__name__)

MULTIATTACH_SPEC = "multiattach"


def is_true_spec(value):
    """Extra-spec booleans are written ``"<is> True"`` upstream."""
    return str(value).strip().lower() in ("<is> true", "true")


def require_admin(ctx, action):
    if not ctx.is_admin:
        raise exception.PolicyNotAuthorized(action=action)


class VolumeAPI:
    """Volumes and types. Attachments live in ``volume/attachments.py``."""

    def __init__(self, database, manager, conf):
        self.database = database
        self.manager = manager
        self.conf = conf

    # --- volumes ---

    def create(self, ctx, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None):
        """Record the volume as ``creating`` and start the backend job.

        :raises InvalidInput: bad size or availability zone.
        :raises VolumeTypeNotFound: unknown type, or a private one the
            caller cannot see (as GET /types answers it; the default
            type is the deployment's, usable by everyone).
        """
        if size > self.conf.max_volume_size:
            raise exception.InvalidInput(
                reason="Volume size %s GiB exceeds the maximum of %s GiB"
                % (size, self.conf.max_volume_size))
        zone = self.conf.storage_availability_zone
        if availability_zone not in (None, zone):
            raise exception.InvalidInput(
                reason="Availability zone '%s' is invalid."
                % availability_zone)
        volume_id = str(uuid.uuid4())
        with self.database.write() as session:
            if volume_type:
                vtype = db.volume_type_get_by_name_or_id(
                    session, volume_type, include_private=ctx.is_admin)
            else:
                vtype = db.volume_type_get_by_name_or_id(
                    session, self.conf.default_volume_type)
            specs = {s.key: s.value for s in vtype.extra_specs}
            db.volume_create(session, {
                "id": volume_id, "user_id": ctx.user_id,
                "project_id": ctx.project_id, "host": self.conf.host,
                "size": size, "availability_zone": zone,
                "status": states.CREATING,
                "attach_status": states.ATT_DETACHED,
                "display_name": name, "display_description": description,
                "volume_type_id": vtype.id,
                "multiattach": is_true_spec(specs.get(MULTIATTACH_SPEC)),
                "scheduled_at": ms_db.utcnow(),
            }, metadata)
        LOG.info("Creating volume %s (%s GiB, type %s)", volume_id, size,
                 vtype.name)
        self.manager.create_volume_async(volume_id)
        return self.get(ctx, volume_id)

    def get(self, ctx, volume_id):
        """The volume as a read-only record for the JSON view (the hot
        path of every status poll: one prebuilt Core select, no ORM).

        :raises VolumeNotFound: missing, deleted or another project's.
        """
        with self.database.read_connection() as conn:
            return reads.volume_get(conn, ctx, volume_id)

    def get_all(self, ctx, filters, all_tenants=False, **page):
        if all_tenants:
            require_admin(ctx, "volume:get_all_tenants")
        with self.database.read() as session:
            return db.volume_get_all(session, ctx, filters, all_tenants,
                                     **page)

    def update(self, ctx, volume_id, values):
        """Rename or re-describe a volume (any status)."""
        with self.database.write() as session:
            db.volume_get(session, ctx, volume_id)
            db.volume_update(session, volume_id, values)
        return self.get(ctx, volume_id)

    def delete(self, ctx, volume_id):
        """available/error -> deleting, then the backend wipes and removes.

        :raises InvalidVolume: attached, attachments left, or busy.
        """
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            if volume.attach_status == states.ATT_ATTACHED:
                raise exception.InvalidVolume(
                    reason="Volume status must be available or error or "
                           "error_restoring or error_extending or "
                           "error_managing and must not be migrating, "
                           "attached, belong to a group, have snapshots, "
                           "awaiting a transfer, or be disassociated from "
                           "snapshots after volume transfer.")
            live = [a for a in volume.volume_attachment
                    if not a.attach_status.startswith("error")]
            if live:
                raise exception.InvalidVolume(
                    reason="Volume %s has %d attachment(s); delete them "
                           "first." % (volume_id, len(live)))
            if not db.volume_transition(session, volume, "delete"):
                raise exception.InvalidVolume(
                    reason="Volume status must be %s, but the current "
                           "status is %s." % (" or ".join(states.DELETABLE),
                                              volume.status))
        LOG.info("Deleting volume %s", volume_id)
        self.manager.delete_volume_async(volume_id)

    # --- volume types ---

    def type_get(self, ctx, type_id):
        """:raises VolumeTypeNotFound: missing, or private and ``ctx`` is
        not an admin."""
        with self.database.read() as session:
            return db.volume_type_get_by_name_or_id(
                session, type_id, include_private=ctx.is_admin)

    def type_get_default(self, ctx):
        """The configured default type, shown to everyone (upstream reads
        it with an admin context)."""
        with self.database.read() as session:
            return db.volume_type_get_by_name_or_id(
                session, self.conf.default_volume_type)

    def type_get_all(self, ctx):
        with self.database.read() as session:
            return db.volume_type_get_all(session, ctx.is_admin)

    def type_create(self, ctx, name, description=None, is_public=True,
                    extra_specs=None):
        require_admin(ctx, "volume_extension:types_manage")
        with self.database.write() as session:
            return db.volume_type_create(session, {
                "id": str(uuid.uuid4()), "name": name,
                "description": description, "is_public": is_public,
            }, extra_specs or {})

    def type_delete(self, ctx, type_id):
        require_admin(ctx, "volume_extension:types_manage")
        with self.database.write() as session:
            vtype = db.volume_type_get(session, type_id)
            if vtype.name == self.conf.default_volume_type:
                raise exception.InvalidInput(
                    reason="Default volume type can not be deleted")
            if db.volume_type_in_use(session, type_id):
                raise exception.InvalidVolumeType(
                    reason="Volume Type %s deletion is not allowed with "
                           "volumes present with the type." % type_id)
            db.volume_type_destroy(session, type_id)

    def type_set_extra_specs(self, ctx, type_id, extra_specs):
        require_admin(ctx, "volume_extension:types_extra_specs:create")
        with self.database.write() as session:
            db.volume_type_get(session, type_id)
            if db.volume_type_in_use(session, type_id) and \
                    MULTIATTACH_SPEC in extra_specs:
                raise exception.InvalidVolumeType(
                    reason="multiattach cannot change while volumes of "
                           "type %s exist." % type_id)
            db.volume_type_extra_specs_update(session, type_id, extra_specs)
        return self.type_get(ctx, type_id)
