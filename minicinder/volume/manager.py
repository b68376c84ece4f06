"""The volume manager: the only code that drives the storage backend.

Upstream splits cinder-api and cinder-volume over RPC; minicinder runs the
manager in the API process (no RPC inside cinder) with a small thread pool
for the slow, asynchronous jobs (create and delete), and calls it directly
for the fast synchronous ones (export and connection on attachment update).

Rules kept here:

* driver calls never run inside a database transaction (a slow ``dd``
  must not hold SQLite's write lock);
* every operation touching a volume's export runs under that volume's
  lock, so an export is never torn down while another request builds it;
* each side effect has its undo: a connection whose database write fails
  is disconnected again, and an initiator is revoked only when no other
  attachment of the volume still uses it;
* an export lives from the volume's first connection until the volume is
  deleted; access is the ACL, changed on every attach and detach.
"""

import concurrent.futures
import dataclasses
import logging
import threading

from minicinder import exception
from minicinder.db import api as db
from minicinder.db import attachment_reads
from minicinder.db import models
from minicinder.db import volume_reads
from minicinder.volume import driver as volume_driver
from minicinder.volume import extend
from minicinder.volume import locks
from minicinder.volume import states
from minicinder.volume.targets import iscsi_names
from ministack import context as ms_context
from ministack import db as ms_db

LOG = logging.getLogger(__name__)


class InlineExecutor:
    """Runs submitted jobs at once; unit tests use it instead of threads."""

    def submit(self, fn, *args, **kwargs):
        future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # the job logs its own failure
            future.set_exception(exc)
        return future

    def shutdown(self, wait=True):
        pass


# Statuses in which the backend job owns the device (the export check
# leaves such a volume's export alone).
_BUSY_DEVICE = (states.CREATING, states.DELETING, states.EXTENDING)


def volume_lock(volume_id):
    """The lock serialising export changes of one volume (across the API
    worker processes too, when there are several: :mod:`.locks`)."""
    return locks.lock("minicinder-volume-%s" % volume_id)


class VolumeManager:
    """Creates, deletes, exports and connects volumes through a driver.

    :param database: a :class:`minicinder.db.session.Database`.
    :param driver: a :class:`minicinder.volume.driver.VolumeDriver`.
    :param executor: runs asynchronous jobs (default: a thread pool).
    """

    def __init__(self, database, driver, host, executor=None,
                 workers=4):
        self.database = database
        self.driver = driver
        self.host = host
        self.workers = workers
        self._own_executor = executor is None
        self.executor = executor or self._new_executor()
        # The Nova adapter (``compute.nova.API``), told of extends of
        # attached volumes; set by the service (None: nobody to tell).
        self.compute = None
        self.extender = extend.VolumeExtender(self)

    def _new_executor(self):
        return concurrent.futures.ThreadPoolExecutor(
            max_workers=self.workers, thread_name_prefix="volume-manager")

    def after_fork(self):
        """In a forked API worker: a job pool of its own (the parent's
        pool object would think it has threads the fork did not copy)."""
        if self._own_executor:
            self.executor = self._new_executor()

    # --- life cycle ---

    def init_host(self):
        """Recover after a restart: rebuild exports, settle stuck jobs.

        The database is the source of truth. A volume still ``creating``
        was interrupted (its half-made device is removed and it goes to
        ``error``); a ``deleting`` one is deleted again; every volume with
        an export gets its target, CHAP account and ACL (the initiators of
        its connected attachments) rebuilt, because tgt keeps its targets
        only in memory.
        """
        for ref, status, initiators in self._volumes_and_initiators():
            if status == states.CREATING:
                LOG.warning("Volume %s was being created when the service "
                            "stopped; marking it error", ref.id)
                self._safe(self.driver.delete_volume, ref)
                self.transition(ref.id, "create_failed")
            elif status == states.DELETING:
                self.executor.submit(self.delete_volume, ref.id)
            elif status == states.EXTENDING:
                LOG.warning("Volume %s was being extended when the service "
                            "stopped; marking it error_extending", ref.id)
                self.transition(ref.id, "extend_failed")
            elif ref.provider_location:
                try:
                    self._ensure_export(ref, initiators)
                    LOG.info("Rebuilt export of volume %s for [%s]",
                             ref.id, ", ".join(initiators))
                except exception.VolumeBackendError:
                    LOG.exception("Could not rebuild export of volume %s",
                                  ref.id)

    # --- export watch (tgtd restarts) ---

    def start_export_check(self, interval, stop_event):
        """Run :meth:`check_exports` every ``interval`` seconds until
        ``stop_event`` is set (0 disables it).

        tgtd keeps targets, LUNs, CHAP accounts and ACLs in memory only;
        after a tgtd restart every guest's next reconnect would fail until
        someone rebuilt them, so they are rebuilt here within one interval.
        """
        if not interval:
            return None

        def _loop():
            while not stop_event.wait(interval):
                try:
                    self.check_exports()
                except exception.VolumeBackendError as exc:
                    # tgtd down (mid-restart): try again next interval.
                    LOG.warning("Export check failed: %s",
                                exc.format_message())
                except Exception:
                    LOG.exception("Export check failed")

        thread = threading.Thread(target=_loop, daemon=True,
                                  name="export-check")
        thread.start()
        return thread

    def check_exports(self):
        """Rebuild every export the backend lost (one ``tgtadm show``).

        The comparison runs on a snapshot; each repair re-reads its volume
        under the volume's lock, so an attach or detach racing with the
        check is neither undone nor duplicated.

        :returns: ids of the volumes whose export was rebuilt.
        """
        expected = [(ref, initiators) for ref, status, initiators in
                    self._volumes_and_initiators()
                    if ref.provider_location and status not in
                    _BUSY_DEVICE]
        if not expected:
            return []
        rebuilt = []
        for ref in self.driver.missing_exports(expected):
            with volume_lock(ref.id):
                current = self._volume_and_initiators(ref.id)
                if current is None:
                    continue
                ref, status, initiators = current
                if not ref.provider_location or status in _BUSY_DEVICE:
                    continue
                try:
                    self._ensure_export(ref, initiators)
                except exception.VolumeBackendError:
                    LOG.exception("Could not rebuild export of volume %s",
                                  ref.id)
                    continue
            LOG.warning("Export of volume %s was missing from the target "
                        "daemon; rebuilt it for [%s]", ref.id,
                        ", ".join(initiators))
            rebuilt.append(ref.id)
        return rebuilt

    def stop(self):
        self.executor.shutdown(wait=True)

    # --- asynchronous jobs ---

    def create_volume_async(self, volume_id, image=None, source_volid=None):
        return self.executor.submit(self.create_volume, volume_id, image,
                                    source_volid)

    def delete_volume_async(self, volume_id):
        return self.executor.submit(self.delete_volume, volume_id)

    def create_volume(self, volume_id, image=None, source_volid=None):
        """creating -> available (with ``image``'s data or a copy of
        volume ``source_volid`` in it), or error with the reason logged."""
        ref = self.ref(volume_id)
        try:
            if source_volid is not None:
                update = self._clone(ref, source_volid)
            else:
                update = self.driver.create_volume(ref) or {}
            if image is not None:
                self.driver.copy_image_to_volume(ref, image)
        except Exception as exc:
            LOG.error("Volume %s could not be created: %s", volume_id, exc)
            self._safe(self.driver.delete_volume, ref)
            self.transition(volume_id, "create_failed")
            return
        update["launched_at"] = ms_db.utcnow()
        if not self.transition(volume_id, "create_done", update):
            LOG.error("Volume %s left 'creating' during create; removing "
                      "its device", volume_id)
            self._safe(self.driver.delete_volume, ref)
        else:
            LOG.info("Volume %s created (%s GiB)", volume_id, ref.size)

    def _clone(self, ref, source_volid):
        """The copy of ``source_volid`` under its lock (a delete of the
        source waits for it), if the source is still available or in-use."""
        with volume_lock(source_volid):
            source = self.database.read_rows(
                volume_reads.volume_state, ms_context.get_admin_context(),
                source_volid)
            if source.status not in states.CLONEABLE:
                raise exception.InvalidVolume(reason="its source is %s"
                                              % source.status)
            return self.driver.create_cloned_volume(
                ref, self.ref(source_volid)) or {}

    def delete_volume(self, volume_id):
        """deleting -> deleted (wiped first), or error_deleting."""
        with volume_lock(volume_id):
            ref = self.ref(volume_id)
            try:
                self.driver.delete_volume(ref)
            except Exception as exc:
                LOG.error("Volume %s could not be deleted: %s",
                          volume_id, exc)
                self.transition(volume_id, "delete_failed")
                return
            with self.database.write() as session:
                db.volume_soft_delete(session, volume_id)
        locks.remove("minicinder-volume-%s" % volume_id)
        LOG.info("Volume %s deleted", volume_id)

    # --- connections (synchronous, called under volume_lock) ---

    def connect(self, volume_id, connector, ref=None):
        """Export the volume if needed and admit the connector's initiator.

        The export (target, LUN, CHAP account) is made on the first
        connection and kept; later connections only add the initiator to
        its ACL. Its CHAP credentials are persisted before any initiator
        is admitted, so a crash never leaves an export whose password only
        tgt knows.

        :param ref: the volume's :class:`VolumeRef`, if the caller read
            it under the volume's lock (saves reading it again).
        :returns: the driver's connection_info.
        :raises InvalidConnector, VolumeBackendError:
        """
        volume_driver.require_initiator(connector)
        if ref is None:
            ref = self.ref(volume_id)
        if ref.provider_location:
            try:
                return self.driver.initialize_connection(ref, connector)
            except exception.VolumeBackendError:
                # tgtd lost the target (restarted under us): rebuild it.
                LOG.warning("Export of volume %s is gone; re-creating it",
                            volume_id)
        created = not ref.provider_location
        export = self.driver.create_export(ref)
        try:
            with self.database.write() as session:
                db.volume_update(session, volume_id, export)
            # What was just written, under the lock: no need to read it.
            ref = dataclasses.replace(ref, **{
                key: value for key, value in export.items()
                if key in ("provider_auth", "provider_location")})
            return self.driver.initialize_connection(ref, connector)
        except Exception:
            if created:
                self._safe(self.driver.remove_export, ref)
                with self.database.write() as session:
                    db.volume_update(session, volume_id,
                                     {"provider_location": None})
            raise

    def disconnect(self, volume_id, connector, leaving_attachment=None):
        """Revoke ``connector``'s initiator unless another attachment of the
        volume still uses it.

        The target itself stays (with an empty ACL nobody can log in, and
        CHAP still guards it) until the volume is deleted: re-creating it
        on every attach cost five tgtadm calls per handshake.

        :param leaving_attachment: id of the attachment going away (it is
            not counted as a remaining user).
        """
        ref, attachments = self.database.read_rows(
            self._ref_and_connectors, volume_id)
        remaining = [db.load_json(a.connector) for a in attachments
                     if a.id != leaving_attachment]
        initiators = {c.get("initiator") for c in remaining if c}
        initiator = (connector or {}).get("initiator")
        if initiator and initiator not in initiators:
            self.driver.terminate_connection(ref, connector)

    # --- helpers ---

    def _ensure_export(self, ref, initiators):
        """Rebuild ``ref``'s export and record where it now lives (tgtd
        may give a re-created target another tid)."""
        update = self.driver.ensure_export(ref, initiators)
        if update:
            with self.database.write() as session:
                db.volume_update(session, ref.id, update)

    @staticmethod
    def _initiators(volume):
        """Initiators the export must admit: those of the connected
        attachments (legacy os-initialize_connection ones are not
        recorded; see README, "Legacy ACLs after a restart").

        A recorded name that is not a well-formed iSCSI name (stored
        before the API checked connectors) is never bound again.
        """
        found = set()
        for attachment in volume.volume_attachment:
            initiator = (db.load_json(attachment.connector) or {}).get(
                "initiator")
            if initiator and not iscsi_names.is_valid(initiator):
                LOG.error("Attachment %s of volume %s records the initiator "
                          "%r, which is not an iSCSI name; not admitting it",
                          attachment.id, volume.id, initiator)
            elif initiator:
                found.add(initiator)
        return sorted(found)

    def _volumes_and_initiators(self):
        """``(VolumeRef, status, initiators)`` of this host's volumes."""
        with self.database.read() as session:
            return [(volume_driver.VolumeRef.from_model(volume),
                     volume.status, self._initiators(volume))
                    for volume in db.volumes_for_host(session, self.host)]

    def _volume_and_initiators(self, volume_id):
        with self.database.read() as session:
            volume = session.get(models.Volume, volume_id)
            if volume is None or volume.deleted:
                return None
            return (volume_driver.VolumeRef.from_model(volume),
                    volume.status, self._initiators(volume))

    def ref(self, volume_id):
        """The volume's :class:`VolumeRef`: its four columns, one Core
        select (loading the ``Volume`` model cost five statements)."""
        return self.database.read_rows(self._read_ref, volume_id)

    @staticmethod
    def _read_ref(conn, volume_id):
        return volume_driver.VolumeRef.from_model(
            volume_reads.volume_ref(conn, volume_id))

    @classmethod
    def _ref_and_connectors(cls, conn, volume_id):
        return (cls._read_ref(conn, volume_id),
                attachment_reads.attachment_connectors(conn, volume_id))

    def transition(self, volume_id, action, values=None):
        """Move the volume along ``states``' ``action``; False when its
        status no longer allows it."""
        with self.database.write() as session:
            volume = session.get(models.Volume, volume_id)
            return db.volume_transition(session, volume, action, values)

    @staticmethod
    def _safe(fn, *args):
        """Run an undo step; log instead of masking the original error."""
        try:
            fn(*args)
        except Exception:
            LOG.exception("Cleanup step %s failed", fn.__name__)
