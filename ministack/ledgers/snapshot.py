"""The attach ledgers as plain data: the snapshot and its divergences.

The seed names six ledgers that must agree about every attached volume:
nova's BDMs, Cinder's volumes and attachments, the libvirt domain XML
(a disk whose serial is the volume id), tgt's targets and ACLs, the LVM
volumes and the loop devices that stand in for device-mapper here.
``ministack_audit.ledgers`` reads them all into a :class:`Snapshot` (the
audit command), ``minicompute.reconcile`` builds one for its own host;
``checks.run`` compares them and returns a :class:`Divergence` per
disagreement, with the repair it calls for.

Hosts: the audit reads every compute host of the machine (each one's
libvirtd, CHAP secrets and initiator name) into ``hosts``; the
reconciler's snapshot has only its own host's guests, in ``domains``.
:func:`host_domains` and :func:`domain_of` read either.

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
    "libvirt_unreachable",        # a host's libvirtd did not answer
    "orphan_attachment",          # Cinder attachment, no BDM
    "bdm_without_attachment",     # BDM, no Cinder attachment
    "disk_without_bdm",           # domain disk (serial=volume), no BDM
    "bdm_disk_missing",           # BDM wired, disk not in the domain
    "detach_unfinished",          # detaching, guest let go, BDM left
    "domain_without_instance",    # our domain, instance deleted
    "domain_on_wrong_host",       # domain runs where nova says it is not
    "secret_without_disk",        # CHAP secret no guest of the host uses
    "session_without_disk",       # kernel iSCSI session no BDM needs
    "bdm_without_session",        # kernel-connected BDM, no session
    "in_use_without_attachment",  # volume says attached, no attachment
    "stuck_detaching",            # detaching with nothing in flight
    "attachment_wrong_initiator",  # connector's IQN is not its host's
    "export_without_volume",      # tgt target of a deleted volume
    "export_without_attachment",  # ACL admits an initiator nobody uses
    "missing_export",             # connected attachment, no target
    "initiator_not_admitted",     # connected attachment, not in the ACL
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
    :param host: the compute host it is about (whose libvirtd a repair
        goes through), or None (Cinder's own ledgers, or no one host).
    """

    kind: str
    subject: str
    detail: str
    fix: str
    safe: bool = True
    data: dict = dataclasses.field(default_factory=dict)
    fixed: bool = False
    fix_error: str | None = None
    host: str | None = None

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
      "live", "config", "xml"}}}} of the one host a partial snapshot
      is about (the reconciler's); None when ``hosts`` has them
    * ``hosts``: {host: {"uri", "first" (minicompute.conf's host),
      "initiator" (IQN or None: unknown),
      "domains" (as ``domains``; None: libvirtd not read), "secrets"
      ({usage id: {"target_iqn", "volume_id"}}: our CHAP secrets in its
      libvirtd), "secret_users" (usage ids its guests' disks name),
      "error" (why libvirtd was not read, or None)}}: every compute host
      of the machine (the audit's); None in a one-host snapshot
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
    hosts: dict = None
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



def host_domains(snap):
    """``[(host, {name: domain})]`` for every host whose libvirtd was
    read; a one-host snapshot (no ``hosts``) is ``[(None, domains)]``."""
    if snap.hosts is None:
        return [] if snap.domains is None else [(None, snap.domains)]
    return [(name, h["domains"]) for name, h in sorted(snap.hosts.items())
            if h.get("domains") is not None]


def domain_of(snap, instance_uuid):
    """The domain of an instance on its own host, or None."""
    inst = (snap.instances or {}).get(instance_uuid)
    if inst is None:
        return None
    if snap.hosts is None:
        return (snap.domains or {}).get(inst["domain"])
    host = snap.hosts.get(inst.get("host")) or {}
    return (host.get("domains") or {}).get(inst["domain"])


def instance_host(snap, instance_uuid):
    """The host nova says the instance is on, or None."""
    return ((snap.instances or {}).get(instance_uuid) or {}).get("host")


def one_host(snap, attachments):
    """The host of the attachments' instances if it is one host, else
    None."""
    hosts = {instance_host(snap, a["instance_uuid"]) for a in attachments}
    return hosts.pop() if len(hosts) == 1 else None


def initiator_hosts(snap):
    """{IQN: host} of every host whose initiator name is known."""
    return {h["initiator"]: name for name, h in
            sorted((snap.hosts or {}).items()) if h.get("initiator")}


def template_re(template):
    """A regex capturing the ``%s``/``%08x`` of a name template."""
    head, _, tail = re.split(r"(%[0-9]*[sdx])", template, maxsplit=1)
    return re.compile("^%s(.+)%s$" % (re.escape(head), re.escape(tail)))
