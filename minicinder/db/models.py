"""SQLAlchemy models of the cinder database, with upstream's names.

Cinder's soft delete differs from nova's: ``deleted`` is a Boolean and the
row keeps its primary key (volumes and attachments have UUID keys, so no
unique constraint needs the deleted marker). Only the columns this service
reads or writes, plus the ones clients see in the volume JSON, are kept.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from ministack.db import TimestampMixin


class Base(orm.DeclarativeBase):
    pass


class CinderBase(TimestampMixin):
    deleted = sa.Column(sa.Boolean, default=False, nullable=False)


class VolumeType(Base, CinderBase):
    """A class of volume; its extra specs carry capabilities (multiattach)."""

    __tablename__ = "volume_types"

    id = sa.Column(sa.String(36), primary_key=True)
    name = sa.Column(sa.String(255))
    description = sa.Column(sa.String(255))
    is_public = sa.Column(sa.Boolean, default=True)
    qos_specs_id = sa.Column(sa.String(36))

    # Loaded only by the type queries (selectinload): a volume's type is
    # joined into every volume read, its specs are not needed there.
    extra_specs = orm.relationship(
        "VolumeTypeExtraSpecs", lazy="raise",
        primaryjoin="and_(VolumeType.id == VolumeTypeExtraSpecs."
                    "volume_type_id, VolumeTypeExtraSpecs.deleted == False)")


class VolumeTypeExtraSpecs(Base, CinderBase):
    __tablename__ = "volume_type_extra_specs"

    id = sa.Column(sa.Integer, primary_key=True)
    key = sa.Column(sa.String(255))
    value = sa.Column(sa.String(255))
    volume_type_id = sa.Column(sa.String(36), sa.ForeignKey("volume_types.id"),
                               nullable=False, index=True)


class Volume(Base, CinderBase):
    """A block device. ``status`` is what users see; ``attach_status`` is
    the summary of its attachments (not exposed in the JSON)."""

    __tablename__ = "volumes"
    __table_args__ = (
        sa.Index("volumes_service_uuid_idx", "service_uuid", "deleted"),
        sa.Index("volumes_project_id_deleted_idx", "project_id", "deleted"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    ec2_id = sa.Column(sa.String(255))
    user_id = sa.Column(sa.String(255))
    project_id = sa.Column(sa.String(255))
    host = sa.Column(sa.String(255))
    cluster_name = sa.Column(sa.String(255))
    size = sa.Column(sa.Integer)
    availability_zone = sa.Column(sa.String(255))
    status = sa.Column(sa.String(255))
    attach_status = sa.Column(sa.String(255))
    migration_status = sa.Column(sa.String(255))
    scheduled_at = sa.Column(sa.DateTime)
    launched_at = sa.Column(sa.DateTime)
    terminated_at = sa.Column(sa.DateTime)
    display_name = sa.Column(sa.String(255))
    display_description = sa.Column(sa.String(255))
    # Export details: "ip:port,tid iqn lun" and "CHAP user password".
    provider_location = sa.Column(sa.String(256))
    provider_auth = sa.Column(sa.String(256))
    provider_geometry = sa.Column(sa.String(255))
    provider_id = sa.Column(sa.String(255))
    volume_type_id = sa.Column(sa.String(36),
                               sa.ForeignKey("volume_types.id"),
                               nullable=False)
    source_volid = sa.Column(sa.String(36))
    snapshot_id = sa.Column(sa.String(36))
    encryption_key_id = sa.Column(sa.String(36))
    consistencygroup_id = sa.Column(sa.String(36))
    group_id = sa.Column(sa.String(36))
    bootable = sa.Column(sa.Boolean, default=False)
    multiattach = sa.Column(sa.Boolean, default=False)
    replication_status = sa.Column(sa.String(255))
    service_uuid = sa.Column(sa.String(36))
    shared_targets = sa.Column(sa.Boolean, default=True)
    use_quota = sa.Column(sa.Boolean, default=True, nullable=False)

    volume_type = orm.relationship(VolumeType, lazy="joined")
    volume_metadata = orm.relationship(
        "VolumeMetadata", lazy="selectin",
        primaryjoin="and_(Volume.id == VolumeMetadata.volume_id, "
                    "VolumeMetadata.deleted == False)")
    volume_attachment = orm.relationship(
        "VolumeAttachment", lazy="selectin", viewonly=True,
        primaryjoin="and_(Volume.id == VolumeAttachment.volume_id, "
                    "VolumeAttachment.deleted == False)")
    volume_glance_metadata = orm.relationship(
        "VolumeGlanceMetadata", lazy="selectin", viewonly=True,
        primaryjoin="and_(Volume.id == VolumeGlanceMetadata.volume_id, "
                    "VolumeGlanceMetadata.deleted == False)")
    volume_admin_metadata = orm.relationship(
        "VolumeAdminMetadata", lazy="selectin", viewonly=True,
        primaryjoin="and_(Volume.id == VolumeAdminMetadata.volume_id, "
                    "VolumeAdminMetadata.deleted == False)")


class VolumeMetadata(Base, CinderBase):
    __tablename__ = "volume_metadata"

    id = sa.Column(sa.Integer, primary_key=True)
    key = sa.Column(sa.String(255))
    value = sa.Column(sa.String(255))
    volume_id = sa.Column(sa.String(36), sa.ForeignKey("volumes.id"),
                          nullable=False, index=True)


class VolumeAdminMetadata(Base, CinderBase):
    """Metadata only the service and admins set (upstream's table):
    ``readonly`` (os-update_readonly_flag) and ``attached_mode``. Those
    two keys are shown to users inside the volume's ``metadata``."""

    __tablename__ = "volume_admin_metadata"

    id = sa.Column(sa.Integer, primary_key=True)
    key = sa.Column(sa.String(255))
    value = sa.Column(sa.String(255))
    volume_id = sa.Column(sa.String(36), sa.ForeignKey("volumes.id"),
                          nullable=False, index=True)


class VolumeGlanceMetadata(Base, CinderBase):
    """What a volume made from an image records of that image (upstream's
    ``volume_glance_metadata``), shown as ``volume_image_metadata``."""

    __tablename__ = "volume_glance_metadata"

    id = sa.Column(sa.Integer, primary_key=True)
    volume_id = sa.Column(sa.String(36), sa.ForeignKey("volumes.id"),
                          index=True)
    snapshot_id = sa.Column(sa.String(36))
    key = sa.Column(sa.String(255))
    value = sa.Column(sa.Text)


class VolumeAttachment(Base, CinderBase):
    """One host/instance's use of a volume (cinder's ``volume_attachment``).

    ``connector`` and ``connection_info`` are JSON text, as upstream.
    """

    __tablename__ = "volume_attachment"

    id = sa.Column(sa.String(36), primary_key=True)
    volume_id = sa.Column(sa.String(36), sa.ForeignKey("volumes.id"),
                          nullable=False, index=True)
    attached_host = sa.Column(sa.String(255))
    instance_uuid = sa.Column(sa.String(36))
    mountpoint = sa.Column(sa.String(255))
    attach_time = sa.Column(sa.DateTime)
    detach_time = sa.Column(sa.DateTime)
    attach_mode = sa.Column(sa.String(36))
    attach_status = sa.Column(sa.String(255))
    connection_info = sa.Column(sa.Text)
    connector = sa.Column(sa.Text)

    volume = orm.relationship(Volume, lazy="raise", viewonly=True)


class Service(Base, CinderBase):
    """A running service and its heartbeat (cinder's ``services``).

    minicinder records its volume service as ``cinder-volume`` at
    ``<host>@<backend>``; ``updated_at`` is the heartbeat, ``disabled``
    keeps new volumes off the backend, ``frozen`` refuses management
    operations on its volumes.
    """

    __tablename__ = "services"
    __table_args__ = (
        sa.Index("services_uuid_idx", "uuid", unique=True),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36))
    host = sa.Column(sa.String(255))
    binary = sa.Column(sa.String(255))
    topic = sa.Column(sa.String(255))
    report_count = sa.Column(sa.Integer, nullable=False, default=0)
    disabled = sa.Column(sa.Boolean, default=False)
    disabled_reason = sa.Column(sa.String(255))
    availability_zone = sa.Column(sa.String(255))
    modified_at = sa.Column(sa.DateTime)
    frozen = sa.Column(sa.Boolean, nullable=False, default=False)
    replication_status = sa.Column(sa.String(36))
    active_backend_id = sa.Column(sa.String(255))
    cluster_name = sa.Column(sa.String(255))


class Quota(Base, CinderBase):
    """A project's own limit for one resource (cinder's ``quotas``); a
    resource without a row has the configured default."""

    __tablename__ = "quotas"

    id = sa.Column(sa.Integer, primary_key=True)
    project_id = sa.Column(sa.String(255), index=True)
    resource = sa.Column(sa.String(255), nullable=False)
    hard_limit = sa.Column(sa.Integer)


class VolumeTypeProjects(Base, CinderBase):
    """A project allowed to use a private volume type (upstream's
    ``volume_type_projects``)."""

    __tablename__ = "volume_type_projects"

    id = sa.Column(sa.Integer, primary_key=True)
    volume_type_id = sa.Column(sa.String(36),
                               sa.ForeignKey("volume_types.id"),
                               nullable=False, index=True)
    project_id = sa.Column(sa.String(255))


class Transfer(Base, CinderBase):
    """An offer to give a volume to another project (``transfers``): the
    receiver needs the transfer id and the auth key, of which only a
    salted hash is kept."""

    __tablename__ = "transfers"

    id = sa.Column(sa.String(36), primary_key=True)
    volume_id = sa.Column(sa.String(36), sa.ForeignKey("volumes.id"),
                          nullable=False, index=True)
    display_name = sa.Column(sa.String(255))
    salt = sa.Column(sa.String(255))
    crypt_hash = sa.Column(sa.String(255))
    source_project_id = sa.Column(sa.String(255))
    destination_project_id = sa.Column(sa.String(255))
    accepted = sa.Column(sa.Boolean, default=False)
    no_snapshots = sa.Column(sa.Boolean, default=False)
