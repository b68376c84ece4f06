"""The libvirt connection of this host (nova's virt/libvirt/host.py).

One of the two modules that import ``libvirt`` (the other is ``guest.py``),
so libvirt errors become ``minicompute.exception`` classes here and nowhere
else.

It also runs libvirt's event loop in a daemon thread: a device detach is
asynchronous in QEMU (the guest must acknowledge the PCI unplug), and the
only reliable signal that it happened is libvirt's
``VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED`` event. :meth:`Host.expect_removal`
registers interest in a (domain, device alias) before the detach is
requested, so an event that arrives quickly is never missed.
"""

import threading

import libvirt
from oslo_log import log as logging

from minicompute import exception
from minicompute.virt.libvirt import config
from minicompute.virt.libvirt import guest as libvirt_guest
from ministack.trace.profiler import span

LOG = logging.getLogger(__name__)

_EVENT_LOOP_LOCK = threading.Lock()

# Errors meaning "this connection is dead", not "the request failed".
_CONNECTION_ERRORS = (libvirt.VIR_ERR_SYSTEM_ERROR,
                      libvirt.VIR_ERR_RPC,
                      libvirt.VIR_ERR_INVALID_CONN)
_EVENT_LOOP_STARTED = False


def _start_event_loop():
    """Register libvirt's default event implementation and run it.

    Must happen before the connection is opened, once per process.
    """
    global _EVENT_LOOP_STARTED
    with _EVENT_LOOP_LOCK:
        if _EVENT_LOOP_STARTED:
            return
        # libvirt prints every error to stderr by default; we translate
        # them into exceptions and log those instead.
        libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
        libvirt.virEventRegisterDefaultImpl()

        def _run():
            while True:
                libvirt.virEventRunDefaultImpl()

        threading.Thread(target=_run, name="libvirt-events",
                         daemon=True).start()
        _EVENT_LOOP_STARTED = True


class DeviceEventWaiter:
    """Resolves when the device alias is removed, or its removal fails."""

    def __init__(self):
        self._event = threading.Event()
        self.removed = None

    def set(self, removed):
        self.removed = removed
        self._event.set()

    def wait(self, timeout):
        """True if removed, False if it failed, None on timeout."""
        if not self._event.wait(timeout):
            return None
        return self.removed


class Host:
    """The hypervisor connection plus domain, secret and event helpers."""

    def __init__(self, uri):
        self.uri = uri
        self._conn = None
        self._conn_lock = threading.Lock()
        self._waiters = {}       # (domain uuid, alias) -> DeviceEventWaiter
        self._waiters_lock = threading.Lock()

    # -- connection ----------------------------------------------------------

    def get_connection(self):
        """The open connection (opened, with event callbacks, on demand).

        :raises HypervisorUnavailable:
        """
        with self._conn_lock:
            if self._conn is not None and self._conn.isAlive():
                return self._conn
            _start_event_loop()
            try:
                conn = libvirt.open(self.uri)
            except libvirt.libvirtError as exc:
                raise exception.HypervisorUnavailable(
                    host="%s ([libvirt] connection_uri): %s"
                    % (self.uri, exc.get_error_message()))
            conn.domainEventRegisterAny(
                None, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
                self._device_removed, None)
            conn.domainEventRegisterAny(
                None, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED,
                self._device_removal_failed, None)
            conn.setKeepAlive(5, 3)
            # libvirtd restarted (or died): forget the connection so the
            # next call opens a new one instead of failing "Broken pipe".
            conn.registerCloseCallback(self._closed, None)
            self._conn = conn
            return conn

    def _closed(self, conn, reason, opaque):
        LOG.warning("libvirt connection %s closed (reason %s); it will be "
                    "re-opened on the next call", self.uri, reason)
        with self._conn_lock:
            if self._conn is conn:
                self._conn = None

    def _retrying(self, call):
        """Run ``call(conn)``; once more on a fresh connection if the old
        one turned out to be dead (libvirtd restarted since last use)."""
        conn = self.get_connection()
        try:
            return call(conn)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() not in _CONNECTION_ERRORS:
                raise
            LOG.warning("libvirt connection lost (%s); reconnecting",
                        exc.get_error_message())
            with self._conn_lock:
                if self._conn is conn:
                    self._conn = None
            return call(self.get_connection())

    def close(self):
        with self._conn_lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                except libvirt.libvirtError:
                    pass
                self._conn = None

    # -- device events -

    def expect_removal(self, domain_uuid, alias):
        """Start listening for ``alias`` leaving the domain; a waiter."""
        waiter = DeviceEventWaiter()
        with self._waiters_lock:
            self._waiters[(domain_uuid, alias)] = waiter
        return waiter

    def forget_removal(self, domain_uuid, alias):
        with self._waiters_lock:
            self._waiters.pop((domain_uuid, alias), None)

    def _notify(self, dom, alias, removed):
        key = (dom.UUIDString(), alias)
        LOG.debug("libvirt event: device %s %s on %s", alias,
                  "removed" if removed else "removal failed", dom.name())
        with self._waiters_lock:
            waiter = self._waiters.get(key)
        if waiter is not None:
            waiter.set(removed)

    def _device_removed(self, conn, dom, alias, opaque):
        self._notify(dom, alias, True)

    def _device_removal_failed(self, conn, dom, alias, opaque):
        self._notify(dom, alias, False)

    # -- domains -

    def get_guest(self, name):
        """The guest named ``name`` (``instance-%08x``).

        :raises InstanceNotFound: no such domain.
        """
        try:
            dom = self._retrying(lambda conn: conn.lookupByName(name))
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                raise exception.InstanceNotFound(instance_id=name)
            raise exception.InternalError(err=exc.get_error_message())
        return libvirt_guest.Guest(dom)

    def guest_exists(self, name):
        try:
            self.get_guest(name)
            return True
        except exception.InstanceNotFound:
            return False

    def define_guest(self, xml):
        """Define (persistently) a domain from its XML; returns the Guest."""
        try:
            with span("libvirt", "LIBRARY", "virDomainDefineXML",
                      actor="libvirt"):
                dom = self.get_connection().defineXML(xml)
        except libvirt.libvirtError as exc:
            raise exception.InternalError(
                err="defining the domain failed: %s"
                % exc.get_error_message())
        return libvirt_guest.Guest(dom)

    def list_guests(self):
        """Every domain (running or not) on this host."""
        return [libvirt_guest.Guest(dom) for dom in
                self._retrying(lambda conn: conn.listAllDomains())]

    def get_node_info(self):
        """What libvirt says of this node: ``(getInfo(), getType(),
        getVersion(), getCapabilities())`` (nova's ``Host.get_info``,
        ``get_driver_type``, ``get_version``, ``get_capabilities``).

        :raises InternalError: libvirt refused.
        """
        try:
            return self._retrying(lambda conn: (
                conn.getInfo(), conn.getType(), conn.getVersion(),
                conn.getCapabilities()))
        except libvirt.libvirtError as exc:
            raise exception.InternalError(err=exc.get_error_message())

    # -- secrets (CHAP passwords for QEMU's iSCSI initiator) -

    def find_secret(self, usage_type, usage_id):
        """The secret's uuid, or None."""
        types = {"iscsi": libvirt.VIR_SECRET_USAGE_TYPE_ISCSI}
        try:
            secret = self.get_connection().secretLookupByUsage(
                types[usage_type], usage_id)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_SECRET:
                return None
            raise exception.InternalError(err=exc.get_error_message())
        return secret.UUIDString()

    def create_secret(self, usage_type, usage_id, value):
        """Create (or update) a private iscsi secret and set its value."""
        xml = config.iscsi_secret_xml(
            usage_id, uuid=self.find_secret(usage_type, usage_id),
            description="CHAP password of %s" % usage_id)
        try:
            with span("libvirt", "LIBRARY", "virSecretDefineXML",
                      actor="libvirt", details=lambda: {"usage": usage_id}):
                secret = self.get_connection().secretDefineXML(xml)
            # The value is the CHAP password: never in the span.
            with span("libvirt", "LIBRARY", "virSecretSetValue",
                      actor="libvirt", details=lambda: {"usage": usage_id}):
                secret.setValue(value.encode())
        except libvirt.libvirtError as exc:
            raise exception.InternalError(
                err="defining the libvirt secret %s failed: %s"
                % (usage_id, exc.get_error_message()))
        return secret.UUIDString()

    def delete_secret(self, usage_type, usage_id):
        """Remove the secret; one already gone is fine."""
        secret_uuid = self.find_secret(usage_type, usage_id)
        if secret_uuid is None:
            return
        try:
            with span("libvirt", "LIBRARY", "virSecretUndefine",
                      actor="libvirt", details=lambda: {"usage": usage_id}):
                self.get_connection().secretLookupByUUIDString(
                    secret_uuid).undefine()
        except libvirt.libvirtError as exc:
            if exc.get_error_code() != libvirt.VIR_ERR_NO_SECRET:
                raise exception.InternalError(err=exc.get_error_message())
