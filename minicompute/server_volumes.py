"""The volumes a server is built with and deleted with (boot from volume).

At build (nova's ``_prep_block_device``), for each volume BDM the API
wrote, root first::

    image/blank source: create the volume (Cinder), wait until available
                        ([compute] block_device_allocate_retries / _interval),
                        attachment_create (no connector)
    every volume:       attachment_update with this host's connector,
                        connection_info saved on the BDM
                        (``DriverVolumeBlockDevice.update_for_spawn``)
    -> driver.spawn connects each one and defines the guest with them
       (the root at vda) -> attachment_complete each (in-use)

A build that fails is rolled back by :meth:`ServerVolumes.roll_back`
after the driver destroyed the guest (which disconnects the volumes):
every attachment deleted (the user's volume is ``available`` again), the
volumes this host created deleted, the BDM rows destroyed.

At delete, the volumes the guest cannot let go of while it runs (its
root) are disconnected by the driver's destroy and released here
(:meth:`ServerVolumes.release`); the manager hot-unplugs the others
first, as a user detach would.
"""

import json
import time

from oslo_log import log as logging

from minicompute import exception
from minicompute import task_states
from minicompute.db import api as db_api
from minicompute.virt import block_device

LOG = logging.getLogger(__name__)

#: Statuses of a volume Cinder is still making (nova's wait goes on).
_IN_PROGRESS = ("creating", "downloading")

#: Mappings whose volume the compute host creates (and deletes when the
#: build that made it fails).
CREATED_HERE = ("image", "blank")


def volume_rows(ctxt, instance_uuid):
    """The server's volume BDMs, its root (boot index 0) first."""
    rows = [b for b in db_api.bdm_get_all_by_instance(ctxt, instance_uuid)
            if b.destination_type == "volume"]
    return sorted(rows, key=lambda b: (b.boot_index != 0, b.id))


def block_device_info(rows):
    """What the driver's ``spawn`` and ``destroy`` take: for each wired
    row, its connection_info and where it goes in the guest."""
    return [{"connection_info": json.loads(b.connection_info),
             "mount_device": b.device_name, "disk_bus": b.disk_bus,
             "device_type": b.device_type, "volume_id": b.volume_id}
            for b in rows if b.connection_info]


class ServerVolumes:
    """Prepare, complete, roll back and release a server's volumes.

    :param sleep: how to wait between two looks at a new volume (tests
        pass a no-op).
    """

    def __init__(self, conf, driver, volume_api, sleep=time.sleep):
        self.conf = conf
        self.driver = driver
        self.volume_api = volume_api
        self._sleep = sleep

    # -- build -

    def prepare(self, ctxt, instance):
        """Create, wait for and update every volume of the new server.

        :returns: the ``block_device_info`` for ``driver.spawn`` ([] for
            a server without volumes).
        :raises VolumeNotCreated: a new volume did not become available.
        :raises InvalidInput: Cinder refused a create or an update.
        """
        rows = volume_rows(ctxt, instance["uuid"])
        if not rows:
            return []
        db_api.instance_update(ctxt.elevated(), instance["uuid"], {
            "task_state": task_states.BLOCK_DEVICE_MAPPING})
        for row in rows:
            persist = self._persist(ctxt, row.id)
            if not row.volume_id:
                self._create_volume(ctxt, instance, row, persist)
                row = db_api.bdm_get(ctxt, row.id)
            driver_bdm = block_device.DriverVolumeBlockDevice(row, persist)
            driver_bdm.update_for_spawn(ctxt, instance, self.volume_api,
                                        self.driver)
        db_api.instance_update(ctxt.elevated(), instance["uuid"], {
            "task_state": task_states.SPAWNING})
        return block_device_info(volume_rows(ctxt, instance["uuid"]))

    def _persist(self, ctxt, bdm_id):
        return lambda values: db_api.bdm_update(ctxt, bdm_id, values,
                                                reload=False)

    def _create_volume(self, ctxt, instance, row, persist):
        """The volume of an image or blank mapping, made, waited for and
        reserved for the server; its id and attachment saved at once, so
        a failure after still finds them to undo."""
        blank = row.source_type == "blank"
        volume = self.volume_api.create(
            ctxt, row.volume_size,
            name="%s-blank-vol" % instance["uuid"] if blank else "",
            description="", volume_type=row.volume_type,
            image_id=None if blank else row.image_id)
        persist({"volume_id": volume["id"]})
        LOG.info("Created volume %s (%s, %s GiB) for instance %s",
                 volume["id"], row.source_type, row.volume_size,
                 instance["uuid"])
        self.wait_for_volume(ctxt, volume["id"])
        attachment = self.volume_api.attachment_create(
            ctxt, volume["id"], instance["uuid"])
        persist({"attachment_id": attachment["id"]})

    def wait_for_volume(self, ctxt, volume_id):
        """Until the new volume is available (nova's
        ``_await_block_device_map_created``).

        :raises VolumeNotCreated: it went to another status (``error``)
            or was still being made after the last attempt.
        """
        compute = self.conf.compute
        attempts = compute.block_device_allocate_retries + 1
        interval = compute.block_device_allocate_retries_interval
        started = time.monotonic()
        status = None
        for attempt in range(1, attempts + 1):
            status = self.volume_api.get(ctxt, volume_id)["status"]
            if status == "available":
                return
            if status not in _IN_PROGRESS:
                break
            if attempt < attempts:
                self._sleep(interval)
        raise exception.VolumeNotCreated(
            volume_id=volume_id,
            seconds=int(time.monotonic() - started),
            attempts=attempt, volume_status=status)

    def complete(self, ctxt, instance):
        """attachment_complete for each volume of the running guest."""
        for row in volume_rows(ctxt, instance["uuid"]):
            if row.attachment_id:
                self.volume_api.attachment_complete(ctxt, row.attachment_id)

    def roll_back(self, ctxt, instance):
        """Undo a failed build's volumes (the guest is destroyed): each
        attachment deleted, each volume created here deleted, each BDM
        row destroyed. Errors are logged: the build's error wins."""
        for row in volume_rows(ctxt, instance["uuid"]):
            self.delete_attachment(ctxt, row.attachment_id)
            if row.volume_id and row.source_type in CREATED_HERE:
                self.delete_volume(ctxt, row.volume_id,
                                   "its server's build failed")
            db_api.bdm_destroy(ctxt, row.id)

    # -- delete -

    def release(self, ctxt, rows):
        """After ``driver.destroy`` disconnected them: delete each row's
        attachment and destroy the row."""
        for row in rows:
            self.delete_attachment(ctxt, row.attachment_id)
            db_api.bdm_destroy(ctxt, row.id)

    def delete_attachment(self, ctxt, attachment_id):
        if not attachment_id:
            return
        try:
            self.volume_api.attachment_delete(ctxt, attachment_id)
        except exception.VolumeAttachmentNotFound:
            pass
        except Exception:
            LOG.exception("Could not delete attachment %s", attachment_id)

    def delete_volume(self, ctxt, volume_id, why="delete_on_termination"):
        try:
            self.volume_api.delete(ctxt, volume_id)
            LOG.info("Deleted volume %s (%s)", volume_id, why)
        except Exception:
            LOG.exception("Could not delete volume %s", volume_id)
