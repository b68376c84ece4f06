"""SQLAlchemy models of the nova database (upstream's names and columns).

Soft delete follows nova's ``SoftDeleteMixin``: ``deleted`` is 0 for a live
row and equal to the row's ``id`` once deleted, so unique constraints can
include it.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from ministack.db import TimestampMixin
from ministack.db import utcnow


class Base(orm.DeclarativeBase):
    pass


class NovaBase(TimestampMixin):
    deleted = sa.Column(sa.Integer, default=0, nullable=False)


class Service(Base, NovaBase):
    """A running daemon, fed by its periodic heartbeat (``report_count``)."""

    __tablename__ = "services"
    __table_args__ = (
        sa.UniqueConstraint("host", "topic", "deleted",
                            name="uniq_services0host0topic0deleted"),
        sa.UniqueConstraint("host", "binary", "deleted",
                            name="uniq_services0host0binary0deleted"),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=True, unique=True)
    host = sa.Column(sa.String(255))
    binary = sa.Column(sa.String(255))
    topic = sa.Column(sa.String(255))
    report_count = sa.Column(sa.Integer, nullable=False, default=0)
    disabled = sa.Column(sa.Boolean, default=False)
    disabled_reason = sa.Column(sa.String(255))
    last_seen_up = sa.Column(sa.DateTime, nullable=True)
    forced_down = sa.Column(sa.Boolean, default=False)
    version = sa.Column(sa.Integer, default=0)


class ComputeNode(Base, NovaBase):
    """One hypervisor node as its compute host reports it (nova's resource
    tracker): the node's totals and facts, written by minicompute at
    start-up and on every report. Not kept: the ``*_used``, ``free_*``,
    ``running_vms`` and ``current_workload`` figures, which the API sums
    from the host's instances when it shows them."""

    __tablename__ = "compute_nodes"
    __table_args__ = (
        sa.Index("compute_nodes_uuid_idx", "uuid", unique=True),
        sa.UniqueConstraint(
            "host", "hypervisor_hostname", "deleted",
            name="uniq_compute_nodes0host0hypervisor_hostname0deleted"),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=True)
    service_id = sa.Column(sa.Integer, nullable=True)
    host = sa.Column(sa.String(255), nullable=True)
    hypervisor_hostname = sa.Column(sa.String(255))
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    local_gb = sa.Column(sa.Integer, nullable=False)
    disk_available_least = sa.Column(sa.Integer)
    hypervisor_type = sa.Column(sa.Text, nullable=False)
    hypervisor_version = sa.Column(sa.Integer, nullable=False)
    # libvirt's CPU description as JSON text (arch, model, vendor,
    # topology, features), as upstream stores it.
    cpu_info = sa.Column(sa.Text, nullable=False)
    host_ip = sa.Column(sa.String(39))


class Flavor(Base, TimestampMixin):
    """Flavors live in the API database upstream; one table is enough here."""

    __tablename__ = "flavors"

    id = sa.Column(sa.Integer, primary_key=True)
    flavorid = sa.Column(sa.String(255), nullable=False, unique=True)
    name = sa.Column(sa.String(255), nullable=False, unique=True)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    vcpus = sa.Column(sa.Integer, nullable=False)
    root_gb = sa.Column(sa.Integer)
    ephemeral_gb = sa.Column(sa.Integer)
    swap = sa.Column(sa.Integer, nullable=False, default=0)
    rxtx_factor = sa.Column(sa.Float, default=1)
    disabled = sa.Column(sa.Boolean, default=False)
    is_public = sa.Column(sa.Boolean, default=True)
    description = sa.Column(sa.Text)


class FlavorExtraSpecs(Base, TimestampMixin):
    """One ``key=value`` extra spec of a flavor (nova API DB's table)."""

    __tablename__ = "flavor_extra_specs"
    __table_args__ = (
        sa.Index("flavor_extra_specs_flavor_id_key_idx", "flavor_id", "key"),
        sa.UniqueConstraint("flavor_id", "key",
                            name="uniq_flavor_extra_specs0flavor_id0key"),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    flavor_id = sa.Column(sa.Integer, sa.ForeignKey("flavors.id"),
                          nullable=False)
    key = sa.Column(sa.String(255), nullable=False)
    value = sa.Column(sa.String(255))


class FlavorProjects(Base, TimestampMixin):
    """A project allowed to use a private flavor (os-flavor-access)."""

    __tablename__ = "flavor_projects"
    __table_args__ = (
        sa.UniqueConstraint("flavor_id", "project_id",
                            name="uniq_flavor_projects0flavor_id0project_id"),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    flavor_id = sa.Column(sa.Integer, sa.ForeignKey("flavors.id"),
                          nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)


class Instance(Base, NovaBase):
    """A server. ``name`` is derived: ``instance-%08x`` % id."""

    __tablename__ = "instances"
    __table_args__ = (
        sa.Index("instances_host_deleted_idx", "host", "deleted"),
        sa.Index("instances_project_id_deleted_idx", "project_id",
                 "deleted"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    user_id = sa.Column(sa.String(255))
    project_id = sa.Column(sa.String(255))
    image_ref = sa.Column(sa.String(255))
    kernel_id = sa.Column(sa.String(255))
    ramdisk_id = sa.Column(sa.String(255))
    hostname = sa.Column(sa.String(255))
    display_name = sa.Column(sa.String(255))
    display_description = sa.Column(sa.String(255))
    host = sa.Column(sa.String(255))
    node = sa.Column(sa.String(255))
    instance_type_id = sa.Column(sa.Integer)
    memory_mb = sa.Column(sa.Integer)
    vcpus = sa.Column(sa.Integer)
    root_gb = sa.Column(sa.Integer)
    ephemeral_gb = sa.Column(sa.Integer)
    vm_state = sa.Column(sa.String(255))
    task_state = sa.Column(sa.String(255))
    power_state = sa.Column(sa.Integer)
    launched_at = sa.Column(sa.DateTime)
    terminated_at = sa.Column(sa.DateTime)
    availability_zone = sa.Column(sa.String(255))
    root_device_name = sa.Column(sa.String(255))
    key_name = sa.Column(sa.String(255))
    config_drive = sa.Column(sa.String(255))
    locked = sa.Column(sa.Boolean, default=False)
    progress = sa.Column(sa.Integer)
    # Addresses the user says reach the server (accessIPv4/accessIPv6);
    # nova's IPAddress type is a String(39) outside PostgreSQL.
    access_ip_v4 = sa.Column(sa.String(39))
    access_ip_v6 = sa.Column(sa.String(39))
    # The flavor as it was at boot (upstream keeps it in instance_extra).
    flavor = sa.Column(sa.Text)
    # The fault shown in the API when vm_state is error (instance_faults
    # upstream; one row per instance is enough to show the last one).
    fault = sa.Column(sa.Text)

    @property
    def name(self):
        return instance_name(self.id)


def instance_name(instance_id):
    """An instance's ``name`` (its libvirt domain) from its id."""
    return "instance-%08x" % instance_id


class InstanceMetadata(Base, NovaBase):
    """One ``key: value`` item of a server's user metadata."""

    __tablename__ = "instance_metadata"
    __table_args__ = (
        sa.Index("instance_metadata_instance_uuid_idx", "instance_uuid"),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    key = sa.Column(sa.String(255))
    value = sa.Column(sa.String(255))
    instance_uuid = sa.Column(sa.String(36),
                              sa.ForeignKey("instances.uuid"))


class BlockDeviceMapping(Base, NovaBase):
    """How one volume (or the root disk) is mapped into one instance."""

    __tablename__ = "block_device_mapping"
    __table_args__ = (
        sa.Index("snapshot_id", "snapshot_id"),
        sa.Index("volume_id", "volume_id"),
        sa.Index("block_device_mapping_instance_uuid_device_name_idx",
                 "instance_uuid", "device_name"),
        sa.Index("block_device_mapping_instance_uuid_volume_id_idx",
                 "instance_uuid", "volume_id"),
        sa.Index("block_device_mapping_instance_uuid_idx", "instance_uuid"),
        sa.UniqueConstraint("uuid", name="uniq_block_device_mapping0uuid"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    instance_uuid = sa.Column(sa.String(36), sa.ForeignKey("instances.uuid"))
    uuid = sa.Column(sa.String(36))
    source_type = sa.Column(sa.String(255))
    destination_type = sa.Column(sa.String(255))
    guest_format = sa.Column(sa.String(255))
    device_type = sa.Column(sa.String(255))
    disk_bus = sa.Column(sa.String(255))
    boot_index = sa.Column(sa.Integer)
    device_name = sa.Column(sa.String(255))
    delete_on_termination = sa.Column(sa.Boolean, default=False)
    snapshot_id = sa.Column(sa.String(36))
    volume_id = sa.Column(sa.String(36))
    volume_size = sa.Column(sa.Integer)
    volume_type = sa.Column(sa.String(255))
    image_id = sa.Column(sa.String(36))
    no_device = sa.Column(sa.Boolean)
    connection_info = sa.Column(sa.Text)
    tag = sa.Column(sa.String(255))
    attachment_id = sa.Column(sa.String(36))
    encrypted = sa.Column(sa.Boolean, default=False)
    encryption_secret_uuid = sa.Column(sa.String(36))
    encryption_format = sa.Column(sa.String(128))
    encryption_options = sa.Column(sa.String(4096))


class InstanceAction(Base, NovaBase):
    """One user-visible action on an instance (attach_volume...)."""

    __tablename__ = "instance_actions"
    __table_args__ = (
        sa.Index("instance_uuid_idx", "instance_uuid"),
        sa.Index("request_id_idx", "request_id"),
        sa.Index("instance_actions_instance_uuid_updated_at_idx",
                 "instance_uuid", "updated_at"),
    )

    id = sa.Column(sa.Integer, primary_key=True, nullable=False,
                   autoincrement=True)
    action = sa.Column(sa.String(255))
    instance_uuid = sa.Column(sa.String(36), sa.ForeignKey("instances.uuid"))
    request_id = sa.Column(sa.String(255))
    user_id = sa.Column(sa.String(255))
    project_id = sa.Column(sa.String(255))
    start_time = sa.Column(sa.DateTime, default=utcnow)
    finish_time = sa.Column(sa.DateTime)
    message = sa.Column(sa.String(255))


class InstanceActionEvent(Base, NovaBase):
    """One step of an action, e.g. compute_attach_volume on a host."""

    __tablename__ = "instance_actions_events"
    __table_args__ = (
        sa.Index("instance_actions_events_action_id_idx", "action_id"),
    )

    id = sa.Column(sa.Integer, primary_key=True, nullable=False,
                   autoincrement=True)
    event = sa.Column(sa.String(255))
    action_id = sa.Column(sa.Integer, sa.ForeignKey("instance_actions.id"))
    start_time = sa.Column(sa.DateTime, default=utcnow)
    finish_time = sa.Column(sa.DateTime)
    result = sa.Column(sa.String(255))
    traceback = sa.Column(sa.Text)
    host = sa.Column(sa.String(255))
    details = sa.Column(sa.Text)


class Migration(Base, NovaBase):
    """One move of an instance between hosts (or on one host): a resize,
    a cold or live migration, an evacuation; ``status`` follows the move
    (``os-migrations`` and ``/servers/{id}/migrations`` show it)."""

    __tablename__ = "migrations"
    __table_args__ = (
        sa.Index("migrations_instance_uuid_and_status_idx", "deleted",
                 "instance_uuid", "status"),
        # A prefix of each string column: MariaDB's keys hold 3072 bytes.
        sa.Index("migrations_by_host_nodes_and_status_idx", "deleted",
                 "source_compute", "dest_compute", "source_node",
                 "dest_node", "status",
                 mysql_length={"source_compute": 128, "dest_compute": 128,
                               "source_node": 128, "dest_node": 128,
                               "status": 64}),
        sa.Index("migrations_uuid", "uuid", unique=True),
        sa.Index("migrations_updated_at_idx", "updated_at"),
    )

    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    uuid = sa.Column(sa.String(36))
    source_compute = sa.Column(sa.String(255))
    dest_compute = sa.Column(sa.String(255))
    source_node = sa.Column(sa.String(255))
    dest_node = sa.Column(sa.String(255))
    dest_host = sa.Column(sa.String(255))
    old_instance_type_id = sa.Column(sa.Integer)
    new_instance_type_id = sa.Column(sa.Integer)
    instance_uuid = sa.Column(sa.String(36), sa.ForeignKey("instances.uuid"))
    status = sa.Column(sa.String(255))
    migration_type = sa.Column(sa.String(255))
    hidden = sa.Column(sa.Boolean, default=False)
    memory_total = sa.Column(sa.BigInteger)
    memory_processed = sa.Column(sa.BigInteger)
    memory_remaining = sa.Column(sa.BigInteger)
    disk_total = sa.Column(sa.BigInteger)
    disk_processed = sa.Column(sa.BigInteger)
    disk_remaining = sa.Column(sa.BigInteger)
    cross_cell_move = sa.Column(sa.Boolean, default=False)
    user_id = sa.Column(sa.String(255))
    project_id = sa.Column(sa.String(255))
