"""Read the six ledgers into a :class:`ministack.ledgers.snapshot.Snapshot`.

Where each one comes from (settings from the daemons' own config files,
so the audit sees exactly what they see):

* nova BDMs and instances: the nova database (``minicompute.conf``
  ``[database] connection``), read-only SQL;
* Cinder volumes and attachments: the cinder database
  (``minicinder.conf``), read-only SQL, because the REST API hides
  ``attach_status``, connectors and deleted rows;
* libvirt: every domain named by ``instance_name_template``, live and
  persistent XML (disks whose ``<serial>`` is a volume id);
* tgt: ``tgtadm --mode target --op show`` (targets named
  ``target_prefix`` + ``volume_name_template``);
* LVM: ``lvs`` with activation off (device-mapper may be missing) and the
  extent range of each LV;
* loop devices: ``losetup --list`` over the VG's physical volumes.
"""

import datetime
import json
import re
import xml.etree.ElementTree as ET

import sqlalchemy as sa
from oslo_config import cfg

from ministack import config
from ministack import db
from ministack import exception
from ministack import executor
from ministack.ledgers import snapshot


class Settings:
    """What the audit needs from the daemons' configs."""

    def __init__(self, compute_conf, cinder_conf):
        self.nova_db = config.database_url(compute_conf, "nova")
        self.host = compute_conf.host
        self.name_template = compute_conf.instance_name_template
        self.libvirt_uri = compute_conf.libvirt.connection_uri
        self.cinder_db = config.database_url(cinder_conf, "cinder")
        self.volume_group = cinder_conf.volume_group
        self.volume_name_template = cinder_conf.volume_name_template
        self.target_prefix = cinder_conf.target_prefix
        listen = cinder_conf.osapi_volume_listen
        self.cinder_url = "http://%s:%s" % (
            "127.0.0.1" if listen in ("0.0.0.0", "::") else listen,
            cinder_conf.osapi_volume_listen_port)
        self.cinder_auth_strategy = cinder_conf.auth_strategy
        self.cinder_conf = cinder_conf
        self.compute_conf = compute_conf


def load_settings(compute_file, cinder_file):
    """Parse minicompute.conf and minicinder.conf with the daemons' own
    option definitions (so defaults match theirs).

    :raises ConfigError: a file is missing or has a bad value.
    """
    from minicinder import conf as cinder_opts
    from minicompute import conf as compute_opts
    confs = []
    for path, register in ((compute_file, compute_opts.register_opts),
                           (cinder_file, cinder_opts.register_opts)):
        conf = cfg.ConfigOpts()
        config.register_common_opts(conf)
        register(conf)
        args = ["--config-file", path] if path else []
        config.parse_args(conf, args, project="ministack-audit")
        confs.append(conf)
    return Settings(*confs)


def _rows(url, query, **params):
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [dict(r) for r in conn.execute(sa.text(query),
                                                  params).mappings()]
    except sa.exc.DBAPIError as exc:
        # unreachable, or not a schema this audit knows (a wrong database,
        # no migrations); the URL is shown without its password
        raise exception.ConfigError(reason="cannot read %s: %s" % (
            sa.engine.make_url(url).render_as_string(),
            (str(exc.orig).splitlines() or [""])[0]))
    finally:
        engine.dispose()


def _time(value):
    if value is None or isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(str(value))


def read_nova(settings, snap):
    instances = {}
    for r in _rows(settings.nova_db,
                   "SELECT id, uuid, host, deleted FROM instances"):
        instances[r["uuid"]] = {
            "uuid": r["uuid"], "host": r["host"],
            "domain": settings.name_template % r["id"],
            "deleted": bool(r["deleted"])}
    snap.instances = instances
    snap.bdms = [{
        "id": r["id"], "instance_uuid": r["instance_uuid"],
        "volume_id": r["volume_id"], "attachment_id": r["attachment_id"],
        "connection_info": json.loads(r["connection_info"])
        if r["connection_info"] else None,
        "device_name": r["device_name"],
        "updated_at": _time(r["updated_at"] or r["created_at"])}
        for r in _rows(settings.nova_db,
                       "SELECT * FROM block_device_mapping WHERE deleted=0 "
                       "AND destination_type='volume' AND volume_id IS NOT "
                       "NULL")]
    snap.in_flight = {r["instance_uuid"] for r in _rows(
        settings.nova_db,
        "SELECT a.instance_uuid FROM instance_actions_events e JOIN "
        "instance_actions a ON a.id=e.action_id WHERE e.finish_time IS "
        "NULL AND e.deleted=0 AND e.event IN ('compute_attach_volume', "
        "'compute_detach_volume')")}


def read_cinder(settings, snap):
    snap.volumes = {r["id"]: {
        "id": r["id"], "status": r["status"], "deleted": bool(r["deleted"]),
        "updated_at": _time(r["updated_at"] or r["created_at"])}
        for r in _rows(settings.cinder_db,
                       "SELECT id, status, deleted, updated_at, created_at "
                       "FROM volumes")}
    snap.attachments = []
    # Cinder's ``deleted`` is a Boolean (PostgreSQL has no boolean = 0)
    for r in _rows(settings.cinder_db,
                   "SELECT * FROM volume_attachment WHERE deleted = :live",
                   live=False):
        connector = json.loads(r["connector"]) if r["connector"] else {}
        snap.attachments.append({
            "id": r["id"], "volume_id": r["volume_id"],
            "instance_uuid": r["instance_uuid"],
            "attach_status": r["attach_status"],
            "initiator": (connector or {}).get("initiator"),
            "updated_at": _time(r["updated_at"] or r["created_at"])})


def _template_re(template):
    """A regex capturing the ``%s``/``%08x`` of a name template."""
    head, _, tail = re.split(r"(%[0-9]*[sdx])", template, maxsplit=1)
    return re.compile("^%s(.+)%s$" % (re.escape(head), re.escape(tail)))


def read_libvirt(settings, snap):
    import libvirt
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    by_name = {i["domain"]: i["uuid"] for i in (snap.instances or {}
                                                ).values()}
    pattern = _template_re(settings.name_template)
    conn = libvirt.open(settings.libvirt_uri)
    domains = {}
    try:
        for dom in conn.listAllDomains():
            name = dom.name()
            if not pattern.match(name):
                continue
            active = bool(dom.isActive())
            live = _disks(dom.XMLDesc(0)) if active else {}
            persistent = _disks(dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
            disks = {}
            for dev in set(live) | set(persistent):
                el = live.get(dev, persistent.get(dev))
                serial = el.find("serial")
                disks[dev] = {"serial": serial.text if serial is not None
                              else None, "live": dev in live,
                              "config": dev in persistent,
                              "xml": ET.tostring(persistent.get(dev, el),
                                                 encoding="unicode")}
            domains[name] = {"instance_uuid": by_name.get(
                name, dom.UUIDString()), "active": active, "disks": disks}
    finally:
        conn.close()
    snap.domains = domains


def _disks(xml):
    root = ET.fromstring(xml)
    return {d.find("target").get("dev"): d
            for d in root.findall("./devices/disk")
            if d.find("target") is not None}


def read_tgt(settings, snap):
    from minicinder.volume import tgt
    pattern = _template_re(settings.target_prefix +
                           settings.volume_name_template)
    snap.targets = []
    for target in tgt.TgtAdm().show_targets():
        match = pattern.match(target["iqn"])
        if not match or not snapshot.UUID_RE.match(match.group(1)):
            continue  # not a volume of this Cinder's naming scheme
        snap.targets.append({
            "tid": target["tid"], "iqn": target["iqn"],
            "volume_id": match.group(1), "acls": target["acls"],
            "backing": next((lun["backing_store"] for lun in target["luns"]
                             if lun["lun"] == 1), None)})


def read_lvm(settings, snap, all_loops=True):
    from minicinder.volume import lvm
    vg = lvm.LVM(settings.volume_group)
    pattern = _template_re(settings.volume_name_template)
    snap.lvs = {}
    ranges = []
    for lv in vg.list_volumes():
        try:
            rng = vg.extent_range(lv["name"])
        except exception.MinistackException:
            rng = None
        if rng:
            ranges.append(rng)
        match = pattern.match(lv["name"])
        if match and snapshot.UUID_RE.match(match.group(1)):
            snap.lvs[lv["name"]] = {"volume_id": match.group(1),
                                    "range": rng}
    out, _ = executor.execute("pvs", "--config", "global{activation=0}",
                              "--noheadings", "-o", "pv_name,vg_name")
    pvs = {line.split()[0] for line in out.splitlines()
           if len(line.split()) == 2 and
           line.split()[1] == settings.volume_group}
    out, _ = executor.execute("losetup", "--list", "--noheadings", "--raw",
                              "--output", "NAME,OFFSET,SIZELIMIT,BACK-FILE")
    snap.loops = []
    foreign = set(ranges)
    for line in out.splitlines():
        fields = line.split(" ", 3)
        if len(fields) != 4 or fields[3].strip() not in pvs:
            continue
        loop = {"name": fields[0], "backing": fields[3].strip(),
                "offset": int(fields[1]), "size": int(fields[2])}
        key = (loop["backing"], loop["offset"], loop["size"])
        if key in foreign and key not in {
                lv["range"] for lv in snap.lvs.values()}:
            continue  # another Cinder's LV in the same VG
        snap.loops.append(loop)
    snap.all_loops = all_loops


def read_all(settings, grace=0, all_loops=True):
    """Every ledger: the snapshot that ``checks.run`` takes."""
    snap = snapshot.Snapshot(now=db.utcnow(), grace=grace)
    read_nova(settings, snap)
    read_cinder(settings, snap)
    read_libvirt(settings, snap)
    read_tgt(settings, snap)
    read_lvm(settings, snap, all_loops=all_loops)
    return snap
