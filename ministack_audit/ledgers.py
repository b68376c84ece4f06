"""Read the six ledgers into a :class:`ministack.ledgers.snapshot.Snapshot`.

The audit is a client of each ledger's owner, with the settings of the
daemons' own config files, so it sees exactly what they see:

* nova BDMs, instances and running events: nova's data API
  (``minicompute.db.api``) on ``minicompute.conf`` ``[database]
  connection``;
* Cinder volumes and attachments: minicinder's data API
  (``minicinder.db.api``) on ``minicinder.conf``'s database. Cinder's REST
  API cannot serve these: it never shows deleted volumes (a leftover LV
  or target of a deleted volume is cleaned up, one of a volume never
  heard of is left to a person), nor an attachment's connector (the
  initiator an export's ACL must account for);
* libvirt, on every compute host of the machine (``hosts.py``):
  minicompute's libvirt driver and host on each host's
  ``connection_uri`` (every domain named by ``instance_name_template``,
  its live and persistent disks whose ``<serial>`` is a volume id, the
  CHAP secrets of our targets), and each host's initiator name;
* tgt: minicinder's ``TgtAdm`` (targets named ``target_prefix`` +
  ``volume_name_template``);
* LVM and loop devices: minicinder's ``LVM`` adapter (LVs, the extent
  range of each, the loop devices over the group's physical volumes).

Every read is read-only; the repairs are ``fixes.py``.
"""

import contextlib
import json
import os

from oslo_config import cfg
import sqlalchemy as sa

from minicinder import conf as cinder_opts
from minicinder.db import api as cinder_db
from minicinder.db import attachment_reads
from minicinder.volume.drivers import lvm
from minicinder.volume.targets import tgt
from minicompute import conf as compute_opts
from minicompute import hosts as compute_hosts
from minicompute.db import api as nova_db
from ministack import config
from ministack import context
from ministack import db
from ministack import exception
from ministack.ledgers import snapshot
from ministack_audit import hosts as hosts_mod

# The compute events whose volume is in flight while they run.
_VOLUME_EVENTS = ("compute_attach_volume", "compute_detach_volume")


class Settings:
    """What the audit needs from the daemons' configs."""

    def __init__(self, compute_conf, cinder_conf, hosts=None):
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
        #: every compute host the audit reads, the first host's first
        self.hosts = [hosts_mod.HostSettings(
            self.host, self.libvirt_uri, compute_conf, first=True)]
        self.hosts += [h for h in hosts or () if h.name != self.host]
        self.libvirt_timeout = hosts_mod.CONNECT_TIMEOUT


def _parse(path, register):
    conf = cfg.ConfigOpts()
    config.register_common_opts(conf)
    register(conf)
    args = ["--config-file", path] if path else []
    config.parse_args(conf, args, project="ministack-audit")
    return conf


def load_settings(compute_file, cinder_file):
    """Parse minicompute.conf and minicinder.conf with the daemons' own
    option definitions (so defaults match theirs), and the config of
    every other compute host beside minicompute.conf
    (``minicompute@HOST.conf``, ``minicompute.hosts``).

    :raises ConfigError: a file is missing or has a bad value.
    """
    compute_conf = _parse(compute_file, compute_opts.register_opts)
    cinder_conf = _parse(cinder_file, cinder_opts.register_opts)
    others = []
    if compute_file:
        own = os.path.realpath(compute_file)
        for host in compute_hosts.compute_hosts(
                os.path.dirname(own)).values():
            if os.path.realpath(host.config_file) == own:
                continue
            conf = _parse(host.config_file, compute_opts.register_opts)
            others.append(hosts_mod.HostSettings(
                host.name, conf.libvirt.connection_uri, conf))
    return Settings(compute_conf, cinder_conf, others)


@contextlib.contextmanager
def _reading(url):
    """An engine on a daemon's database for one read; any database error
    (unreachable, or not a schema this audit knows: a wrong database, no
    migrations) becomes a one-line ConfigError naming the URL without
    its password."""
    engine = sa.create_engine(url)
    try:
        yield engine
    except sa.exc.DBAPIError as exc:
        raise exception.ConfigError(reason="cannot read %s: %s" % (
            sa.engine.make_url(url).render_as_string(),
            (str(exc.orig).splitlines() or [""])[0]))
    finally:
        engine.dispose()


@contextlib.contextmanager
def cinder_session(settings):
    """One read transaction on the cinder database, for minicinder's
    data API (``minicinder.db.api``)."""
    with _reading(settings.cinder_db) as engine, \
            db.session_scope(db.make_sessionmaker(engine)) as session:
        yield session


def read_nova(settings, snap):
    ctxt = context.get_admin_context()
    with _reading(settings.nova_db) as engine:
        nova_db.configure(engine)
        instances = nova_db.instance_get_all_including_deleted(ctxt)
        bdms = nova_db.bdm_get_all_volumes(ctxt)
        running = nova_db.action_events_running(ctxt, events=_VOLUME_EVENTS)
    snap.instances = {r.uuid: {
        "uuid": r.uuid, "host": r.host,
        "domain": settings.name_template % r.id,
        "deleted": bool(r.deleted)} for r in instances}
    snap.bdms = [{
        "id": r.id, "instance_uuid": r.instance_uuid,
        "volume_id": r.volume_id, "attachment_id": r.attachment_id,
        "connection_info": json.loads(r.connection_info)
        if r.connection_info else None,
        "device_name": r.device_name,
        "updated_at": r.updated_at or r.created_at} for r in bdms]
    snap.in_flight = {action.instance_uuid for _event, action in running}


def read_cinder(settings, snap):
    with cinder_session(settings) as session:
        volumes = cinder_db.volume_get_all_including_deleted(session)
        attachments = attachment_reads.every_live_attachment(session)
        snap.volumes = {r.id: {
            "id": r.id, "status": r.status, "deleted": bool(r.deleted),
            "updated_at": r.updated_at or r.created_at} for r in volumes}
        snap.attachments = [{
            "id": r.id, "volume_id": r.volume_id,
            "instance_uuid": r.instance_uuid,
            "attach_status": r.attach_status,
            "initiator": (cinder_db.load_json(r.connector) or {}).get(
                "initiator"),
            "updated_at": r.updated_at or r.created_at}
            for r in attachments]


def read_tgt(settings, snap):
    pattern = snapshot.template_re(settings.target_prefix +
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
    vg = lvm.LVM(settings.volume_group)
    pattern = snapshot.template_re(settings.volume_name_template)
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
    snap.loops = []
    foreign = set(ranges)
    ours = {lv["range"] for lv in snap.lvs.values()}
    for loop in vg.loop_devices():
        key = (loop["backing"], loop["offset"], loop["size"])
        if key in foreign and key not in ours:
            continue  # another Cinder's LV in the same VG
        snap.loops.append(loop)
    snap.all_loops = all_loops


def read_all(settings, grace=0, all_loops=True):
    """Every ledger: the snapshot that ``checks.run`` takes."""
    snap = snapshot.Snapshot(now=db.utcnow(), grace=grace)
    read_nova(settings, snap)
    read_cinder(settings, snap)
    hosts_mod.read_libvirt(settings, snap)
    read_tgt(settings, snap)
    read_lvm(settings, snap, all_loops=all_loops)
    return snap
