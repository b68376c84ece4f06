"""The LVM + tgt driver: one logical volume and one iSCSI target per volume.

Storage comes from :class:`minicinder.volume.drivers.lvm.LVM` (logical volume
``volume-<id>`` in ``[DEFAULT] volume_group``, reached through
``/dev/<vg>/<lv>`` or, without device-mapper, a loop device over its
extents) and the export from :class:`minicinder.volume.targets.tgt.TgtAdm`
(target ``<target_prefix>volume-<id>``, LUN 1, CHAP account per volume,
ACL by initiator name). This module is the boundary where command
failures become :class:`minicinder.exception.VolumeBackendError`.

Speed: the handshake must not run ``lvs`` (~50 ms each), so the block
device of each volume is mapped once, when the volume is created, and
remembered; the cache is checked against sysfs (cheap file reads) before
use and re-resolved through LVM only when it is stale.
"""

import json
import logging
import os
import threading

from minicinder import exception
from minicinder.volume import driver
from minicinder.volume import locks
from minicinder.volume.drivers import lvm
from minicinder.volume.drivers import lvm_extend
from minicinder.volume.targets import tgt
from minicinder.volume.targets import tgtd_socket
from minicinder.volume.drivers.lvm_extend import translate_errors
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


class LVMTgtDriver(lvm_extend.ExtendMixin, driver.VolumeDriver):
    """Thick LVM volumes exported by tgt with CHAP and initiator ACLs."""

    def __init__(self, conf, execute=executor.execute,
                 new_account=tgtd_socket.new_account,
                 tgtadm=tgtd_socket.execute):
        """:param execute: runs the LVM and other commands.
        :param tgtadm: runs ``tgtadm`` argvs: by default their requests
            go to tgtd's socket, no process (issue 16).
        """
        self.conf = conf
        self._execute = execute
        self.vg = lvm.LVM(conf.volume_group, execute=execute)
        self.tgt = tgt.TgtAdm(execute=tgtadm, new_account=new_account)
        self._devices = {}   # lv name -> (path, identity read from sysfs)
        self._shared_devices = None   # share_state(): a directory

    # --- set-up ---

    def share_state(self, path):
        """Share the device cache between API worker processes: a volume
        created by one worker is connected by any, and finding its loop
        device again costs ``lvs`` and ``pvs`` (~100 ms each under load)
        where a look at sysfs suffices. Each entry is still checked
        against sysfs before use, as this process's own entries are."""
        os.makedirs(path, mode=0o700, exist_ok=True)
        self._shared_devices = path

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
            self._device(name)
        except Exception:
            self.vg.delete_volume(name)
            raise
        return {}

    @translate_errors
    def delete_volume(self, volume):
        """Export first, then the data (zeroed), then the LV and loops."""
        name = self._name(volume)
        self._remove_target(volume)
        if self.vg.volume_exists(name):
            if self.conf.volume_clear == "zero":
                self.vg.clear_volume(name)
            self.vg.delete_volume(name)
        self._forget_device(name)

    @translate_errors
    def copy_image_to_volume(self, volume, image):
        """qemu-img converts the image's disk to raw onto the device."""
        path = self._device(self._name(volume))
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
        path = self._device(self._name(volume))
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

    def _device(self, name):
        """The volume's block device, from the cache when still valid
        (this process's, else the one shared by the API workers)."""
        for cached in (self._devices.get(name), self._shared_device(name)):
            if cached and _identity(cached[0]) == cached[1]:
                self._devices[name] = cached
                return cached[0]
        path = self.vg.get_device_path(name)
        identity = _identity(path)
        if identity:
            self._devices[name] = (path, identity)
            self._share_device(name, path, identity)
        return path

    def _shared_device(self, name):
        """``(path, identity)`` another worker recorded for LV ``name``."""
        if self._shared_devices is None:
            return None
        try:
            with open(os.path.join(self._shared_devices, name)) as f:
                entry = json.load(f)
            identity = entry["identity"]
            return (entry["path"], tuple(identity)
                    if isinstance(identity, list) else identity)
        except (OSError, ValueError, KeyError, TypeError):
            # No entry (the usual case) or a damaged one: only a cache
            # miss, the device is looked up through LVM.
            return None

    def _share_device(self, name, path, identity):
        if self._shared_devices is None:
            return
        target = os.path.join(self._shared_devices, name)
        tmp = "%s.%d.%d.tmp" % (target, os.getpid(), threading.get_ident())
        try:
            with open(tmp, "w") as f:
                json.dump({"path": path, "identity": identity}, f)
            os.replace(tmp, target)   # readers see all of it or none
        except OSError:
            LOG.warning("Could not share the device of %s", name,
                        exc_info=True)

    def _forget_device(self, name):
        self._devices.pop(name, None)
        if self._shared_devices is not None:
            try:
                os.unlink(os.path.join(self._shared_devices, name))
            except FileNotFoundError:
                pass


def _identity(path):
    """What a block device is, from sysfs: a loop's backing file, offset
    and size; for other devices just that the path exists."""
    base = os.path.basename(path)
    loop_dir = "/sys/block/%s/loop" % base
    if base.startswith("loop") and os.path.isdir("/sys/block/%s" % base):
        try:
            return tuple(_read("%s/%s" % (loop_dir, field))
                         for field in ("backing_file", "offset",
                                       "sizelimit"))
        except OSError:
            return None
    return os.path.exists(path) or None


def _read(path):
    with open(path) as f:
        return f.read().strip()
