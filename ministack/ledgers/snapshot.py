"""The attach ledgers as plain data: the snapshot and its divergences.

The seed names six ledgers that must agree about every attached volume:
nova's BDMs, Cinder's volumes and attachments, the libvirt domain XML
(a disk whose serial is the volume id), tgt's targets and ACLs, the LVM
volumes and the loop devices that stand in for device-mapper here.
``ministack_audit.ledgers`` reads them all into a :class:`Snapshot` (the
audit command), ``minicompute.reconcile`` builds one for its own host;
``checks.run`` compares them and returns a :class:`Divergence` per
disagreement, with the repair it calls for.

Grace: an attach is a sequence of writes to several ledgers, so for a
moment every healthy attach looks "divergent" (BDM before attachment,
attachment before connection_info). Anything younger than ``grace``
seconds is left alone (:func:`young`).
"""

import dataclasses
import datetime
import re

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                     r"[0-9a-f]{12}$")

# Volume statuses that claim an attachment exists.
ATTACHED_STATUSES = ("reserved", "attaching", "in-use", "detaching")

# The order fixes are applied in: exports before the loops they sit on,
# guest disks before the BDMs and attachments that describe them.
KINDS = (
    "orphan_attachment",          # Cinder attachment, no BDM
    "bdm_without_attachment",     # BDM, no Cinder attachment
    "disk_without_bdm",           # domain disk (serial=volume), no BDM
    "bdm_disk_missing",           # BDM wired, disk not in the domain
    "detach_unfinished",          # detaching, guest let go, BDM left
    "domain_without_instance",    # our domain, instance deleted
    "in_use_without_attachment",  # volume says attached, no attachment
    "stuck_detaching",            # detaching with nothing in flight
    "export_without_volume",      # tgt target of a deleted volume
    "export_without_attachment",  # ACL admits an initiator nobody uses
    "missing_export",             # connected attachment, no target
    "lv_without_volume",          # LV of a deleted volume
    "volume_without_lv",          # live volume whose LV is gone
    "duplicate_loop",             # second loop over one LV
    "leftover_loop",              # loop over extents no LV owns
)


@dataclasses.dataclass
class Divergence:
    """One disagreement between ledgers and how to repair it.

    :param kind: one of :data:`KINDS`.
    :param subject: what it is about ("attachment <id>", "vdb of ...").
    :param detail: what each ledger says.
    :param fix: the repair, in words.
    :param safe: whether ``--fix`` may apply it unattended.
    :param data: ids the fixer needs.
    """

    kind: str
    subject: str
    detail: str
    fix: str
    safe: bool = True
    data: dict = dataclasses.field(default_factory=dict)
    fixed: bool = False
    fix_error: str | None = None

    def to_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Snapshot:
    """The ledgers as plain data; None means "not inspected".

    * ``instances``: {uuid: {"uuid", "host", "domain", "deleted"}} (live
      instances, plus deleted ones that still matter, ``deleted`` True).
    * ``bdms``: [{"id", "instance_uuid", "volume_id", "attachment_id",
      "connection_info" (dict or None), "device_name", "updated_at"}]
    * ``volumes``: {id: {"id", "status", "deleted", "updated_at"}}
    * ``attachments``: [{"id", "volume_id", "instance_uuid",
      "attach_status", "initiator", "updated_at"}] (live ones)
    * ``domains``: {name: {"instance_uuid", "disks": {dev: {"serial",
      "live", "config", "xml"}}}}
    * ``targets``: [{"tid", "iqn", "volume_id", "acls", "backing"}]
    * ``lvs``: {name: {"volume_id", "range": (pv, offset, size)}}
    * ``loops``: [{"name", "backing", "offset", "size"}] over the VG's PVs
    * ``in_flight``: instance uuids with a compute event still running
    * ``all_loops``: whether unattributable loops are reported
    """

    instances: dict = None
    bdms: list = None
    volumes: dict = None
    attachments: list = None
    domains: dict = None
    targets: list = None
    lvs: dict = None
    loops: list = None
    in_flight: set = dataclasses.field(default_factory=set)
    #: report loops no LV owns (False when only some LVs are "ours": a
    #: leftover loop cannot be attributed to anyone)
    all_loops: bool = True
    now: datetime.datetime = None
    grace: float = 0


def young(snap, when):
    if not when or not snap.grace:
        return False
    now = snap.now or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    return (now - when).total_seconds() < snap.grace


def bdm_index(snap):
    return {(b["instance_uuid"], b["volume_id"]): b for b in snap.bdms}


def live_attachments_by_volume(snap):
    out = {}
    for att in snap.attachments:
        out.setdefault(att["volume_id"], []).append(att)
    return out

