"""The one module that talks to Cinder (minicinder), as nova/volume/cinder.py.

Every call goes through python-cinderclient at microversion 3.44 (the
first with ``attachment_complete``) on the process' one keystoneauth
Session (``cinder_session``: kept-alive connections, a REST span per
call while tracing), to ``[cinder] endpoint_template`` for the caller's
project: ``self._cinderclient(ctxt).attachments.create(...)``. That Cinder
offers 3.44 is checked once per process, at the first call, not per
call as nova does. The caller's identity travels as ``[cinder]
auth_strategy`` says (``cinder_auth``: the caller's token plus nova's
service token, or minicinder's noauth headers). The request id travels
in ``X-OpenStack-Request-ID`` so one request can be followed through
the logs of all three daemons.

Errors are translated once, by ``cinder_errors``: cinderclient's and
keystoneauth's exceptions never leave this module. 404s become the "not
found" of the thing asked about (VolumeNotFound,
VolumeAttachmentNotFound), 400 becomes InvalidInput (nova's API turns
that into InvalidVolume where upstream does), 403/409 keep their meaning,
and an unreachable Cinder is CinderConnectionFailed.

Results are plain dicts, the JSON Cinder answered. ``get`` reshapes the
volume like nova's ``_untranslate_volume_summary_view``: ``attachments``
is a dict keyed by instance uuid (``{uuid: {"attachment_id",
"mountpoint"}}``), because that is how every caller looks attachments up.
"""

import threading
import time
from urllib import parse as urlparse

from cinderclient import api_versions
from cinderclient import client as cinder_client
from oslo_log import log as logging

from minicompute import conf as compute_conf
from minicompute import exception
from minicompute.volume import cinder_auth
from minicompute.volume import cinder_session
from minicompute.volume.cinder_errors import CLIENT_ERRORS
from minicompute.volume.cinder_errors import attachment_not_found
from minicompute.volume.cinder_errors import retriable
from minicompute.volume.cinder_errors import translate
from minicompute.volume.cinder_errors import volume_not_found

LOG = logging.getLogger(__name__)

# attachment_complete appeared in 3.44; every call is made at this version.
MICROVERSION = "3.44"
# os-reimage appeared in 3.68; only that call is made at it.
REIMAGE_MICROVERSION = "3.68"


def _untranslate_volume(volume):
    """Reshape Cinder's volume JSON as nova's callers expect it."""
    attachments = {}
    for att in volume.get("attachments") or []:
        attachments[att.get("server_id")] = {
            "attachment_id": att.get("attachment_id"),
            "mountpoint": att.get("device"),
            "host_name": att.get("host_name"),
        }
    out = dict(volume)
    out.update({
        "display_name": volume.get("name"),
        "attach_status": "attached" if attachments else "detached",
        "attachments": attachments,
        "multiattach": bool(volume.get("multiattach")),
        "cinder_attachments": volume.get("attachments") or [],
    })
    return out


def _attachment_dict(attachment):
    """The attachment as a dict, connection_info in the usual nesting.

    Cinder's attachment API returns connection_info *flat* (the data keys
    next to ``driver_volume_type``, plus attachment fields); everything
    downstream (volume drivers, os-brick) wants ``{"driver_volume_type":
    ..., "data": {...}}``, as the legacy initialize_connection returns it.
    This is nova's ``_translate_attachment_ref``.
    """
    data = dict(attachment)
    flat = dict(data.get("connection_info") or {})
    nested = {}
    if flat:
        flat.pop("attachment_id", None)
        nested["driver_volume_type"] = flat.pop("driver_volume_type", None)
        for key in ("status", "instance_uuid", "attach_mode",
                    "attached_at", "detached_at"):
            flat.pop(key, None)
        nested["data"] = flat
    data["connection_info"] = nested
    return data


def _version_root(url):
    """Cinder's version document's URL: the endpoint's up to ``/v3``."""
    parts = urlparse.urlsplit(url)
    path = parts.path
    if "/v3" in path:
        path = path[:path.index("/v3")]
    return urlparse.urlunsplit((parts.scheme, parts.netloc, path + "/",
                                "", ""))


class API:
    """Cinder calls on behalf of a request context.

    :param conf: a ConfigOpts; ``[cinder]`` is registered if needed.
    :param sleep: how to wait between retries (tests pass a no-op).
    """

    def __init__(self, conf, sleep=time.sleep):
        compute_conf.register_cinder_opts(conf)
        self.conf = conf
        self._sleep = sleep
        self._lock = threading.Lock()
        self._session = None
        self._version_checked = False

    # -- plumbing ------------------------------------------------------------

    def _get_session(self):
        """The process' one keystoneauth Session, made at the first call
        (the options are read then, not at start-up)."""
        with self._lock:
            if self._session is None:
                self._session = cinder_session.new_session(
                    self.conf.cinder.http_timeout)
            return self._session

    def _check_microversion(self, url):
        """Cinder offers :data:`MICROVERSION`, asked once per process.

        :raises CinderAPIVersionNotAvailable: it does not.
        :raises CinderConnectionFailed: Cinder could not be asked (asked
            again at the next call).
        """
        if self._version_checked:
            return
        try:
            highest = cinder_client.get_highest_client_server_version(
                _version_root(url))
        except (OSError, ValueError, KeyError) as exc:
            raise exception.CinderConnectionFailed(
                reason="Cinder's versions could not be read: %s" % exc
            ) from exc
        if api_versions.APIVersion(highest) < \
                api_versions.APIVersion(MICROVERSION):
            raise exception.CinderAPIVersionNotAvailable(
                version=MICROVERSION)
        self._version_checked = True

    def _cinderclient(self, ctxt, version=MICROVERSION):
        """A cinderclient at ``version`` for ``ctxt``: its project's
        endpoint, its identity, its request id."""
        session = self._get_session()
        auth, url = cinder_auth.plugin(self.conf, ctxt, session)
        self._check_microversion(url)
        return cinder_client.Client(
            version, session=session, auth=auth, endpoint_override=url,
            global_request_id=ctxt.global_request_id or ctxt.request_id)

    def _retry(self, func, *args):
        """Run ``func`` retrying 5xx and connect errors (idempotent calls)."""
        attempts = self.conf.cinder.http_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return func(*args)
            except CLIENT_ERRORS as exc:
                if attempt == attempts or not retriable(exc):
                    raise
                LOG.warning("Cinder call %s failed (%s), retry %d of %d",
                            getattr(func, "__name__", func), exc, attempt,
                            attempts - 1)
                self._sleep(min(2 ** attempt, 10))

    # -- volumes -------------------------------------------------------------

    @translate(not_found=volume_not_found)
    def get(self, ctxt, volume_id):
        """The volume as a dict; ``attachments`` keyed by instance uuid.

        :raises VolumeNotFound:
        """
        volume = self._cinderclient(ctxt).volumes.get(volume_id)
        return _untranslate_volume(volume.to_dict())

    @translate()
    def get_all(self, ctxt):
        """The caller's volumes (detailed), oldest last as Cinder lists.

        For nova's os-volumes proxy (``GET /os-volumes``, up to 2.35).
        """
        return [_untranslate_volume(v.to_dict()) for v in
                self._cinderclient(ctxt).volumes.list(detailed=True)]

    @translate()
    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None, image_id=None):
        """Create a volume (os-volumes proxy, and a server's boot or blank
        volume at build); returns it as ``get`` does.

        :param image_id: the image to write into it (Cinder's imageRef).
        :raises InvalidInput: Cinder refused the request (400).
        """
        volume = self._cinderclient(ctxt).volumes.create(
            size, snapshot_id=snapshot_id, name=name,
            description=description, volume_type=volume_type,
            availability_zone=availability_zone, metadata=metadata or {},
            imageRef=image_id)
        return _untranslate_volume(volume.to_dict())

    @translate(not_found=volume_not_found)
    def reimage_volume(self, ctxt, volume_id, image_id,
                       reimage_reserved=False):
        """Cinder writes ``image_id`` over the volume (``os-reimage``,
        3.68); it answers at once and tells Nova with a
        ``volume-reimaged`` event when done (nova's ``reimage_volume``).

        :param reimage_reserved: the volume may be ``reserved`` (a
            rebuild holds it with a connector-less attachment).
        :raises VolumeNotFound:
        :raises InvalidInput: Cinder refused (wrong status, image...).
        """
        client = self._cinderclient(ctxt, version=REIMAGE_MICROVERSION)
        client.volumes.reimage(volume_id, image_id,
                               reimage_reserved=reimage_reserved)

    def check_attached(self, ctxt, volume):
        """:raises InvalidVolume: the volume is not in-use."""
        if volume["status"] != "in-use":
            raise exception.InvalidVolume(
                reason="volume '%s' status must be 'in-use'. Currently in "
                       "'%s' status" % (volume["id"], volume["status"]))

    @translate(not_found=volume_not_found)
    def delete(self, ctxt, volume_id):
        """Delete the volume (used for delete_on_termination)."""
        self._cinderclient(ctxt).volumes.delete(volume_id)

    # -- the 3.44 attachment handshake ----------------------------------------

    @translate(not_found=volume_not_found)
    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mountpoint=None):
        """Reserve the volume for the instance (no connector: not wired).

        :returns: the attachment dict (``id`` is the attachment id).
        :raises VolumeNotFound:
        :raises InvalidInput: Cinder refused (volume not available...).
        """
        if connector is not None and mountpoint:
            connector = dict(connector, mountpoint=mountpoint)
        return dict(self._cinderclient(ctxt).attachments.create(
            volume_id, connector, instance_uuid))

    @translate(not_found=attachment_not_found)
    def attachment_get(self, ctxt, attachment_id):
        """:raises VolumeAttachmentNotFound:"""
        attachment = self._cinderclient(ctxt).attachments.show(attachment_id)
        return _attachment_dict(attachment.to_dict())

    @translate()
    def attachment_list(self, ctxt, instance_id=None, volume_id=None):
        """Live attachments (every project), filtered; the reconciler's
        view of Cinder's ledger.

        :returns: list of ``{"id", "volume_id", "instance", "status",
            "attached_at"}`` dicts (Cinder's attachment summary).
        """
        search = {"all_tenants": 1}
        if instance_id:
            search["instance_id"] = instance_id
        if volume_id:
            search["volume_id"] = volume_id
        return [a.to_dict() for a in
                self._cinderclient(ctxt).attachments.list(search_opts=search)]

    @translate(not_found=attachment_not_found)
    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        """Send the host connector; Cinder exports and returns wiring.

        :returns: the attachment dict, with ``connection_info``.
        :raises VolumeAttachmentNotFound:
        """
        connector = dict(connector or {})
        if mountpoint:
            connector["mountpoint"] = mountpoint
        attachments = self._cinderclient(ctxt).attachments
        attachment = self._retry(attachments.update, attachment_id, connector)
        return _attachment_dict(attachment.to_dict())

    @translate(not_found=attachment_not_found)
    def attachment_complete(self, ctxt, attachment_id):
        """Mark the attachment attached; the volume becomes in-use."""
        self._cinderclient(ctxt).attachments.complete(attachment_id)

    @translate(not_found=attachment_not_found)
    def attachment_delete(self, ctxt, attachment_id):
        """Delete the attachment; Cinder recomputes the volume status.

        :raises VolumeAttachmentNotFound: callers that only want it gone
            treat this as done.
        """
        attachments = self._cinderclient(ctxt).attachments
        self._retry(attachments.delete, attachment_id)

    # -- volume actions (detach bookkeeping and the legacy flow) --------------

    @translate(not_found=volume_not_found)
    def begin_detaching(self, ctxt, volume_id):
        """in-use -> detaching. :raises InvalidInput: not in-use/attached."""
        self._cinderclient(ctxt).volumes.begin_detaching(volume_id)

    @translate(not_found=volume_not_found)
    def roll_detaching(self, ctxt, volume_id):
        """detaching -> in-use (the detach failed on the host)."""
        self._cinderclient(ctxt).volumes.roll_detaching(volume_id)

    @translate(not_found=volume_not_found)
    def reset_status(self, ctxt, volume_id, status, attach_status=None):
        """os-reset_status (admin): the reconciler's repair of a volume
        whose status claims an attachment Cinder no longer has."""
        self._cinderclient(ctxt).volumes.reset_state(
            volume_id, status, attach_status=attach_status)

    @translate(not_found=volume_not_found)
    def reserve_volume(self, ctxt, volume_id):
        """Legacy: available -> attaching."""
        self._cinderclient(ctxt).volumes.reserve(volume_id)

    @translate(not_found=volume_not_found)
    def unreserve_volume(self, ctxt, volume_id):
        """Legacy: attaching -> available (undo of reserve_volume)."""
        self._cinderclient(ctxt).volumes.unreserve(volume_id)

    @translate(not_found=volume_not_found)
    def initialize_connection(self, ctxt, volume_id, connector):
        """Legacy: export to ``connector``; returns connection_info."""
        return dict(self._cinderclient(ctxt).volumes.initialize_connection(
            volume_id, connector))

    @translate(not_found=volume_not_found)
    def terminate_connection(self, ctxt, volume_id, connector):
        """Legacy: withdraw the export from ``connector``."""
        self._cinderclient(ctxt).volumes.terminate_connection(volume_id,
                                                             connector)

    @translate(not_found=volume_not_found)
    def attach(self, ctxt, volume_id, instance_uuid, mountpoint, mode="rw"):
        """Legacy os-attach: record the attachment; volume -> in-use."""
        self._cinderclient(ctxt).volumes.attach(volume_id, instance_uuid,
                                               mountpoint, mode=mode)

    @translate(not_found=volume_not_found)
    def detach(self, ctxt, volume_id, instance_uuid=None,
               attachment_id=None):
        """Legacy os-detach of the instance's attachment.

        Without ``attachment_id`` the instance's attachment is looked up
        on the volume, as nova does for multiattached volumes.
        """
        client = self._cinderclient(ctxt)
        if attachment_id is None and instance_uuid is not None:
            volume = _untranslate_volume(client.volumes.get(volume_id)
                                         .to_dict())
            att = volume["attachments"].get(instance_uuid)
            attachment_id = att["attachment_id"] if att else None
        client.volumes.detach(volume_id, attachment_id)
