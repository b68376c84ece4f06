"""Restart recovery and the periodic reconciler of one compute host.

Two jobs, both run by :class:`~minicompute.service.ComputeService`:

* :meth:`Reconciler.recover_interrupted` (start-up, before the RPC server
  listens): an instance action event of this host that never finished is
  an operation this process was doing when it died (SIGKILL, power
  loss). The event's details name the volume (``volume <id>``), so each
  is settled: an interrupted **attach** is rolled back (disk out of the
  guest if it got there, Cinder attachment deleted, BDM destroyed), an
  interrupted **detach** is rolled forward (the detach is idempotent), and
  the event is finished as Error with what was done, so ``server event
  show`` explains it. Casts still queued for this host are *not* touched:
  they have no event yet and run normally once the server listens.
* :meth:`Reconciler.run` (start-up, then every ``[compute]
  reconcile_interval`` seconds): the checks of ``ministack-audit``
  (``ministack.ledgers.checks``) on this host's view (BDMs, Cinder's
  attachments, the guests' disks), instance by instance under the
  instance lock, so an attach in flight is never seen half-done. It fixes
  what is safe, with the audit's own repairs
  (``ministack.ledgers.repairs``, through this host's driver and Cinder
  adapter): orphan attachments, BDMs without attachment, disks
  without BDM, wired volumes missing from their guest, volumes stuck
  detaching, and volumes of its BDMs left ``in-use`` with no attachment
  at all (reset to available once Cinder confirms nobody holds them).
  What only Cinder's host can see (tgt targets, LVs, loop devices) is
  left to ``ministack-audit``.
"""

import datetime
import json

from oslo_log import log as logging

from minicompute import exception
from minicompute import utils
from minicompute.db import api as db_api
from minicompute.db import models
from minicompute.db.session import scope
from ministack import context as ms_context
from ministack import db
from ministack.ledgers import checks
from ministack.ledgers import repairs
from ministack.ledgers import snapshot

LOG = logging.getLogger(__name__)

_VOLUME_EVENTS = ("compute_attach_volume", "compute_detach_volume")


def _parse_time(value):
    if isinstance(value, datetime.datetime):
        return value
    if not value:
        return None
    try:
        return datetime.datetime.fromisoformat(
            str(value).replace("Z", "")).replace(tzinfo=None)
    except ValueError:
        return None


def _attachment(summary):
    """Cinder's attachment summary as the checks' attachment ledger row."""
    return {"id": summary["id"], "volume_id": summary["volume_id"],
            "instance_uuid": summary.get("instance"),
            "attach_status": summary.get("status"), "initiator": None,
            "updated_at": _parse_time(summary.get("attached_at"))}


class Reconciler:
    """Settles what this host's ledgers disagree about.

    :param manager: the :class:`~minicompute.manager.ComputeManager` whose
        driver, Cinder API and host name are used.
    """

    def __init__(self, conf, manager):
        self.conf = conf
        self.manager = manager
        self.host = conf.host
        self.driver = manager.driver
        self.volume_api = manager.volume_api

    # -- start-up: events this process left running --

    def _running_events(self):
        """(event row, action row) of this host with no finish time."""
        with scope() as session:
            rows = session.query(models.InstanceActionEvent,
                                 models.InstanceAction).join(
                models.InstanceAction,
                models.InstanceAction.id ==
                models.InstanceActionEvent.action_id).filter(
                models.InstanceActionEvent.host == self.host,
                models.InstanceActionEvent.finish_time.is_(None),
                models.InstanceActionEvent.deleted == 0).all()
        return rows

    def in_flight(self):
        """Instance uuids with an operation running on this host now."""
        return {action.instance_uuid for _, action in self._running_events()}

    def recover_interrupted(self):
        """Settle every event this host never finished (call before the
        RPC server starts: nothing of ours can be running yet)."""
        for event, action in self._running_events():
            ctxt = ms_context.RequestContext(
                user_id=action.user_id, project_id=action.project_id,
                request_id=action.request_id, is_admin=True)
            volume_id = None
            if (event.details or "").startswith("volume "):
                volume_id = event.details.split(" ", 1)[1].strip()
            try:
                outcome = self._settle(ctxt, action.instance_uuid,
                                       event.event, volume_id)
            except Exception as exc:
                outcome = "recovery failed: %s" % (
                    exc.format_message() if hasattr(exc, "format_message")
                    else exc)
                LOG.exception("Could not settle interrupted %s of %s",
                              event.event, action.instance_uuid)
            reason = "interrupted: minicompute on %s stopped during %s; %s" \
                % (self.host, event.event, outcome)
            LOG.warning("%s (instance %s)", reason, action.instance_uuid)
            db_api.action_event_finish(
                ctxt, action.instance_uuid, event.event, self.host,
                result="Error", details=(
                    "volume %s: %s" % (volume_id, reason) if volume_id
                    else reason))

    def _settle(self, ctxt, instance_uuid, event, volume_id):
        if event not in _VOLUME_EVENTS or not volume_id:
            return "nothing to roll back"
        try:
            instance = self.manager.load_instance(
                ctxt, {"uuid": instance_uuid})
        except exception.InstanceNotFound:
            return "the instance is gone"
        with utils.instance_lock(instance_uuid):
            try:
                row = db_api.bdm_get_by_volume_and_instance(
                    ctxt, volume_id, instance_uuid)
            except exception.VolumeBDMNotFound:
                row = None
            if event == "compute_detach_volume":
                if row is None:
                    return "the detach had finished"
                self.manager.detach_volume_under_lock(
                    ctxt, instance, volume_id, row.attachment_id)
                return "the detach was completed"
            return self._roll_back_attach(ctxt, instance, volume_id, row)

    def _roll_back_attach(self, ctxt, instance, volume_id, row):
        if row is not None and row.connection_info and row.attachment_id:
            try:
                att = self.volume_api.attachment_get(ctxt, row.attachment_id)
            except exception.VolumeAttachmentNotFound:
                att = None
            if att is not None and att.get("status") == "attached":
                return "the attach had completed"
        disks = self.driver.list_volume_disks(instance) or {"disks": {}}
        for dev, disk in disks["disks"].items():
            if disk.get("serial") == volume_id:
                self.driver.unplug_disk(ctxt, instance, dev)
        attachment_id = row.attachment_id if row is not None else None
        if attachment_id:
            try:
                self.volume_api.attachment_delete(ctxt, attachment_id)
            except exception.VolumeAttachmentNotFound:
                pass
        if row is not None:
            db_api.bdm_destroy(ctxt, row.id)
        return "the attach was rolled back (volume released, BDM removed)"

    # -- the checks --

    def _snapshot(self, ctxt, instance, in_flight):
        uuid = instance["uuid"]
        bdms = []
        for row in db_api.bdm_get_all_by_instance(ctxt, uuid):
            if row.destination_type != "volume" or not row.volume_id:
                continue
            bdms.append({
                "id": row.id, "instance_uuid": uuid,
                "volume_id": row.volume_id,
                "attachment_id": row.attachment_id,
                "connection_info": json.loads(row.connection_info)
                if row.connection_info else None,
                "device_name": row.device_name, "disk_bus": row.disk_bus,
                "device_type": row.device_type,
                "updated_at": row.updated_at or row.created_at})
        attachments = [
            _attachment(a)
            for a in self.volume_api.attachment_list(ctxt, instance_id=uuid)]
        volumes = {}
        for vid in {b["volume_id"] for b in bdms} | {
                a["volume_id"] for a in attachments}:
            try:
                vol = self.volume_api.get(ctxt, vid)
            except exception.VolumeNotFound:
                continue
            volumes[vid] = {"id": vid, "status": vol["status"],
                            "deleted": False,
                            "updated_at": _parse_time(vol.get("updated_at"))}
        # A volume that claims to be attached with no attachment of ours
        # may be attached to another server (multiattach): bring in its
        # other attachments so the checks see them.
        ours = {a["volume_id"] for a in attachments}
        for vid, vol in volumes.items():
            if vol["status"] in snapshot.ATTACHED_STATUSES and \
                    vid not in ours:
                attachments.extend(
                    _attachment(a) for a in self.volume_api.attachment_list(
                        ctxt, volume_id=vid))
        # Cinder's attachment summary has no created_at, and a fresh
        # reservation has no attached_at: its age is that of the volume's
        # last change (the reserve itself), so a reservation made a moment
        # ago is not taken for an abandoned one.
        for att in attachments:
            changed = (volumes.get(att["volume_id"]) or {}).get("updated_at")
            if changed and (att["updated_at"] is None
                            or changed > att["updated_at"]):
                att["updated_at"] = changed
        domains = {}
        disks = self.driver.list_volume_disks(instance)
        if disks is not None:
            domains[instance["name"]] = dict(disks, instance_uuid=uuid)
        return snapshot.Snapshot(
            instances={uuid: {"uuid": uuid, "host": self.host,
                              "domain": instance["name"],
                              "deleted": False}},
            bdms=bdms, volumes=volumes, attachments=attachments,
            domains=domains, in_flight=in_flight, now=db.utcnow(),
            grace=self.conf.compute.reconcile_grace)

    def run(self, fix=True):
        """Check (and fix) every instance of this host; the divergences."""
        ctxt = ms_context.get_admin_context()
        found = []
        in_flight = self.in_flight()
        for row in db_api.instance_get_all(ctxt, {"host": self.host,
                                                  "all_tenants": True}):
            instance = self.manager.load_instance(ctxt, {"uuid": row.uuid})
            with utils.instance_lock(row.uuid):
                try:
                    snap = self._snapshot(ctxt, instance, in_flight)
                except Exception:
                    LOG.exception("Reconciler could not read the ledgers of "
                                  "%s", row.uuid)
                    continue
                divergences = checks.run(snap)
                for div in divergences:
                    LOG.warning("Divergence %s: %s: %s", div.kind,
                                div.subject, div.detail)
                    if fix and div.safe:
                        self._fix(ctxt, instance, snap, div)
                found.extend(divergences)
        return found

    def _fix(self, ctxt, instance, snap, div):
        if div.kind not in repairs.COMPUTE_KINDS:
            return
        hands = _HostHands(ctxt, instance, self.driver, self.volume_api)
        if repairs.apply(div, snap, hands):
            LOG.warning("Fixed %s: %s", div.kind, div.subject)
        elif div.fix_error:
            LOG.error("Could not fix %s: %s: %s", div.kind, div.subject,
                      div.fix_error)


class _HostHands(repairs.Hands):
    """The repairs' operations on one instance of this host: its guest
    through the driver, its BDMs in the nova DB, Cinder through the
    Cinder adapter."""

    def __init__(self, ctxt, instance, driver, volume_api):
        self.ctxt = ctxt
        self.instance = instance
        self.driver = driver
        self.volume_api = volume_api

    def delete_attachment(self, attachment_id):
        try:
            self.volume_api.attachment_delete(self.ctxt, attachment_id)
        except exception.VolumeAttachmentNotFound:
            pass

    def destroy_bdm(self, bdm_id):
        db_api.bdm_destroy(self.ctxt, bdm_id)

    def unplug_disk(self, instance_uuid, domain, dev):
        self.driver.unplug_disk(self.ctxt, self.instance, dev)

    def replug_volume(self, bdm, instance_uuid, domain):
        self.driver.replug_volume(
            self.ctxt, bdm["connection_info"], self.instance,
            bdm["device_name"], disk_bus=bdm["disk_bus"],
            device_type=bdm["device_type"])

    def may_reset_volume(self, volume_id):
        # Look again: only reset a volume Cinder still holds for no one.
        return not self.volume_api.attachment_list(self.ctxt,
                                                   volume_id=volume_id)

    def reset_volume(self, volume_id, status, attach_status=None):
        self.volume_api.reset_status(self.ctxt, volume_id, status,
                                     attach_status)

    def roll_detaching(self, volume_id):
        self.volume_api.roll_detaching(self.ctxt, volume_id)
