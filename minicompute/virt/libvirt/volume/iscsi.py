"""iSCSI volumes, through the kernel (os-brick) or QEMU's own initiator.

Two ways to reach Cinder's iSCSI target (``[libvirt] iscsi_initiator``):

* **kernel** (upstream's path, nova's LibvirtISCSIVolumeDriver): os-brick's
  ISCSIConnector logs in with open-iscsi, the LUN becomes a host block
  device and the guest gets ``<disk type='block'>`` on it.
* **qemu** (hosts without a kernel initiator, like this container): the
  guest gets ``<disk type='network'><source protocol='iscsi'>`` and QEMU's
  libiscsi logs in itself, as the host's initiator IQN, with the CHAP
  password in a libvirt secret (never in the domain XML). The host-side
  "connection" is then only that secret, which every guest on this host
  using the same target shares.

Both present the host's initiator IQN, the one sent to Cinder in the
connector, because Cinder's target ACL admits exactly that name.

Traced, the kernel path's connect and disconnect are os-brick's own
LIBRARY hops, :data:`CONNECT_HOP` and :data:`DISCONNECT_HOP`, with the
host block device in their details. The QEMU path calls no os-brick
connect: its connect step is the hop ``connect_volume (QEMU libiscsi)``
in the compute's own lane, whose details say what happens (the CHAP
secret is defined; QEMU logs in when libvirt attaches the network disk,
the ``virDomainAttachDeviceFlags`` hop that follows). Its disconnect is
``disconnect_volume (QEMU libiscsi)``.
"""

import os
import time

from oslo_log import log as logging

from minicompute.virt.libvirt import config
from minicompute.virt.libvirt.volume import base
from ministack.trace.profiler import span

LOG = logging.getLogger(__name__)

#: The kernel path's hops (LIBRARY, actor os-brick); the course and the
#: trace's phases match them by their ``connect_volume`` and
#: ``disconnect_volume`` words.
CONNECT_HOP = "connect_volume (os-brick iSCSI)"
DISCONNECT_HOP = "disconnect_volume (os-brick iSCSI)"

#: Seconds to wait for udev's /dev/disk/by-path link after the login.
BY_PATH_WAIT = 5.0
#: udevd's control socket: without udev no by-path link ever appears.
UDEV_CONTROL = "/run/udev/control"


def _secret_usage(data):
    # One secret per target: CHAP credentials are per volume in Cinder.
    return "ministack-chap-%s" % data["target_iqn"]


def _portal(data):
    host, _, port = data["target_portal"].rpartition(":")
    return host.strip("[]"), int(port or 3260)


def by_path(data):
    """udev's stable name of the LUN os-brick logs in to (the name nova's
    disk XML used before os-brick returned /dev/sdX)."""
    return "/dev/disk/by-path/ip-%s-iscsi-%s-lun-%s" % (
        data["target_portal"], data["target_iqn"], data.get("target_lun", 0))


def same_source(key, source):
    """Whether a guest's disk ``<source>`` is the connection ``key`` (a
    driver's :meth:`source_key`): a network disk's name, or a block device
    by either of its names (udev's by-path link or os-brick's /dev/sdX)."""
    if key == source.get("name"):
        return True
    dev = source.get("dev")
    return bool(dev) and (key == dev or
                          os.path.realpath(key) == os.path.realpath(dev))


def _stable_path(data, device, wait=BY_PATH_WAIT, sleep=time.sleep):
    """The by-path link when udev makes it (for the same device os-brick
    found), else os-brick's own path: hosts without udev have none."""
    link = by_path(data)
    if not os.path.exists(UDEV_CONTROL):
        return device
    deadline = time.monotonic() + wait
    while True:
        if os.path.exists(link):
            if os.path.realpath(link) == os.path.realpath(device):
                return link
            return device
        if time.monotonic() >= deadline:
            LOG.debug("No %s after %.0f s: using %s", link, wait, device)
            return device
        sleep(0.05)


class LibvirtISCSIVolumeDriver(base.LibvirtBaseVolumeDriver):
    """Kernel initiator: os-brick connects, the guest gets a block disk.

    os-brick logs in (sendtargets discovery or a direct node login, CHAP
    from Cinder's connection data) and finds the LUN's SCSI disk. On
    disconnect it removes that disk and logs out of the target only when
    no other LUN of the session is still in use; a volume another guest
    on this host still has (``still_used``) is not disconnected at all,
    as nova's ``_disconnect_volume`` does.
    """

    def __init__(self, host):
        super().__init__(host)
        from os_brick.initiator import connector
        self.connector = connector.InitiatorConnector.factory(
            "ISCSI", root_helper=None, use_multipath=False)

    @staticmethod
    def _span_details(data, **more):
        details = {"driver": "LibvirtISCSIVolumeDriver",
                   "initiator": "kernel (open-iscsi, via os-brick)",
                   "target_portal": data.get("target_portal"),
                   "target_iqn": data.get("target_iqn"),
                   "target_lun": data.get("target_lun", 0),
                   "auth_method": data.get("auth_method"),
                   "discovery": "sendtargets" if data.get(
                       "target_discovered") else "direct node login"}
        details.update(more)
        return details

    def connect_volume(self, connection_info, instance):
        data = connection_info["data"]
        LOG.debug("Calling os-brick to attach iSCSI volume %s",
                  connection_info.get("serial"))
        with span("os_brick", "LIBRARY", CONNECT_HOP, actor="os-brick",
                  details=lambda: self._span_details(data)) as sp:
            device_info = self.connector.connect_volume(data)
            path = _stable_path(data, device_info["path"])
            sp.set(details=self._span_details(
                data, device_path=path, scsi_device=device_info["path"],
                scsi_wwn=device_info.get("scsi_wwn")))
        data["device_path"] = path

    def disconnect_volume(self, connection_info, instance, still_used=False):
        data = connection_info["data"]
        if still_used:
            LOG.info("Keeping the iSCSI session of %s: another guest on "
                     "this host uses it", connection_info.get("serial"))
        with span("os_brick", "LIBRARY", DISCONNECT_HOP, actor="os-brick",
                  details=lambda: self._span_details(
                      data, device_path=data.get("device_path"),
                      still_used=still_used,
                      session="kept: another guest on this host uses the "
                              "volume (os-brick not called)" if still_used
                      else "logged out unless another LUN of it is "
                           "in use")):
            if not still_used:
                self.connector.disconnect_volume(data, None)

    def _disk(self, connection_info, target_dev, serial):
        return config.block_disk(target_dev,
                                 connection_info["data"]["device_path"],
                                 serial=serial)

    def source_key(self, connection_info):
        return connection_info["data"].get("device_path")


class LibvirtNetISCSIVolumeDriver(base.LibvirtBaseVolumeDriver):
    """QEMU initiator: a network disk, CHAP through a libvirt secret."""

    def __init__(self, host, initiator_iqn):
        super().__init__(host)
        self.initiator_iqn = initiator_iqn

    def _span_details(self, data, **more):
        chap = data.get("auth_method") == "CHAP"
        details = {"driver": type(self).__name__,
                   "initiator": "QEMU libiscsi (no os-brick connect)",
                   "initiator_iqn": self.initiator_iqn,
                   "target_portal": data.get("target_portal"),
                   "target_iqn": data.get("target_iqn"),
                   "target_lun": data.get("target_lun", 0),
                   "auth_method": data.get("auth_method")}
        if chap:
            details["chap_secret"] = "libvirt secret %s" % _secret_usage(data)
        details.update(more)
        return details

    def connect_volume(self, connection_info, instance):
        data = connection_info["data"]
        chap = data.get("auth_method") == "CHAP"
        with span("volume_driver", "LIBRARY",
                  "connect_volume (QEMU libiscsi)", actor="nova-compute",
                  details=lambda: self._span_details(
                      data, host_side="the CHAP secret, defined now" if chap
                      else "nothing",
                      login="QEMU logs in to the target when libvirt "
                            "attaches the network disk "
                            "(virDomainAttachDeviceFlags)")):
            if chap:
                self.host.create_secret("iscsi", _secret_usage(data),
                                        data["auth_password"])

    def disconnect_volume(self, connection_info, instance, still_used=False):
        data = connection_info["data"]
        chap = data.get("auth_method") == "CHAP"
        with span("volume_driver", "LIBRARY",
                  "disconnect_volume (QEMU libiscsi)", actor="nova-compute",
                  details=lambda: self._span_details(
                      data, still_used=still_used,
                      host_side="kept: another guest on this host uses the "
                                "target" if still_used else
                                "the CHAP secret, removed now" if chap
                                else "nothing",
                      logout="QEMU closed its iSCSI session when the "
                             "disk left the guest")):
            if still_used:
                LOG.info("Keeping the CHAP secret of %s: another guest on "
                         "this host uses the target", data["target_iqn"])
                return
            if chap:
                self.host.delete_secret("iscsi", _secret_usage(data))

    def _disk(self, connection_info, target_dev, serial):
        data = connection_info["data"]
        host, port = _portal(data)
        chap = data.get("auth_method") == "CHAP"
        return config.iscsi_disk(
            target_dev, iqn=data["target_iqn"],
            lun=data.get("target_lun", 0), host=host, port=port,
            serial=serial, initiator_iqn=self.initiator_iqn,
            auth_username=data["auth_username"] if chap else None,
            secret_usage=_secret_usage(data) if chap else None)

    def source_key(self, connection_info):
        data = connection_info["data"]
        return "%s/%s" % (data["target_iqn"], data.get("target_lun", 0))
