"""The hands of ``ministack-audit --fix``: the repairs' operations.

What each divergence kind's repair does is ``ministack.ledgers.repairs``
(the table the compute reconciler uses too); :class:`Fixer` carries the
operations out for the audit. Each goes through the owner of the ledger
it changes, so the owner's own bookkeeping happens too: Cinder's
attachments and statuses through nova's Cinder adapter as the nova
service (Cinder revokes the initiator and recomputes the volume status
itself; only a service may delete an attachment an instance still holds,
OSSA-2023-003), nova's BDMs through ``minicompute.db.api``, guests
through libvirt, exports through minicinder's tgt/LVM adapters. Every
repair is idempotent: something already gone counts as repaired, so
running ``--fix`` twice is safe.

Left for a person (reported with the fix, never applied): an LV or a tgt
target named like a volume Cinder has never heard of (it may be another
service's data), and a volume whose LV is gone while an attachment still
holds it (detach first; then ``--fix`` marks it ``error``).
"""

import time

from minicompute import exception as nova_exception
from minicompute.volume import cinder
from ministack import context
from ministack import exception
from ministack import executor
from ministack.ledgers import repairs

class Fixer(repairs.Hands):
    """Applies the safe repairs of a list of divergences."""

    def __init__(self, settings, snapshot):
        self.settings = settings
        self.snap = snapshot
        self._nova_ready = False
        self._volume_api = None

    # -- plumbing --

    def _cinder(self):
        """nova's Cinder adapter as the compute host has it (minicompute.conf
        ``[cinder]``), with a context that has no user token: under
        keystone it authenticates as the service user (``[service_user]``),
        as the host's reconciler does; the repairs are the service's own
        work, with no user behind them."""
        if self._volume_api is None:
            self._volume_api = cinder.API(self.settings.compute_conf)
        return self._volume_api, context.get_admin_context()

    def _nova(self):
        from ministack import db
        from minicompute.db import api as db_api
        if not self._nova_ready:
            db_api.configure(db.make_engine(self.settings.nova_db))
            self._nova_ready = True
        return db_api

    def _domain(self, name):
        import libvirt
        conn = libvirt.open(self.settings.libvirt_uri)
        try:
            return conn, conn.lookupByName(name)
        except libvirt.libvirtError:
            conn.close()
            return None, None

    # -- repairs --

    def apply(self, divergences):
        for div in divergences:
            if div.safe:
                repairs.apply(div, self.snap, self)
        return divergences

    def delete_attachment(self, attachment_id):
        volume_api, ctxt = self._cinder()
        try:
            volume_api.attachment_delete(ctxt, attachment_id)
        except nova_exception.VolumeAttachmentNotFound:
            pass

    def destroy_bdm(self, bdm_id):
        self._nova().bdm_destroy(None, bdm_id)

    def unplug_disk(self, instance_uuid, domain, dev):
        self._unplug(domain, dev)

    def replug_volume(self, bdm, instance_uuid, domain):
        """Plug the disk back with minicompute's own libvirt driver (the
        same XML, initiator name and CHAP secret it would make)."""
        from minicompute.virt.libvirt import driver as libvirt_driver
        drv = libvirt_driver.LibvirtDriver(self.settings.compute_conf)
        drv.init_host(self.settings.host)
        try:
            drv.replug_volume(None, bdm["connection_info"], {
                "uuid": instance_uuid, "name": domain}, bdm["device_name"])
        finally:
            drv.cleanup_host()

    def destroy_domain(self, domain):
        conn, dom = self._domain(domain)
        if dom is None:
            return
        try:
            if dom.isActive():
                dom.destroy()
            dom.undefine()
        finally:
            conn.close()

    def may_reset_volume(self, volume_id):
        # The audit read every attachment of every volume a moment ago
        # (with no grace); that is its last look.
        return True

    def reset_volume(self, volume_id, status, attach_status=None):
        volume_api, ctxt = self._cinder()
        try:
            volume_api.reset_status(ctxt, volume_id, status, attach_status)
        except nova_exception.VolumeNotFound:
            pass

    def roll_detaching(self, volume_id):
        volume_api, ctxt = self._cinder()
        try:
            volume_api.roll_detaching(ctxt, volume_id)
        except nova_exception.VolumeNotFound:
            pass

    def delete_target(self, iqn):
        from minicinder.volume import tgt
        tgt.TgtAdm().delete_target(iqn)

    def unbind_initiator(self, iqn, initiator):
        from minicinder.volume import tgt
        tgt.TgtAdm().unbind_initiator(iqn, initiator)

    def ensure_export(self, volume_id, initiators):
        from minicinder.volume import driver as volume_driver
        from minicinder.volume import lvm_driver
        rows = _provider(self.settings, volume_id)
        ref = volume_driver.VolumeRef(id=volume_id, size=rows["size"],
                                      provider_auth=rows["provider_auth"],
                                      provider_location=rows[
                                          "provider_location"])
        lvm_driver.LVMTgtDriver(self.settings.cinder_conf).ensure_export(
            ref, initiators)

    def delete_lv(self, lv):
        from minicinder.volume import lvm
        lvm.LVM(self.settings.volume_group).delete_volume(lv)

    def detach_loop(self, loop):
        self._detach_loop(loop)

    # -- helpers --

    @staticmethod
    def _detach_loop(loop):
        out, _ = executor.execute("losetup", "--list", "--noheadings",
                                  "--output", "NAME")
        if loop in out.split():
            executor.execute("losetup", "-d", loop)

    def _unplug(self, domain, dev, timeout=30):
        """Detach ``dev`` from the running guest and its definition."""
        import libvirt
        import xml.etree.ElementTree as ET
        conn, dom = self._domain(domain)
        if dom is None:
            return
        removed = None
        try:
            for flags, inactive in (
                    (libvirt.VIR_DOMAIN_AFFECT_LIVE, False),
                    (libvirt.VIR_DOMAIN_AFFECT_CONFIG, True)):
                if not inactive and not dom.isActive():
                    continue
                xml_flags = libvirt.VIR_DOMAIN_XML_INACTIVE if inactive \
                    else 0
                disk = _find_disk(dom.XMLDesc(xml_flags), dev)
                if disk is None:
                    continue
                removed = disk
                try:
                    dom.detachDeviceFlags(
                        ET.tostring(disk, encoding="unicode"), flags)
                except libvirt.libvirtError as exc:
                    if not _device_missing(exc):
                        raise
                    # Gone between the look and the detach: the host's
                    # own reconciler fixed the same divergence first.
                    continue
                if not inactive:
                    deadline = time.monotonic() + timeout
                    while _find_disk(dom.XMLDesc(0), dev) is not None:
                        if time.monotonic() > deadline:
                            raise exception.MinistackException(
                                "the guest %s did not release %s within "
                                "%ss" % (domain, dev, timeout))
                        time.sleep(0.5)
            self._drop_secret(conn, removed)
        finally:
            conn.close()

    @staticmethod
    def _drop_secret(conn, disk):
        """Delete the disk's CHAP secret unless another guest's disk uses
        the same target (the secret is per target, as minicompute makes
        it)."""
        import libvirt
        import xml.etree.ElementTree as ET
        if disk is None:
            return
        source = disk.find("source")
        secret = disk.find("source/auth/secret")
        if source is None or secret is None or not secret.get("usage"):
            return
        for other in conn.listAllDomains():
            for flags in (0, libvirt.VIR_DOMAIN_XML_INACTIVE):
                for src in ET.fromstring(other.XMLDesc(flags)).iter(
                        "source"):
                    if src.get("name") == source.get("name"):
                        return
        try:
            conn.secretLookupByUsage(libvirt.VIR_SECRET_USAGE_TYPE_ISCSI,
                                     secret.get("usage")).undefine()
        except libvirt.libvirtError:
            pass


def _find_disk(xml, dev):
    import xml.etree.ElementTree as ET
    for disk in ET.fromstring(xml).findall("./devices/disk"):
        target = disk.find("target")
        if target is not None and target.get("dev") == dev:
            return disk
    return None


def _provider(settings, volume_id):
    import sqlalchemy as sa
    engine = sa.create_engine(settings.cinder_db)
    try:
        with engine.connect() as conn:
            return dict(conn.execute(sa.text(
                "SELECT size, provider_auth, provider_location FROM volumes "
                "WHERE id=:v"), {"v": volume_id}).mappings().one())
    finally:
        engine.dispose()


def _device_missing(exc):
    """Whether a libvirt error says the device is not (or no longer) there."""
    import libvirt
    return (exc.get_error_code() == libvirt.VIR_ERR_DEVICE_MISSING
            or "not found" in (exc.get_error_message() or "").lower())
