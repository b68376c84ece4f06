"""Server external events on the compute host (nova's
``ComputeManager.external_instance_event``), which the manager hands
to :class:`ExternalEvents`.

The only event served is ``volume-extended`` (compute 2.51): Cinder grew
an attached volume, and the host makes the guest see it, as nova's
``extend_volume``: the BDM must exist and be connected, its
``volume_size`` takes the size Cinder now shows, and the virt driver
resizes the disk in the running guest. The work is recorded as the
event ``compute_extend_volume`` on the request's ``extend_volume``
action (miniapi records it), with the fault when it fails; a cast has no
caller to answer, so the failure ends there (logged), and the volume
stays grown in Cinder, as upstream.
"""

import json

from oslo_log import log as logging

from minicompute import exception
from minicompute import utils
from minicompute.db import api as db_api

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3


class ExternalEvents:
    """Serves server external events on compute host ``host`` with its
    virt ``driver``, its Cinder client ``volume_api``, and
    ``load_instance`` (the manager's: an instance dict from its uuid)."""

    def __init__(self, host, driver, volume_api, load_instance):
        self.host = host
        self.driver = driver
        self.volume_api = volume_api
        self.load_instance = load_instance

    def handle(self, ctxt, instances, events):
        """Handle ``events`` (dicts with ``name``, ``server_uuid``,
        ``tag``, ``status``) for ``instances``; errors are logged."""
        for event in events:
            if event.get("name") != "volume-extended":
                LOG.debug("Ignoring event %s for %s", event.get("name"),
                          event.get("server_uuid"))
                continue
            try:
                instance = self.load_instance(
                    ctxt, {"uuid": event["server_uuid"]})
            except exception.InstanceNotFound:
                LOG.warning("volume-extended for instance %s, which is "
                            "gone", event["server_uuid"])
                continue
            try:
                self.extend_volume(ctxt, instance, event["tag"])
            except Exception as exc:
                LOG.warning("Extend volume failed, volume_id=%s, instance "
                            "%s, reason: %s", event["tag"],
                            instance["uuid"], exc)

    def extend_volume(self, ctxt, instance, volume_id):
        """Resize ``volume_id``'s disk in ``instance`` to Cinder's size.

        :raises VolumeNotFound: Cinder no longer has the volume.
        :raises NotImplementedError: the virt driver cannot.
        :raises InternalError: libvirt/QEMU refused the resize.
        """
        with utils.EventReporter(ctxt, "compute_extend_volume", self.host,
                                 instance["uuid"],
                                 subject="volume %s" % volume_id), \
                utils.volume_lock(instance["uuid"], volume_id):
            try:
                bdm = db_api.bdm_get_by_volume_and_instance(
                    ctxt, volume_id, instance["uuid"])
            except exception.NotFound:
                LOG.warning("Extend volume failed, volume %s is not "
                            "attached to instance %s", volume_id,
                            instance["uuid"])
                return
            if not bdm.connection_info:
                LOG.warning("Extend volume failed, attached volume %s has "
                            "no connection_info", volume_id)
                return
            size = self.volume_api.get(ctxt, volume_id)["size"]
            db_api.bdm_update(ctxt, bdm.id, {"volume_size": size},
                              reload=False)
            LOG.info("Cinder extended volume %s to %s GiB; resizing it in "
                     "instance %s", volume_id, size, instance["uuid"])
            self.driver.extend_volume(ctxt, json.loads(bdm.connection_info),
                                      instance, size * GiB,
                                      bdm.device_name)
