"""Repairs of ``ministack-audit --fix``: one function per divergence kind.

Each repair goes through the owner of the ledger it changes, so the
owner's own bookkeeping happens too: Cinder's attachments and statuses
through minicinder's REST API as the nova service (it revokes the
initiator and recomputes the volume status itself; only a service may
delete an attachment an instance still holds, OSSA-2023-003), nova's
BDMs through ``minicompute.db.api``, guests through libvirt, exports
through minicinder's tgt/LVM adapters. Every repair is idempotent: something
already gone counts as repaired, so running ``--fix`` twice is safe.

Left for a person (reported with the fix, never applied): an LV or a tgt
target named like a volume Cinder has never heard of (it may be another
service's data), and a volume whose LV is gone while an attachment still
holds it (detach first; then ``--fix`` marks it ``error``).
"""

import time

import requests

from ministack import exception
from ministack import executor

# noauth: the admin, acting as the service (the role nova's account has).
ADMIN_HEADERS = {"X-Auth-Token": "admin:admin", "X-Roles": "admin,service",
                 "Content-Type": "application/json",
                 "OpenStack-API-Version": "volume 3.44"}


class Fixer:
    """Applies the safe repairs of a list of divergences."""

    def __init__(self, settings, snapshot):
        self.settings = settings
        self.snap = snapshot
        self._nova_ready = False
        self._cinder_auth = None

    # -- plumbing --

    def _cinder_identity(self):
        """``(project, headers)`` for minicinder, as its config says.

        With ``auth_strategy = keystone`` the audit authenticates as the
        nova service user (minicompute.conf ``[service_user]``) and sends
        that token as both ``X-Auth-Token`` and ``X-Service-Token``: the
        repairs are the service's own work, with no user behind them.
        """
        if self.settings.cinder_auth_strategy != "keystone":
            return "admin", ADMIN_HEADERS
        if self._cinder_auth is None:
            from keystoneauth1 import exceptions as ks_exception
            from keystoneauth1 import session as ks_session

            from ministack.identity import client as identity_client
            conf = self.settings.compute_conf
            auth = identity_client.service_auth_plugin(conf)
            sess = ks_session.Session(auth=auth)
            try:
                token = auth.get_token(sess)
                project = auth.get_project_id(sess)
            except ks_exception.ClientException as exc:
                raise exception.ConfigError(
                    reason="cannot authenticate as the service user %s at "
                           "%s (minicompute.conf [service_user]): %s"
                    % (conf.service_user.username,
                       conf.service_user.auth_url, exc))
            headers = dict(ADMIN_HEADERS, **{
                "X-Auth-Token": token, "X-Service-Token": token})
            headers.pop("X-Roles")
            self._cinder_auth = (project, headers)
        return self._cinder_auth

    def _cinder(self, method, path, **kwargs):
        project, headers = self._cinder_identity()
        url = "%s/v3/%s%s" % (self.settings.cinder_url, project, path)
        try:
            resp = requests.request(method, url, headers=headers,
                                    timeout=60, **kwargs)
        except requests.RequestException as exc:
            raise exception.ConfigError(
                reason="minicinder at %s is not answering: %s"
                % (self.settings.cinder_url, exc))
        if resp.status_code == 404:
            return None
        if resp.status_code >= 400:
            raise exception.MinistackException(
                "minicinder %s %s answered %s: %s" % (
                    method, path, resp.status_code, resp.text[:200]))
        return resp

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
            if not div.safe:
                continue
            try:
                getattr(self, "fix_" + div.kind)(div.data)
                div.fixed = True
            except Exception as exc:  # report it, go on with the rest
                div.fix_error = exc.format_message() \
                    if hasattr(exc, "format_message") else str(exc)
        return divergences

    def fix_orphan_attachment(self, data):
        self._cinder("DELETE", "/attachments/%s" % data["attachment_id"])

    def fix_bdm_without_attachment(self, data):
        dev = (data.get("device_name") or "").replace("/dev/", "")
        inst = (self.snap.instances or {}).get(data["instance_uuid"])
        if inst and dev:
            disk = (self.snap.domains or {}).get(inst["domain"], {}).get(
                "disks", {}).get(dev)
            if disk and disk.get("serial") == data["volume_id"]:
                self._unplug(inst["domain"], dev)
        self._nova().bdm_destroy(None, data["bdm_id"])

    def fix_disk_without_bdm(self, data):
        self._unplug(data["domain"], data["dev"])

    def fix_bdm_disk_missing(self, data):
        """Plug the disk back with minicompute's own libvirt driver (the
        same XML, initiator name and CHAP secret it would make)."""
        from minicompute.virt.libvirt import driver as libvirt_driver
        bdm = next(b for b in self.snap.bdms if b["id"] == data["bdm_id"])
        drv = libvirt_driver.LibvirtDriver(self.settings.compute_conf)
        drv.init_host(self.settings.host)
        try:
            drv.replug_volume(None, bdm["connection_info"], {
                "uuid": data["instance_uuid"], "name": data["domain"]},
                bdm["device_name"])
        finally:
            drv.cleanup_host()

    def fix_detach_unfinished(self, data):
        if data.get("attachment_id"):
            self._cinder("DELETE", "/attachments/%s" % data["attachment_id"])
        self._nova().bdm_destroy(None, data["bdm_id"])

    def fix_domain_without_instance(self, data):
        conn, dom = self._domain(data["domain"])
        if dom is None:
            return
        try:
            if dom.isActive():
                dom.destroy()
            dom.undefine()
        finally:
            conn.close()

    def fix_in_use_without_attachment(self, data):
        self._cinder("POST", "/volumes/%s/action" % data["volume_id"],
                     json={"os-reset_status": {
                         "status": "available", "attach_status": "detached"}})

    def fix_stuck_detaching(self, data):
        self._cinder("POST", "/volumes/%s/action" % data["volume_id"],
                     json={"os-roll_detaching": {}})

    def fix_export_without_volume(self, data):
        from minicinder.volume import tgt
        tgt.TgtAdm().delete_target(data["iqn"])

    def fix_export_without_attachment(self, data):
        from minicinder.volume import tgt
        tgt.TgtAdm().unbind_initiator(data["iqn"], data["initiator"])

    def fix_missing_export(self, data):
        from minicinder.volume import driver as volume_driver
        from minicinder.volume import lvm_driver
        rows = _provider(self.settings, data["volume_id"])
        initiators = sorted({a["initiator"] for a in self.snap.attachments
                             if a["volume_id"] == data["volume_id"]
                             and a.get("initiator")})
        ref = volume_driver.VolumeRef(id=data["volume_id"], size=rows["size"],
                                      provider_auth=rows["provider_auth"],
                                      provider_location=rows[
                                          "provider_location"])
        lvm_driver.LVMTgtDriver(self.settings.cinder_conf).ensure_export(
            ref, initiators)

    def fix_lv_without_volume(self, data):
        from minicinder.volume import lvm
        lvm.LVM(self.settings.volume_group).delete_volume(data["lv"])

    def fix_volume_without_lv(self, data):
        self._cinder("POST", "/volumes/%s/action" % data["volume_id"],
                     json={"os-reset_status": {"status": "error"}})

    def fix_duplicate_loop(self, data):
        self._detach_loop(data["loop"])

    def fix_leftover_loop(self, data):
        self._detach_loop(data["loop"])

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
