"""The API phase of the server lifecycle: create, delete, stop, start,
reboot, and the console log.

The API picks the compute node (``scheduler.select_destination``:
nova's scheduler at mini scale, honouring a requested or forced host),
writes the instance, records the action and casts to the host; the
compute manager moves the instance on (BUILD -> ACTIVE or ERROR with a
fault, powering-off -> SHUTOFF...). Task states are set with a
compare-and-swap on ``task_state IS NULL`` so two concurrent operations on
one server cannot both start: the loser gets 409.
"""

import json
import logging
import re
import secrets
import uuid as uuidlib

from oslo_utils import excutils

from miniapi.compute import block_devices
from miniapi.compute import checks
from miniapi.compute import scheduler
from miniapi.compute import server_metadata
from minicompute import exception
from minicompute import instance_actions
from minicompute import power_state
from minicompute import task_states
from minicompute import vm_states
from minicompute.db import api as db_api
from minicompute.db import flavors as flavors_db
from ministack import db
from ministack import exception as ms_exception

LOG = logging.getLogger(__name__)

DEFAULT_AZ = "nova"


def sanitize_hostname(name):
    """nova's sanitize_hostname: a DNS label derived from the name."""
    hostname = re.sub(r"[ _.]", "-", name.lower())
    hostname = re.sub(r"[^\w.-]+", "", hostname, flags=re.ASCII)
    hostname = hostname.strip(".-")[:63].rstrip("-")
    return hostname or "server"


def flavor_primitive(flavor, extra_specs=None):
    """What the instance remembers of its flavor (``instances.flavor``)."""
    return {"id": flavor.id, "flavorid": flavor.flavorid,
            "name": flavor.name, "memory_mb": flavor.memory_mb,
            "vcpus": flavor.vcpus, "root_gb": flavor.root_gb or 0,
            "ephemeral_gb": flavor.ephemeral_gb or 0,
            "swap": flavor.swap or 0, "extra_specs": dict(extra_specs or {})}


class ServerOperations:
    """Server lifecycle; mixed into :class:`miniapi.compute.api.API`."""

    # -- create ----------------------------------------------------------

    def create(self, ctxt, name, flavor_ref, image_ref=None,
               description=None, hostname=None, availability_zone=None,
               admin_pass=None, forced_host=None, forced_node=None,
               requested_host=None, requested_node=None,
               scheduler_hints=None, block_device_mappings=(),
               multiattach_ok=True, metadata=None, access_ip_v4=None,
               access_ip_v6=None):
        """Write the instance, record ``create`` and cast the build.

        With no compute node to go to (none up and enabled, or none on
        the requested or forced host/node) the instance is still
        created, in ERROR with a "No valid host" fault, as nova's
        scheduler failure does. The caller has checked who may ask for
        a host (policy).

        :param availability_zone: the zone part of the request's zone
            (``scheduler.parse_availability_zone``); only ``nova``, the
            one zone, unless a host is forced (nova does not check the
            zone then).
        :param scheduler_hints: the request's ``os:scheduler_hints``
            (``same_host``, ``different_host``: see
            ``scheduler.select_destination``).
        :param block_device_mappings: the request's mappings, checked by
            ``block_devices.parse``; the volumes the user brought are
            reserved before the build is cast, and released again if
            anything after fails.
        :param multiattach_ok: the microversion allows multiattach
            volumes (2.60).
        :param metadata: the server's user metadata (quota checked by
            the caller), kept with the instance.
        :param access_ip_v4: ``accessIPv4`` (format checked), kept.
        :param access_ip_v6: ``accessIPv6`` (format checked), kept.
        :returns: (instance row, admin password).
        :raises Invalid: unknown flavor or image, unusable zone, unknown
            requested host or node, a server group hint, a bad mapping, a
            volume that is not bootable, not found or in use (400).
        """
        mappings = list(block_device_mappings or ())
        try:
            flavor = db_api.flavor_get(ctxt, flavor_ref)
        except exception.FlavorNotFound as exc:
            raise ms_exception.Invalid(message=exc.format_message()) \
                from exc
        image = self.boot_image(ctxt, image_ref, mappings)
        if availability_zone and availability_zone != DEFAULT_AZ and \
                forced_host is None:
            raise ms_exception.Invalid(
                message="The requested availability zone is not available")
        if requested_host or requested_node:
            try:
                scheduler.validate_host_or_node(ctxt, requested_host,
                                                requested_node)
            except exception.ComputeHostNotFound as exc:
                raise ms_exception.Invalid(message=exc.format_message()) \
                    from exc
        scheduler.check_group_hint(scheduler_hints)
        node = scheduler.select_destination(
            ctxt, self.down_time, host=forced_host or requested_host,
            node=forced_node or requested_node, hints=scheduler_hints,
            forced=bool(forced_host or forced_node))
        host = node.host if node is not None else None
        flavor_dict = flavor_primitive(
            flavor, flavors_db.extra_specs_get(ctxt, flavor))
        values = {
            "display_name": name,
            "display_description": description,
            "hostname": hostname or sanitize_hostname(name),
            "uuid": str(uuidlib.uuid4()),
            "image_ref": "" if block_devices.is_volume_backed(mappings)
            else image["id"],
            "flavor": json.dumps(flavor_dict),
            "instance_type_id": flavor.id,
            "memory_mb": flavor.memory_mb,
            "vcpus": flavor.vcpus,
            "root_gb": flavor.root_gb or 0,
            "ephemeral_gb": flavor.ephemeral_gb or 0,
            "vm_state": vm_states.BUILDING,
            "task_state": task_states.SCHEDULING,
            "power_state": power_state.NOSTATE,
            "host": host,
            "node": node.hypervisor_hostname if node is not None else None,
            "availability_zone": DEFAULT_AZ,
            "root_device_name": "/dev/vda",
            "locked": False,
            "progress": 0,
            "config_drive": "",
            "access_ip_v4": server_metadata.access_ip(access_ip_v4),
            "access_ip_v6": server_metadata.access_ip(access_ip_v6),
        }
        if host is None:
            values.update(vm_state=vm_states.ERROR, task_state=None,
                          fault=json.dumps(_fault(
                              500, "No valid host was found. There are "
                                   "not enough hosts available.")))
        self.check_mapped_volumes(ctxt, mappings, multiattach_ok)
        self.reserve_mapped_volumes(ctxt, mappings, values["uuid"])
        try:
            instance = db_api.instance_create(ctxt, values)
            if metadata:
                db_api.instance_metadata_update(ctxt, instance.uuid,
                                                metadata)
            self.write_bdms(ctxt, instance.uuid, mappings)
            db_api.action_start(ctxt, instance.uuid, instance_actions.CREATE)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._undo_create(ctxt, values["uuid"], mappings)
        admin_pass = admin_pass or secrets.token_urlsafe(9)
        if host is None:
            LOG.warning("No valid host for server %s (host %s, node %s, "
                        "hints %s asked for)", instance.uuid,
                        forced_host or requested_host,
                        forced_node or requested_node,
                        {k: v for k, v in (scheduler_hints or {}).items()
                         if k in ("same_host", "different_host")})
            return instance, admin_pass
        try:
            self.compute_rpcapi.build_and_run_instance(
                ctxt, db_api.to_dict(instance), image=image,
                flavor=flavor_dict)
        except Exception as exc:
            with excutils.save_and_reraise_exception():
                self.release_mapped_volumes(ctxt, mappings)
                self.destroy_bdms(ctxt, instance.uuid)
                db_api.instance_update(ctxt, instance.uuid, {
                    "vm_state": vm_states.ERROR, "task_state": None,
                    "fault": json.dumps(_fault(500, str(exc)))})
        return instance, admin_pass

    def _undo_create(self, ctxt, instance_uuid, mappings):
        """Nothing of a create that failed before its cast survives: the
        reservations, the BDM rows and the instance row go."""
        self.release_mapped_volumes(ctxt, mappings)
        try:
            self.destroy_bdms(ctxt, instance_uuid)
            db_api.instance_destroy(ctxt, instance_uuid)
        except exception.InstanceNotFound:
            pass
        except Exception:
            LOG.exception("Could not remove server %s while undoing its "
                          "create", instance_uuid)

    # -- delete ----------------------------------------------------------

    def delete(self, ctxt, instance):
        """Delete the server: cast terminate, or delete locally.

        A server without a host, or whose host is down, is deleted here
        (nova's local delete): its attachments are released in Cinder and
        delete_on_termination volumes deleted, so no volume stays held by
        a server that no longer exists.
        """
        if instance.task_state == task_states.DELETING:
            return  # already on its way; DELETE is idempotent
        checks.check_instance_state(instance, "delete",
                                    vm_state=vm_states.ALLOW_DELETE,
                                    task_state=None)
        db_api.action_start(ctxt, instance.uuid, instance_actions.DELETE)
        self.confirm_on_delete(ctxt, instance)
        status = checks.host_status(ctxt, instance.host, self.down_time)
        if status not in ("UP", "MAINTENANCE"):
            self._local_delete(ctxt, instance)
            return
        instance = db_api.instance_update(
            ctxt, instance.uuid, {"task_state": task_states.DELETING})
        try:
            self.compute_rpcapi.terminate_instance(
                ctxt, db_api.to_dict(instance))
        except Exception:
            with excutils.save_and_reraise_exception():
                db_api.instance_update(ctxt, instance.uuid,
                                       {"task_state": None})

    def _local_delete(self, ctxt, instance):
        LOG.info("Deleting instance %s locally (host %s not up)",
                 instance.uuid, instance.host)
        for bdm in db_api.bdm_get_all_by_instance(ctxt, instance.uuid):
            if bdm.volume_id and bdm.destination_type == "volume":
                self._release_volume(ctxt, instance, bdm)
            db_api.bdm_destroy(ctxt, bdm.id)
        db_api.instance_update(ctxt, instance.uuid, {
            "vm_state": vm_states.DELETED, "task_state": None,
            "terminated_at": db.utcnow()})
        db_api.instance_destroy(ctxt, instance.uuid)

    def _release_volume(self, ctxt, instance, bdm):
        """Free a volume of a locally deleted server in Cinder."""
        try:
            if bdm.attachment_id:
                self.volume_api.attachment_delete(ctxt, bdm.attachment_id)
            else:
                self.volume_api.detach(ctxt, bdm.volume_id,
                                       instance_uuid=instance.uuid)
        except exception.VolumeAttachmentNotFound:
            pass
        except ms_exception.MinistackException as exc:
            LOG.warning("Could not release volume %s of deleted instance "
                        "%s: %s", bdm.volume_id, instance.uuid,
                        exc.format_message())
            return
        self._delete_on_termination(ctxt, bdm)

    def _delete_on_termination(self, ctxt, bdm):
        """Delete the released volume of ``bdm`` if it was made to go with
        its server; a volume Cinder will not delete is logged and kept."""
        if not bdm.delete_on_termination:
            return
        try:
            self.volume_api.delete(ctxt, bdm.volume_id)
        except ms_exception.MinistackException as exc:
            LOG.warning("Could not delete volume %s "
                        "(delete_on_termination): %s", bdm.volume_id,
                        exc.format_message())

    # -- power -----------------------------------------------------------

    def stop(self, ctxt, instance):
        """os-stop: powering-off, then the host powers it off."""
        task_state, allowed, _final = task_states.TRANSITIONS["stop"]
        self._begin(ctxt, instance, "stop", instance_actions.STOP,
                    task_state, allowed, [None],
                    self.compute_rpcapi.stop_instance)

    def start(self, ctxt, instance):
        """os-start: powering-on, then the host powers it on."""
        task_state, allowed, _final = task_states.TRANSITIONS["start"]
        self._begin(ctxt, instance, "start", instance_actions.START,
                    task_state, allowed, [None],
                    self.compute_rpcapi.start_instance)

    def reboot(self, ctxt, instance, reboot_type):
        """reboot: SOFT needs an ACTIVE server with nothing in flight;
        HARD also starts a SHUTOFF, PAUSED, SUSPENDED or ERROR one and may
        interrupt a SOFT reboot (nova's ``API.reboot`` checks)."""
        hard = reboot_type == "HARD"
        if hard:
            task_state, allowed = (task_states.REBOOTING_HARD,
                                   vm_states.ALLOW_HARD_REBOOT)
            task_allowed = [None, task_states.REBOOTING]
        else:
            task_state, allowed = (task_states.REBOOTING,
                                   vm_states.ALLOW_SOFT_REBOOT)
            task_allowed = [None]

        def cast(ctxt, instance):
            self.compute_rpcapi.reboot_instance(ctxt, instance,
                                                reboot_type)
        self._begin(ctxt, instance, "reboot", instance_actions.REBOOT,
                    task_state, allowed, task_allowed, cast)

    def _begin(self, ctxt, instance, operation, action, task_state,
               allowed, task_allowed, cast):
        """Check, set the task state (compare-and-swap), record the
        action and cast; the task state is undone if the cast fails."""
        checks.check_instance_state(instance, operation, vm_state=allowed,
                                    task_state=task_allowed)
        checks.check_host_up(ctxt, instance, self.down_time)
        try:
            instance = db_api.instance_update(
                ctxt, instance.uuid, {"task_state": task_state},
                expected_task_state=task_allowed, expected_vm_state=allowed)
        except (exception.UnexpectedTaskStateError,
                exception.UnexpectedVMStateError):
            current = db_api.instance_get(ctxt, instance.uuid)
            checks.check_instance_state(current, operation,
                                        vm_state=allowed,
                                        task_state=task_allowed)
            raise
        try:
            db_api.action_start(ctxt, instance.uuid, action)
            cast(ctxt, db_api.to_dict(instance))
        except Exception:
            with excutils.save_and_reraise_exception():
                db_api.instance_update(ctxt, instance.uuid,
                                       {"task_state": None},
                                       expected_task_state=[task_state])

    def get_console_output(self, ctxt, instance, tail_length=None):
        """The guest's console log from its host (an RPC call).

        :raises InstanceInvalidState: never scheduled to a host (409).
        :raises ComputeServiceUnavailable: its host is down (409).
        :raises ConsoleNotAvailable: the guest logs no console (404).
        """
        if not instance.host:
            raise exception.InstanceInvalidState(
                attr="host", instance_uuid=instance.uuid, state=None,
                method="get_console_output")
        checks.check_host_up(ctxt, instance, self.down_time)
        return self.compute_rpcapi.get_console_output(
            ctxt, db_api.to_dict(instance), tail_length=tail_length)

    # -- update ----------------------------------------------------------

    def update(self, ctxt, instance, name=None, description=None,
               set_description=False, access_ips=None):
        """PUT /servers/{id}: rename, re-describe, set the access IPs
        (``access_ips``: the columns of
        ``server_metadata.access_ip_values``)."""
        values = dict(access_ips or {})
        if name is not None:
            values["display_name"] = name
        if set_description:
            values["display_description"] = description
        if not values:
            return instance
        return db_api.instance_update(ctxt, instance.uuid, values)


def _fault(code, message):
    return {"code": code, "message": message,
            "created": db.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")}
