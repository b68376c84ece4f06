"""The hands of ``ministack-audit --fix``: the repairs' operations.

What each divergence kind's repair does is ``ministack.ledgers.repairs``
(the table the compute reconciler uses too); :class:`Fixer` carries the
operations out for the audit. Each goes through the owner of the ledger
it changes, so the owner's own bookkeeping happens too: Cinder's
attachments and statuses through nova's Cinder adapter as the nova
service (Cinder revokes the initiator and recomputes the volume status
itself; only a service may delete an attachment an instance still holds,
OSSA-2023-003), nova's BDMs through ``minicompute.db.api``, guests
through minicompute's libvirt driver and host (the same detach with
retries, and CHAP-secret bookkeeping, the compute host uses), exports
through minicinder's tgt/LVM adapters and its LVM driver (the volume's
provider fields read with minicinder's data API). Every
repair is idempotent: something already gone counts as repaired, so
running ``--fix`` twice is safe.

Guests and CHAP secrets are repaired on the host the divergence names,
through that host's libvirtd (:meth:`Fixer.for_host`: a Fixer of its
own per host, on its ``connection_uri``, plugging disks back as its
initiator).

Left for a person (reported with the fix, never applied): an LV or a tgt
target named like a volume Cinder has never heard of (it may be another
service's data), and a volume whose LV is gone while an attachment still
holds it (detach first; then ``--fix`` marks it ``error``).
"""

from minicinder.db import volume_reads
from minicinder.volume import driver as volume_driver
from minicinder.volume.drivers import lvm
from minicinder.volume.drivers import lvm_driver
from minicinder.volume.targets import tgt
from minicompute import exception as nova_exception
from minicompute.db import api as nova_db
from minicompute.virt.libvirt import driver as libvirt_driver
from minicompute.virt.libvirt import host as libvirt_host
from minicompute.volume import cinder
from ministack import context
from ministack import db
from ministack import exception
from ministack.ledgers import repairs
from ministack_audit import hosts
from ministack_audit import ledgers

# A guest or disk already gone: the repair's work is done (often the
# host's own reconciler got there first).
_GONE = (nova_exception.InstanceNotFound, nova_exception.DomainNotFound,
         nova_exception.DiskNotFound)


class Fixer(repairs.Hands):
    """Applies the safe repairs of a list of divergences.

    The first host's guests (minicompute.conf's) are its own; another
    host's are those of its :meth:`for_host` Fixer.
    """

    def __init__(self, settings, snapshot, host=None, name=None,
                 parent=None):
        self.settings = settings
        self.snap = snapshot
        self._nova_ready = False
        self._volume_api = None
        self._virt = None
        self._virt_ready = False
        #: another host's HostSettings (None: the first host, or, with a
        #: ``name``, a host with no config here)
        self._host = host
        self._name = name
        self._parent = parent
        self._others = {}

    def for_host(self, name):
        """The hands of compute host ``name`` (this Fixer for the first
        host, or for no host in particular)."""
        if self._parent is not None:
            return self._parent.for_host(name)
        if not name or name == self.settings.host:
            return self
        if name not in self._others:
            host = next((h for h in self.settings.hosts
                         if h.name == name), None)
            self._others[name] = Fixer(self.settings, self.snap, host=host,
                                       name=name, parent=self)
        return self._others[name]

    # -- plumbing --

    def _cinder(self):
        """nova's Cinder adapter as the compute host has it (minicompute.conf
        ``[cinder]``), with a context that has no user token: under
        keystone it authenticates as the service user (``[service_user]``),
        as the host's reconciler does; the repairs are the service's own
        work, with no user behind them."""
        if self._parent is not None:
            return self._parent._cinder()
        if self._volume_api is None:
            self._volume_api = cinder.API(self.settings.compute_conf)
        return self._volume_api, context.get_admin_context()

    def _nova(self):
        if self._parent is not None:
            return self._parent._nova()
        if not self._nova_ready:
            nova_db.configure(db.make_engine(self.settings.nova_db))
            self._nova_ready = True
        return nova_db

    def _driver(self, volumes=False):
        """minicompute's libvirt driver on the host's libvirt (its
        ``[libvirt] connection_uri``); with ``volumes`` its volume drivers
        too (init_host: the initiator name, the iSCSI mode)."""
        if self._name is not None and self._host is None:
            raise exception.ConfigError(
                reason="compute host %s has no minicompute config beside "
                       "minicompute.conf: its libvirtd is not reachable "
                       "from here" % self._name)
        host = self._host or self.settings      # the first host's
        if self._virt is None:
            self._virt = libvirt_driver.LibvirtDriver(
                host.compute_conf, host=libvirt_host.Host(host.libvirt_uri))
        if volumes and not self._virt_ready:
            self._virt.init_host(self._host.name if self._host
                                 else self.settings.host)
            if self._host is not None:
                hosts.use_initiator(self._virt, self._host)
            self._virt_ready = True
        return self._virt

    def close(self):
        for other in self._others.values():
            other.close()
        if self._virt is not None:
            self._virt.cleanup_host()
            self._virt = None
            self._virt_ready = False

    # -- repairs --

    def apply(self, divergences):
        try:
            for div in divergences:
                if div.safe:
                    repairs.apply(div, self.snap, self)
        finally:
            self.close()
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
        """The driver's unplug (live, then the definition; the CHAP secret
        dropped unless another guest uses the target)."""
        try:
            self._driver().unplug_disk(
                None, {"uuid": instance_uuid, "name": domain}, dev)
        except _GONE:
            pass

    def replug_volume(self, bdm, instance_uuid, domain):
        """Plug the disk back with minicompute's own libvirt driver (the
        same XML, initiator name and CHAP secret it would make)."""
        self._driver(volumes=True).replug_volume(
            None, bdm["connection_info"], {"uuid": instance_uuid,
                                           "name": domain},
            bdm["device_name"])

    def destroy_domain(self, domain):
        try:
            guest = self._driver().host.get_guest(domain)
            guest.poweroff()
            guest.undefine()
        except _GONE:
            pass

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

    def delete_secret(self, usage):
        """Undefine the CHAP secret unless a guest of the host names it
        now (a last look: an attach since the audit's read)."""
        drv = self._driver()
        if usage in hosts.secret_users(drv.host):
            return
        drv.host.delete_secret("iscsi", usage)

    def delete_target(self, iqn):
        tgt.TgtAdm().delete_target(iqn)

    def unbind_initiator(self, iqn, initiator):
        tgt.TgtAdm().unbind_initiator(iqn, initiator)

    def ensure_export(self, volume_id, initiators):
        with ledgers.cinder_session(self.settings) as session:
            # Scoped as an admin's read: a live volume, any project.
            volume_reads.volume_state(session, context.get_admin_context(),
                                      volume_id)
            volume = volume_reads.volume_ref(session, volume_id)
        ref = volume_driver.VolumeRef(
            id=volume_id, size=volume.size,
            provider_auth=volume.provider_auth,
            provider_location=volume.provider_location)
        lvm_driver.LVMTgtDriver(self.settings.cinder_conf).ensure_export(
            ref, initiators)

    def delete_lv(self, lv):
        lvm.LVM(self.settings.volume_group).delete_volume(lv)

    def detach_loop(self, loop):
        lvm.LVM(self.settings.volume_group).detach_loop(loop)
