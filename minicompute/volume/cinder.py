"""The one module that talks to Cinder (minicinder), as nova/volume/cinder.py.

Every call is one or two Cinder v3 REST requests at microversion 3.44
(the first with ``attachment_complete``), sent by ``cinder_http`` on
kept-alive ``http.client`` connections to ``[cinder] endpoint_template``
for the caller's project. The requests are those python-cinderclient
9.10.0 sent at 3.44 (URLs, methods, bodies, headers), without its cost
(about 1 ms of client CPU per call through cinderclient, keystoneauth and
requests). The caller's identity travels as ``[cinder] auth_strategy``
says (``cinder_auth``: with ``keystone``, the caller's token plus nova's
service token, so Cinder knows the call comes from Nova; OSSA-2023-003;
with ``noauth``, the headers minicinder reads). The request id travels
in ``X-OpenStack-Request-ID`` so one request can be followed through
the logs of all three daemons.

Errors are translated once, by ``cinder_errors``: the transport's and
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

import time
from urllib import parse as urlparse

from oslo_log import log as logging

from minicompute import conf as compute_conf
from minicompute import exception
from minicompute.volume import cinder_auth
from minicompute.volume import cinder_http
from minicompute.volume.cinder_errors import (
    _CLIENT_ERRORS, _attachment_not_found, _retriable, _translate,
    _volume_not_found)

LOG = logging.getLogger(__name__)

# attachment_complete appeared in 3.44; every call is made at this version.
MICROVERSION = "3.44"
_VERSION_HEADERS = dict(cinder_http.BASE_HEADERS, **{
    "OpenStack-API-Version": "volume " + MICROVERSION})


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


class API:
    """Cinder calls on behalf of a request context.

    :param conf: a ConfigOpts; ``[cinder]`` is registered if needed.
    :param sleep: how to wait between retries (tests pass a no-op).
    """

    def __init__(self, conf, sleep=time.sleep):
        compute_conf.register_cinder_opts(conf)
        self.conf = conf
        self._sleep = sleep
        self._http = cinder_http.Transport()
        self._identity = cinder_auth.Identity(conf)

    # -- plumbing ------------------------------------------------------------

    def _client(self, ctxt):
        """A ``cinder_http.Client`` for ``ctxt``: its project's endpoint,
        identity headers, request id."""
        opts = self.conf.cinder
        url, identity, reauth = self._identity.of(ctxt)
        headers = dict(_VERSION_HEADERS, **identity)
        request_id = ctxt.global_request_id or ctxt.request_id
        if request_id is not None:
            headers["X-OpenStack-Request-ID"] = request_id
        return cinder_http.Client(self._http, url, headers,
                                  opts.http_timeout, reauth=reauth)

    def _retry(self, func, *args):
        """Run ``func`` retrying 5xx and connect errors (idempotent calls)."""
        attempts = self.conf.cinder.http_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return func(*args)
            except _CLIENT_ERRORS as exc:
                if attempt == attempts or not _retriable(exc):
                    raise
                LOG.warning("Cinder call %s failed (%s), retry %d of %d",
                            getattr(func, "__name__", func), exc, attempt,
                            attempts - 1)
                self._sleep(min(2 ** attempt, 10))

    def _action(self, ctxt, volume_id, action, info=None, client=None):
        """POST ``{action: info}`` to the volume's ``/action``; Cinder's
        answer (None for an empty one)."""
        client = client or self._client(ctxt)
        return client.post("/volumes/%s/action" % volume_id, {action: info})

    # -- volumes -------------------------------------------------------------

    @_translate(not_found=_volume_not_found)
    def get(self, ctxt, volume_id):
        """The volume as a dict; ``attachments`` keyed by instance uuid.

        :raises VolumeNotFound:
        """
        volume = self._client(ctxt).get("/volumes/%s" % volume_id)
        return _untranslate_volume(volume["volume"])

    @_translate()
    def get_all(self, ctxt):
        """The caller's volumes (detailed), oldest last as Cinder lists.

        For nova's os-volumes proxy (``GET /os-volumes``, up to 2.35).
        """
        return [_untranslate_volume(v) for v in
                self._client(ctxt).list("/volumes/detail", "volumes")]

    @_translate()
    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None):
        """Create a volume (os-volumes proxy); returns it as ``get`` does.

        :raises InvalidInput: Cinder refused the request (400).
        """
        # Every key cinderclient sent, the unused ones as null.
        body = {"volume": {
            "size": size, "consistencygroup_id": None,
            "snapshot_id": snapshot_id, "name": name,
            "description": description, "volume_type": volume_type,
            "availability_zone": availability_zone,
            "metadata": metadata or {}, "imageRef": None,
            "source_volid": None, "backup_id": None}}
        volume = self._client(ctxt).post("/volumes", body)
        return _untranslate_volume(volume["volume"])

    def check_attached(self, ctxt, volume):
        """:raises InvalidVolume: the volume is not in-use."""
        if volume["status"] != "in-use":
            raise exception.InvalidVolume(
                reason="volume '%s' status must be 'in-use'. Currently in "
                       "'%s' status" % (volume["id"], volume["status"]))

    @_translate(not_found=_volume_not_found)
    def delete(self, ctxt, volume_id):
        """Delete the volume (used for delete_on_termination)."""
        self._client(ctxt).delete("/volumes/%s" % volume_id)

    # -- the 3.44 attachment handshake ----------------------------------------

    @_translate(not_found=_volume_not_found)
    def attachment_create(self, ctxt, volume_id, instance_uuid,
                          connector=None, mountpoint=None):
        """Reserve the volume for the instance (no connector: not wired).

        :returns: the attachment dict (``id`` is the attachment id).
        :raises VolumeNotFound:
        :raises InvalidInput: Cinder refused (volume not available...).
        """
        if connector is not None and mountpoint:
            connector = dict(connector, mountpoint=mountpoint)
        body = {"volume_uuid": volume_id, "connector": connector}
        if instance_uuid:
            body["instance_uuid"] = instance_uuid
        return self._client(ctxt).post(
            "/attachments", {"attachment": body})["attachment"]

    @_translate(not_found=_attachment_not_found)
    def attachment_get(self, ctxt, attachment_id):
        """:raises VolumeAttachmentNotFound:"""
        return _attachment_dict(self._client(ctxt).get(
            "/attachments/%s" % attachment_id)["attachment"])

    @_translate()
    def attachment_list(self, ctxt, instance_id=None, volume_id=None):
        """Live attachments (every project), filtered; the reconciler's
        view of Cinder's ledger.

        :returns: list of ``{"id", "volume_id", "instance", "status",
            "attached_at"}`` dicts (Cinder's attachment summary).
        """
        query = {"all_tenants": 1}
        if instance_id:
            query["instance_id"] = instance_id
        if volume_id:
            query["volume_id"] = volume_id
        url = "/attachments?" + urlparse.urlencode(sorted(query.items()))
        return self._client(ctxt).list(url, "attachments")

    @_translate(not_found=_attachment_not_found)
    def attachment_update(self, ctxt, attachment_id, connector,
                          mountpoint=None):
        """Send the host connector; Cinder exports and returns wiring.

        :returns: the attachment dict, with ``connection_info``.
        :raises VolumeAttachmentNotFound:
        """
        connector = dict(connector or {})
        if mountpoint:
            connector["mountpoint"] = mountpoint
        client = self._client(ctxt)
        answer = self._retry(client.put, "/attachments/%s" % attachment_id,
                             {"attachment": {"connector": connector}})
        return _attachment_dict(answer["attachment"])

    @_translate(not_found=_attachment_not_found)
    def attachment_complete(self, ctxt, attachment_id):
        """Mark the attachment attached; the volume becomes in-use."""
        self._client(ctxt).post("/attachments/%s/action" % attachment_id,
                                {"os-complete": None})

    @_translate(not_found=_attachment_not_found)
    def attachment_delete(self, ctxt, attachment_id):
        """Delete the attachment; Cinder recomputes the volume status.

        :raises VolumeAttachmentNotFound: callers that only want it gone
            treat this as done.
        """
        client = self._client(ctxt)
        self._retry(client.delete, "/attachments/%s" % attachment_id)

    # -- volume actions (detach bookkeeping and the legacy flow) --------------

    @_translate(not_found=_volume_not_found)
    def begin_detaching(self, ctxt, volume_id):
        """in-use -> detaching. :raises InvalidInput: not in-use/attached."""
        self._action(ctxt, volume_id, "os-begin_detaching")

    @_translate(not_found=_volume_not_found)
    def roll_detaching(self, ctxt, volume_id):
        """detaching -> in-use (the detach failed on the host)."""
        self._action(ctxt, volume_id, "os-roll_detaching")

    @_translate(not_found=_volume_not_found)
    def reset_status(self, ctxt, volume_id, status, attach_status=None):
        """os-reset_status (admin): the reconciler's repair of a volume
        whose status claims an attachment Cinder no longer has."""
        info = {"status": status} if status else {}
        if attach_status:
            info["attach_status"] = attach_status
        self._action(ctxt, volume_id, "os-reset_status", info)

    @_translate(not_found=_volume_not_found)
    def reserve_volume(self, ctxt, volume_id):
        """Legacy: available -> attaching."""
        self._action(ctxt, volume_id, "os-reserve")

    @_translate(not_found=_volume_not_found)
    def unreserve_volume(self, ctxt, volume_id):
        """Legacy: attaching -> available (undo of reserve_volume)."""
        self._action(ctxt, volume_id, "os-unreserve")

    @_translate(not_found=_volume_not_found)
    def initialize_connection(self, ctxt, volume_id, connector):
        """Legacy: export to ``connector``; returns connection_info."""
        return self._action(ctxt, volume_id, "os-initialize_connection",
                            {"connector": connector})["connection_info"]

    @_translate(not_found=_volume_not_found)
    def terminate_connection(self, ctxt, volume_id, connector):
        """Legacy: withdraw the export from ``connector``."""
        self._action(ctxt, volume_id, "os-terminate_connection",
                     {"connector": connector})

    @_translate(not_found=_volume_not_found)
    def attach(self, ctxt, volume_id, instance_uuid, mountpoint, mode="rw"):
        """Legacy os-attach: record the attachment; volume -> in-use."""
        info = {"mountpoint": mountpoint, "mode": mode}
        if instance_uuid is not None:
            info["instance_uuid"] = instance_uuid
        self._action(ctxt, volume_id, "os-attach", info)

    @_translate(not_found=_volume_not_found)
    def detach(self, ctxt, volume_id, instance_uuid=None,
               attachment_id=None):
        """Legacy os-detach of the instance's attachment.

        Without ``attachment_id`` the instance's attachment is looked up
        on the volume, as nova does for multiattached volumes.
        """
        client = self._client(ctxt)
        if attachment_id is None and instance_uuid is not None:
            volume = _untranslate_volume(
                client.get("/volumes/%s" % volume_id)["volume"])
            att = volume["attachments"].get(instance_uuid)
            attachment_id = att["attachment_id"] if att else None
        self._action(ctxt, volume_id, "os-detach",
                     {"attachment_id": attachment_id}, client=client)
