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
from minicinder.db import services as services_db
from minicinder.db import types as types_db
from minicinder.db import volume_reads
from minicinder.volume import image as volume_image
from minicinder.volume import quotas
from minicinder.volume import service_record
from minicinder.volume import states
from minicinder.volume import type_api
from ministack import db as ms_db

LOG = logging.getLogger(__name__)

MULTIATTACH_SPEC = type_api.MULTIATTACH_SPEC
require_admin = type_api.require_admin


def is_true_spec(value):
    """Extra-spec booleans are written ``"<is> True"`` upstream."""
    return str(value).strip().lower() in ("<is> true", "true")


class VolumeAPI:
    """What a request may do to volumes. Types live in
    ``volume/type_api.py``, attachments in ``volume/attachments.py``."""

    def __init__(self, database, manager, conf, service=None):
        """:param service: the volume service's
        :class:`~minicinder.volume.service_record.ServiceRecord` (its
        uuid is each new volume's ``service_uuid``)."""
        self.database = database
        self.manager = manager
        self.conf = conf
        self.service = service

    # --- volumes ---

    def create(self, ctx, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               image=None, source=None):
        """Record the volume as ``creating`` and start the backend job.

        :param image: the image record to copy in (checked to fit by the
            caller, ``volume/image.py``); the volume is then bootable and
            records the image's metadata.
        :param source: the volume to copy (a ``volume_reads`` record,
            checked by the caller); its type unless ``volume_type`` names
            one, and its bootable flag and image metadata, are the new
            volume's too.

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
                vtype = types_db.volume_type_get_by_name_or_id(
                    session, volume_type, include_private=ctx.is_admin,
                    project_id=ctx.project_id)
            elif source is not None and source.volume_type_id:
                vtype = types_db.volume_type_get_by_name_or_id(
                    session, source.volume_type_id, include_private=True)
            else:
                vtype = types_db.volume_type_get_by_name_or_id(
                    session, self.conf.default_volume_type)
            quotas.check_volume(session, self.conf, ctx.project_id,
                                volumes=1, gigabytes=size)
            specs = {s.key: s.value for s in vtype.extra_specs}
            placed = self._backend_accepts(session)
            db.volume_create(session, {
                "id": volume_id, "user_id": ctx.user_id,
                "project_id": ctx.project_id,
                "host": service_record.pool_host(self.conf)
                if placed else None,
                "size": size, "availability_zone": zone,
                "status": states.CREATING if placed else states.ERROR,
                "attach_status": states.ATT_DETACHED,
                "display_name": name, "display_description": description,
                "volume_type_id": vtype.id,
                "multiattach": is_true_spec(specs.get(MULTIATTACH_SPEC)),
                "scheduled_at": ms_db.utcnow(),
                "service_uuid": self.service.uuid
                if placed and self.service else None,
                "bootable": image is not None or bool(
                    source is not None and source.bootable),
                "source_volid": source.id if source is not None else None,
            }, metadata)
            if image is not None:
                db.volume_glance_metadata_create(
                    session, volume_id, volume_image.glance_metadata(image))
            elif source is not None and source.bootable:
                db.volume_glance_metadata_create(session, volume_id, {
                    item.key: item.value
                    for item in source.volume_glance_metadata})
        if not placed:
            LOG.error("Volume %s not created: the volume service %s is "
                      "disabled (No valid backend was found)", volume_id,
                      service_record.backend_host(self.conf))
            return self.get(ctx, volume_id)
        LOG.info("Creating volume %s (%s GiB, type %s%s)", volume_id, size,
                 vtype.name, ", from image %s" % image["id"] if image
                 else ", from volume %s" % source.id if source else "")
        self.manager.create_volume_async(
            volume_id, image, source.id if source is not None else None)
        return self.get(ctx, volume_id)

    def _backend_accepts(self, session):
        """Whether the one backend takes new volumes: not when an
        operator disabled its service (upstream's scheduler then finds
        "No valid backend" and the volume goes to ``error``)."""
        record = services_db.service_get(
            session, service_record.backend_host(self.conf),
            service_record.BINARY)
        return record is None or not record.disabled

    def get(self, ctx, volume_id):
        """The volume as a read-only record for the JSON view (the hot
        path of every status poll: one prebuilt Core select, no ORM).

        :raises VolumeNotFound: missing, deleted or another project's.
        """
        return self.database.read_rows(volume_reads.volume_get, ctx, volume_id)

    def get_all(self, ctx, filters, all_tenants=False, **page):
        """``all_tenants`` from a non-admin is ignored, as upstream (its
        own volumes are listed)."""
        with self.database.read() as session:
            return volume_reads.volume_list(
                session.connection(), db.volume_list_select(
                    session, ctx, filters, all_tenants and ctx.is_admin,
                    **page))

    def summary(self, ctx, all_tenants=False, filters=None):
        """``(count, total GiB, {metadata key: [values]})`` of the
        volumes listed (3.12/3.36 ``volumes/summary``; 3.60's time
        ``filters``)."""
        with self.database.read() as session:
            volumes = volume_reads.volume_list(
                session.connection(), db.volume_list_select(
                    session, ctx, filters or {},
                    all_tenants and ctx.is_admin))
        metadata = {}
        for volume in volumes:
            for item in volume.volume_metadata:
                values = metadata.setdefault(item.key, [])
                if item.value not in values:
                    values.append(item.value)
        return len(volumes), sum(v.size for v in volumes), metadata

    def update(self, ctx, volume_id, values):
        """Rename or re-describe a volume (any status)."""
        with self.database.write() as session:
            db.volume_get(session, ctx, volume_id)
            db.volume_update(session, volume_id, values)
        return self.get(ctx, volume_id)

    def delete(self, ctx, volume_id, force=False):
        """available/error -> deleting, then the backend wipes and removes.

        :param force: os-force_delete (admin): any status but deleting.
        :raises InvalidVolume: attached, attachments left, or busy.
        """
        action = "force_delete" if force else "delete"
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
            if not db.volume_transition(session, volume, action):
                expected = states.volume_transition(action).expected
                raise exception.InvalidVolume(
                    reason="Volume status must be %s, but the current "
                           "status is %s." % (" or ".join(expected),
                                              volume.status))
        LOG.info("Deleting volume %s", volume_id)
        self.manager.delete_volume_async(volume_id)

    def extend(self, ctx, volume_id, new_size, attached=False):
        """available -> extending; the manager grows the device and the
        volume is available at ``new_size`` GiB (``error_extending`` when
        the backend cannot).

        :param attached: 3.42+: an in-use volume grows too (in-use ->
            extending -> in-use, and nova is told to resize the guest's
            disk: ``volume/extend.py``).
        :raises InvalidInput: not larger than the volume, or over
            ``max_volume_size`` (400).
        :raises InvalidVolume: not available (or, with ``attached``,
            in-use) (400).
        :raises QuotaError: over the project's gigabytes (413).
        """
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            if new_size <= volume.size:
                raise exception.InvalidInput(
                    reason="New size for extend must be greater than "
                           "current size. (current: %s, extended: %s)."
                           % (volume.size, new_size))
            if new_size > self.conf.max_volume_size:
                raise exception.InvalidInput(
                    reason="Volume size %s GiB exceeds the maximum of %s "
                           "GiB" % (new_size, self.conf.max_volume_size))
            in_use = attached and volume.status == states.IN_USE
            if not db.volume_transition(
                    session, volume,
                    "extend_attached" if in_use else "extend"):
                raise exception.InvalidVolume(
                    reason="Volume %s status must be '%s' to extend, "
                           "currently %s." % (
                               volume_id, "in-use" if in_use
                               else "available", volume.status))
            quotas.check_volume(session, self.conf, volume.project_id,
                                gigabytes=new_size - volume.size,
                                size=new_size)
        LOG.info("Extending %s volume %s from %s to %s GiB",
                 "attached" if in_use else "available", volume_id,
                 volume.size, new_size)
        self.manager.extender.extend_volume_async(
            volume_id, new_size, attached=in_use, ctx=ctx)

    def extend_volume_completion(self, ctx, volume_id, error):
        """3.71 ``os-extend_volume_completion``: nova's answer to a
        ``volume-extended`` event the backend waits for. Upstream's
        remotefs drivers leave such a volume ``extending`` with the
        ``extend_new_size`` admin metadata until it comes; this backend
        finishes every extend itself before telling nova, so no volume
        ever waits for it, and the answer is upstream's for a volume not
        waiting: 400.

        :raises PolicyNotAuthorized: not an admin (403).
        :raises VolumeNotFound: (404).
        :raises InvalidVolume: (400).
        """
        require_admin(ctx, "volume_extension:volume_admin_actions:"
                           "extend_volume_completion")
        with self.database.read() as session:
            volume = volume_reads.volume_state(session, ctx, volume_id)
        LOG.info("Extend completion (error=%s) for volume %s: nothing "
                 "awaits it", error, volume_id)
        raise exception.InvalidVolume(
            reason="Volume %s is not waiting for an extend to complete "
                   "(status %s, no extend_new_size): this backend "
                   "finishes its extends itself." % (volume_id,
                                                     volume.status))

    def retype(self, ctx, volume_id, new_type, migration_policy="never"):
        """Give an available or in-use volume another type.

        The one backend serves every type, so no data moves (upstream's
        LVM driver retypes in place too and ``migration_policy`` never
        comes into play). A change of ``multiattach`` needs the volume
        available.

        :raises VolumeTypeNotFound: (404).
        :raises InvalidInput: the type it already has (400).
        :raises InvalidVolume: wrong status, or multiattach changing on
            an attached volume (400).
        """
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            vtype = types_db.volume_type_get_by_name_or_id(
                session, new_type, include_private=ctx.is_admin,
                project_id=ctx.project_id)
            if volume.status not in (states.AVAILABLE, states.IN_USE):
                raise exception.InvalidVolume(
                    reason="Volume %s status must be available or in-use "
                           "to retype, but it is %s." % (volume_id,
                                                         volume.status))
            if vtype.id == volume.volume_type_id:
                raise exception.InvalidInput(
                    reason="New volume_type same as original: %s."
                    % new_type)
            multiattach = is_true_spec(
                {s.key: s.value for s in vtype.extra_specs}.get(
                    MULTIATTACH_SPEC))
            if multiattach != bool(volume.multiattach) and \
                    volume.status != states.AVAILABLE:
                raise exception.InvalidVolume(
                    reason="Volume %s must be available to change "
                           "multiattach with a retype." % volume_id)
            if not db.volume_conditional_update(
                    session, volume_id,
                    {"volume_type_id": vtype.id, "multiattach": multiattach},
                    (volume.status,)):
                raise exception.InvalidVolume(
                    reason="Volume %s changed status during the retype."
                    % volume_id)
        LOG.info("Volume %s retyped to %s (migration policy %s)",
                 volume_id, vtype.name, migration_policy)
