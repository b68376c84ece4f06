"""The LVM + tgt driver: one logical volume and one iSCSI target per volume.

Storage comes from :class:`minicinder.volume.drivers.lvm.LVM` (logical volume
``volume-<id>`` in ``[DEFAULT] volume_group``, reached through
``/dev/<vg>/<lv>`` or, without device-mapper, a loop device over its
extents) and the export from :class:`minicinder.volume.targets.tgt.TgtAdm`
(target ``<target_prefix>volume-<id>``, LUN 1, CHAP account per volume,
ACL by initiator name). Each volume's device is remembered
(:mod:`~minicinder.volume.drivers.lvm_devices`), its growth is
:mod:`~minicinder.volume.drivers.lvm_grow`'s. This module is the
boundary where command failures become
:class:`minicinder.exception.VolumeBackendError`.
"""

import functools
import logging

from minicinder import exception
from minicinder.volume import driver
from minicinder.volume import locks
from minicinder.volume.drivers import lvm
from minicinder.volume.drivers import lvm_devices
from minicinder.volume.drivers import lvm_grow
from minicinder.volume.targets import tgt
from minicinder.volume.targets import tgtd_socket
from ministack import exception as ms_exception
from ministack import executor

LOG = logging.getLogger(__name__)

REQUIRED_TOOLS = ("lvcreate", "lvremove", "lvs", "vgs", "pvs", "losetup",
                  "tgtadm", "blkdiscard", "dd")

# tgt target ids are allocated by "highest + 1", so target changes are
# serialised (across minicinder's API worker processes too: .locks); a
# clash with another program creating targets is retried.
_TARGET_LOCK = "minicinder-tgt-targets"
_TARGET_RETRIES = 3


def translate_errors(fn):
    """Command and LVM failures leave the driver as VolumeBackendError."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ms_exception.ProcessExecutionError, lvm.VolumeNotFound,
                lvm.NotContiguous, tgt.UnexpectedOutput,
                tgt.TgtdError, OSError) as exc:
            reason = exc.format_message() if hasattr(
                exc, "format_message") else str(exc)
            raise exception.VolumeBackendError(
                reason="%s: %s" % (fn.__name__, reason))
    return wrapper


class LVMTgtDriver(driver.VolumeDriver):
    """Thick LVM volumes exported by tgt with CHAP and initiator ACLs."""

    def __init__(self, conf, execute=executor.execute,
                 new_account=tgtd_socket.new_account,
                 tgtadm=tgtd_socket.execute, vg=None):
        """:param execute: runs the LVM and other commands.
        :param tgtadm: runs ``tgtadm`` argvs: by default their requests
            go to tgtd's socket, no process.
        :param vg: the LVM adapter (tests); by default ``[DEFAULT]
            volume_group``'s over ``execute``.
        """
        self.conf = conf
        self._execute = execute
        self.vg = vg if vg is not None else lvm.LVM(conf.volume_group,
                                                    execute=execute)
        self.tgt = tgt.TgtAdm(execute=tgtadm, new_account=new_account)
        self.devices = lvm_devices.DeviceCache(self.vg.get_device_path)

    # --- set-up ---

    def share_state(self, path):
        """Share the device cache between API worker processes (a volume
        created by one worker is connected by any without an LVM
        look-up)."""
        self.devices.share(path)

    def check_for_setup_error(self):
        """Tools on PATH, the volume group present, tgtd answering."""
        executor.require_tools(*REQUIRED_TOOLS)
        try:
            self._execute("vgs", "--noheadings", "-o", "vg_name",
                          self.conf.volume_group)
        except ms_exception.ProcessExecutionError:
            raise exception.VolumeGroupNotFound(vg=self.conf.volume_group)
        try:
            self.tgt.show_targets()
        except ms_exception.ProcessExecutionError as exc:
            raise ms_exception.ConfigError(
                reason="tgtd is not running or not reachable (tgtadm: %s)"
                % exc.stderr.strip())

    def _name(self, volume):
        return self.conf.volume_name_template % volume.id

    def _iqn(self, volume):
        return self.conf.target_prefix + self._name(volume)

    def _portal(self):
        return "%s:%s" % (self.conf.target_ip_address, self.conf.target_port)

    def _location(self, volume, tid):
        return "%s,%s %s 1" % (self._portal(), tid, self._iqn(volume))

    def _recorded_target(self, volume):
        """The target tgtd lists under the tid on record for ``volume``,
        if it carries the volume's IQN; None when tgtd no longer agrees
        with the record (tgtd restarted, or the target is gone)."""
        tid = driver.recorded_tid(volume.provider_location)
        target = self.tgt.target_by_tid(tid) if tid is not None else None
        if target is None or target["iqn"] != self._iqn(volume):
            return None
        return target

    # --- volumes ---

    @translate_errors
    def create_volume(self, volume):
        name = self._name(volume)
        self.vg.create_volume(name, volume.size)
        try:
            self.devices.path(name)
        except Exception:
            self.vg.delete_volume(name)
            raise
        return {}

    @translate_errors
    def create_cloned_volume(self, volume, src_vref):
        """A new LV holding ``src_vref``'s data (cinder's LVM driver
        clones the same way, without its temporary snapshot: see
        docs/deviations.md): zeroed, then the source copied onto its
        start (its blocks of zeroes skipped)."""
        name = self._name(volume)
        self.vg.create_volume(name, volume.size)
        try:
            self.vg.clear_volume(name)
            self.vg.copy_volume(self._name(src_vref), name)
            self.devices.path(name)
        except Exception:
            lvm_grow.wipe_and_remove(self.vg, name, self.conf.volume_clear)
            self.devices.forget(name)
            raise
        return {}

    @translate_errors
    def delete_volume(self, volume):
        """Export first, then the data (zeroed), then the LV and loops."""
        name = self._name(volume)
        self._remove_target(volume)
        if self.vg.volume_exists(name):
            lvm_grow.wipe_and_remove(self.vg, name, self.conf.volume_clear)
        self.devices.forget(name)

    @translate_errors
    def extend_volume(self, volume, new_size):
        """Target, then loop devices (both hold the old extent range),
        then the LV (:func:`lvm_grow.grow`); the next connection exports
        the grown device."""
        name = self._name(volume)
        self._remove_target(volume)
        self.vg.release_device(name)
        self.devices.forget(name)
        lvm_grow.grow(self.vg, name, new_size, self.conf.volume_clear)
        self.devices.path(name)
        return {"provider_location": None}

    def extend_attached_volume(self, volume, new_size):
        """Grow an attached volume in place: LV and loop devices
        (:func:`lvm_grow.grow_live`), then the LUN reopened at the new
        size.

        :raises VolumeCannotExtendInPlace: the extents after the LV are
            taken (nothing changed).
        :raises TargetUpdateFailed: the volume grew, tgt still serves the
            old size (upstream's TargetUpdateFailed: the extend stands).
        :raises VolumeBackendError: anything else (undone).
        """
        name = self._name(volume)
        self._grow_live(volume, name, new_size)
        self.devices.forget(name)
        try:
            path = self.devices.path(name)
            target = self._recorded_target(volume)
            if target is not None:
                self.tgt.reopen_lun(target["tid"], 1, path)
        except Exception as exc:
            LOG.warning("Volume %s grew to %s GiB but its target did not "
                        "follow: %s", volume.id, new_size, exc)
            raise exception.TargetUpdateFailed(volume_id=volume.id,
                                               reason=str(exc)) from exc

    @translate_errors
    def _grow_live(self, volume, name, new_size):
        try:
            lvm_grow.grow_live(self.vg, name, volume.size, new_size)
        except lvm.NoContiguousSpace as exc:
            raise exception.VolumeCannotExtendInPlace(
                volume_id=volume.id, new_size=new_size,
                reason=exc.format_message()) from exc

    @translate_errors
    def copy_image_to_volume(self, volume, image):
        """qemu-img converts the image's disk to raw onto the device."""
        path = self.devices.path(self._name(volume))
        LOG.info("Copying image %s onto volume %s (%s)", image.get("id"),
                 volume.id, path)
        self._execute("qemu-img", "convert", "-f",
                      image.get("disk_format", "qcow2"), "-O", "raw",
                      image["disk"], path, timeout=3600)

    # --- exports ---

    @translate_errors
    def create_export(self, volume):
        chap = driver.parse_provider_auth(volume.provider_auth) or \
            driver.generate_chap()
        tid = self._create_target(volume, chap, ())
        return {"provider_location": self._location(volume, tid),
                "provider_auth": "CHAP %s %s" % chap}

    @translate_errors
    def ensure_export(self, volume, initiators):
        """Re-create what is missing of the export, nothing more.

        A CHAP account already bound to the target is left alone: tgtd
        cannot change a password, so re-setting it means delete and
        re-create, and a target with no account bound admits anyone for
        that moment.
        """
        chap = driver.parse_provider_auth(volume.provider_auth)
        target = self.tgt.find_target(self._iqn(volume))
        if chap and target is not None and chap[0] in target["accounts"]:
            chap = None
        tid = self._create_target(volume, chap, initiators)
        location = self._location(volume, tid)
        if location != volume.provider_location:
            return {"provider_location": location}
        return {}

    @translate_errors
    def missing_exports(self, expected):
        targets = {t["iqn"]: t for t in self.tgt.show_targets()}
        missing = []
        for volume, initiators in expected:
            target = targets.get(self._iqn(volume))
            chap = driver.parse_provider_auth(volume.provider_auth)
            if target is None \
                    or target["tid"] != driver.recorded_tid(
                        volume.provider_location) \
                    or 1 not in [lun["lun"] for lun in target["luns"]] \
                    or (chap and chap[0] not in target["accounts"]) \
                    or not set(initiators) <= set(target["acls"]):
                missing.append(volume)
        return missing

    @translate_errors
    def remove_export(self, volume):
        self._remove_target(volume)

    @translate_errors
    def initialize_connection(self, volume, connector):
        initiator = driver.require_initiator(connector)
        iqn = self._iqn(volume)
        with locks.lock(_TARGET_LOCK):
            target = self._recorded_target(volume)
            if target is None:
                raise exception.VolumeBackendError(
                    reason="target %s is not exported as %s" % (
                        iqn, volume.provider_location))
            if initiator not in target["acls"]:
                self.tgt.bind_initiator(target["tid"], initiator)
        user, password = driver.parse_provider_auth(volume.provider_auth)
        return {"driver_volume_type": "iscsi", "data": {
            "target_discovered": False,
            "target_iqn": iqn,
            "target_portal": self._portal(),
            "target_lun": 1,
            "target_iqns": [iqn],
            "target_portals": [self._portal()],
            "target_luns": [1],
            "volume_id": volume.id,
            "auth_method": "CHAP",
            "auth_username": user,
            "auth_password": password,
            "encrypted": False,
            "discard": False,
            "qos_specs": None,
            "cacheable": False,
        }}

    @translate_errors
    def terminate_connection(self, volume, connector):
        initiator = (connector or {}).get("initiator")
        if initiator:
            with locks.lock(_TARGET_LOCK):
                self.tgt.unbind_initiator(
                    self._iqn(volume), initiator,
                    tid=driver.recorded_tid(volume.provider_location))

    # --- helpers ---

    def _create_target(self, volume, chap, initiators):
        path = self.devices.path(self._name(volume))
        for attempt in range(1, _TARGET_RETRIES + 1):
            try:
                with locks.lock(_TARGET_LOCK):
                    return self.tgt.create_target(
                        self._iqn(volume), path, lun=1, chap=chap,
                        initiators=initiators)
            except ms_exception.ProcessExecutionError:
                # Another process may have taken the same tid; retry.
                if attempt == _TARGET_RETRIES:
                    raise
                LOG.warning("Creating target %s failed (attempt %d); "
                            "retrying", self._iqn(volume), attempt)

    def _remove_target(self, volume):
        with locks.lock(_TARGET_LOCK):
            self.tgt.delete_target(self._iqn(volume))
