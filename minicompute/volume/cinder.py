"""The one module that talks to Cinder (minicinder), as nova/volume/cinder.py.

Every call goes through python-cinderclient at microversion 3.44 (the first
with ``attachment_complete``), on a keystoneauth session pointed straight
at ``[cinder] endpoint_template`` for the caller's project. The caller's
identity travels as ``[cinder] auth_strategy`` says: with ``keystone``,
the caller's token plus nova's service token (``X-Service-Token``, so
Cinder knows the call comes from Nova; OSSA-2023-003); with ``noauth``,
the headers minicinder reads (``X-Auth-Token: user:project``, ``X-User-Id``,
``X-Project-Id``, ``X-Roles``). The request id travels in
``X-OpenStack-Request-ID`` so one request can be followed through the logs
of all three daemons.

Errors are translated once, by ``cinder_errors``: cinderclient and
keystoneauth exceptions never leave this module. 404s become the "not
found" of the thing asked about (VolumeNotFound,
VolumeAttachmentNotFound), 400 becomes InvalidInput (nova's API turns
that into InvalidVolume where upstream does), 403/409 keep their meaning,
and an unreachable Cinder is CinderConnectionFailed.

Results are plain dicts. ``get`` reshapes the volume like nova's
``_untranslate_volume_summary_view``: ``attachments`` is a dict keyed by
instance uuid (``{uuid: {"attachment_id", "mountpoint"}}``), because that
is how every caller looks attachments up.
"""

import os
import time

import requests
from cinderclient import api_versions
from cinderclient import client as cinder_client
from keystoneauth1 import plugin as ks_plugin
from oslo_log import log as logging

from minicompute import conf as compute_conf
from minicompute import exception
from minicompute.volume import cinder_spans
from minicompute.volume.cinder_errors import (
    _CLIENT_ERRORS, _attachment_not_found, _retriable, _translate,
    _volume_not_found)

LOG = logging.getLogger(__name__)

# attachment_complete appeared in 3.44; every call is made at this version.
MICROVERSION = "3.44"
#: Kept-alive connections to Cinder per host: the RPC executor's default
#: thread count (a call beyond it opens a connection that is not kept).
HTTP_POOL_SIZE = 64


def http_session():
    """One ``requests.Session`` for every Cinder call of the process, so
    connections are kept alive and reused, as upstream nova keeps one
    keystoneauth session (``nova/volume/cinder.py`` ``_SESSION``). A new
    one per call opened a TCP connection per call and kept its socket
    until the garbage collector found it (issue 16)."""
    http = _HttpSession()
    adapter = requests.adapters.HTTPAdapter(pool_maxsize=HTTP_POOL_SIZE)
    http.mount("http://", adapter)
    http.mount("https://", adapter)
    return http


class _HttpSession(requests.Session):
    """requests' Session that reads the process environment once.

    requests looks at the environment on every request (every proxy
    variable, through ``urllib.request.getproxies_environment``, the CA
    bundle variables, and ``~/.netrc`` on disk): a quarter to a third of
    what a Cinder call cost in requests (issue 16). A daemon's
    environment does not change while it runs, so it is read here, once.
    With a proxy variable or a netrc file, requests' own handling stays
    on (``trust_env``); without, ``trust_env`` is off and the merge below
    gives what requests' would: no proxies and no netrc credentials from
    the environment, ``REQUESTS_CA_BUNDLE`` or ``CURL_CA_BUNDLE`` for a
    request that verifies with the default bundle. (A netrc file created
    after start-up is read from the next restart on.)
    """

    def __init__(self, environ=None):
        super().__init__()
        environ = os.environ if environ is None else environ
        self._env_ca_bundle = (environ.get("REQUESTS_CA_BUNDLE")
                               or environ.get("CURL_CA_BUNDLE"))
        self.trust_env = _environment_matters(environ)

    def merge_environment_settings(self, url, proxies, stream, verify,
                                   cert):
        if self.trust_env:
            return super().merge_environment_settings(url, proxies, stream,
                                                      verify, cert)
        if verify is True or verify is None:
            verify = self._env_ca_bundle or verify
        merge = requests.sessions.merge_setting
        return {"proxies": merge(proxies, self.proxies),
                "stream": merge(stream, self.stream),
                "verify": merge(verify, self.verify),
                "cert": merge(cert, self.cert)}


def _environment_matters(environ):
    """Whether requests would take proxies or credentials from the
    environment: a ``*_proxy`` variable, or a netrc file (``NETRC``,
    else ``~/.netrc`` or ``~/_netrc``, as ``requests.utils``)."""
    if any(key.lower().endswith("_proxy") for key in environ):
        return True
    if environ.get("NETRC"):
        return True
    return any(os.path.exists(os.path.expanduser("~/" + name))
               for name in requests.utils.NETRC_FILES)


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
    data = attachment.to_dict() if hasattr(attachment, "to_dict") \
        else dict(attachment)
    data.pop("manager", None)
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


class _NoAuthPlugin(ks_plugin.BaseAuthPlugin):
    """Identity headers of a noauth deployment, on every request.

    minicinder's ContextMiddleware builds the caller's context from these
    (as cinderclient's own ``noauth`` plugin sends them); with an identity
    service this becomes a token plugin and nothing else changes.
    """

    def __init__(self, headers, endpoint):
        super().__init__()
        self._headers = headers
        self._endpoint = endpoint

    def get_headers(self, session, **kwargs):
        return dict(self._headers)

    def get_endpoint(self, session, **kwargs):
        return self._endpoint


class API:
    """Cinder calls on behalf of a request context.

    :param conf: a ConfigOpts; ``[cinder]`` is registered if needed.
    :param sleep: how to wait between retries (tests pass a no-op).
    """

    def __init__(self, conf, sleep=time.sleep):
        compute_conf.register_cinder_opts(conf)
        self.conf = conf
        self._sleep = sleep
        self._http = http_session()

    # -- plumbing ------------------------------------------------------------

    def _client(self, ctxt):
        project = ctxt.project_id or "admin"
        if self.conf.cinder.auth_strategy == "keystone":
            return self._keystone_client(ctxt)
        url = self.conf.cinder.endpoint_template % {"project_id": project}
        headers = {
            "X-Auth-Token": "%s:%s" % (ctxt.user_id or "nova", project),
            "X-User-Id": ctxt.user_id or "nova",
            "X-Project-Id": project,
            "X-Roles": ",".join(ctxt.roles or []),
            "X-Service-Token": "nova",   # Nova's call, not the user's
        }
        session = cinder_spans.Session(auth=_NoAuthPlugin(headers, url),
                                     session=self._http,
                                     timeout=self.conf.cinder.http_timeout)
        return cinder_client.Client(
            api_versions.APIVersion(MICROVERSION), session=session,
            endpoint_override=url,
            global_request_id=ctxt.global_request_id or ctxt.request_id)

    def _keystone_client(self, ctxt):
        """A client with the caller's token and nova's service token.

        Work the host starts itself (reconciliation, start-up recovery)
        has no user token: it runs as the service account alone, in the
        service account's project.
        """
        from ministack.identity import client as identity_client
        if ctxt.auth_token:
            url = self.conf.cinder.endpoint_template % {
                "project_id": ctxt.project_id}
            auth = identity_client.get_auth_plugin(self.conf, ctxt, url)
        else:
            auth = identity_client.service_auth_plugin(self.conf)
            url = None
        session = cinder_spans.Session(auth=auth, session=self._http,
                                     timeout=self.conf.cinder.http_timeout)
        if url is None:
            url = self.conf.cinder.endpoint_template % {
                "project_id": session.get_project_id()}
        return cinder_client.Client(
            api_versions.APIVersion(MICROVERSION), session=session,
            endpoint_override=url,
            global_request_id=ctxt.global_request_id or ctxt.request_id)

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

    # -- volumes -------------------------------------------------------------

    @_translate(not_found=_volume_not_found)
    def get(self, ctxt, volume_id):
        """The volume as a dict; ``attachments`` keyed by instance uuid.

        :raises VolumeNotFound:
        """
        volume = self._client(ctxt).volumes.get(volume_id)
        return _untranslate_volume(volume.to_dict())

    @_translate()
    def get_all(self, ctxt):
        """The caller's volumes (detailed), oldest last as Cinder lists.

        For nova's os-volumes proxy (``GET /os-volumes``, up to 2.35).
        """
        return [_untranslate_volume(v.to_dict()) for v in
                self._client(ctxt).volumes.list(detailed=True)]

    @_translate()
    def create(self, ctxt, size, name=None, description=None,
               volume_type=None, metadata=None, availability_zone=None,
               snapshot_id=None):
        """Create a volume (os-volumes proxy); returns it as ``get`` does.

        :raises InvalidInput: Cinder refused the request (400).
        """
        volume = self._client(ctxt).volumes.create(
            size, name=name, description=description,
            volume_type=volume_type, metadata=metadata or {},
            availability_zone=availability_zone, snapshot_id=snapshot_id)
        return _untranslate_volume(volume.to_dict())

    def check_attached(self, ctxt, volume):
        """:raises InvalidVolume: the volume is not in-use."""
        if volume["status"] != "in-use":
            raise exception.InvalidVolume(
                reason="volume '%s' status must be 'in-use'. Currently in "
                       "'%s' status" % (volume["id"], volume["status"]))

    @_translate(not_found=_volume_not_found)
    def delete(self, ctxt, volume_id):
        """Delete the volume (used for delete_on_termination)."""
        self._client(ctxt).volumes.delete(volume_id)

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
        return dict(self._client(ctxt).attachments.create(
            volume_id, connector, instance_uuid))

    @_translate(not_found=_attachment_not_found)
    def attachment_get(self, ctxt, attachment_id):
        """:raises VolumeAttachmentNotFound:"""
        return _attachment_dict(
            self._client(ctxt).attachments.show(attachment_id))

    @_translate()
    def attachment_list(self, ctxt, instance_id=None, volume_id=None):
        """Live attachments (every project), filtered; the reconciler's
        view of Cinder's ledger.

        :returns: list of ``{"id", "volume_id", "instance", "status",
            "attached_at"}`` dicts (Cinder's attachment summary).
        """
        opts = {"all_tenants": 1}
        if instance_id:
            opts["instance_id"] = instance_id
        if volume_id:
            opts["volume_id"] = volume_id
        return [dict(a.to_dict()) for a in
                self._client(ctxt).attachments.list(search_opts=opts)]

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
        return _attachment_dict(self._retry(
            client.attachments.update, attachment_id, connector))

    @_translate(not_found=_attachment_not_found)
    def attachment_complete(self, ctxt, attachment_id):
        """Mark the attachment attached; the volume becomes in-use."""
        self._client(ctxt).attachments.complete(attachment_id)

    @_translate(not_found=_attachment_not_found)
    def attachment_delete(self, ctxt, attachment_id):
        """Delete the attachment; Cinder recomputes the volume status.

        :raises VolumeAttachmentNotFound: callers that only want it gone
            treat this as done.
        """
        client = self._client(ctxt)
        self._retry(client.attachments.delete, attachment_id)

    # -- volume actions (detach bookkeeping and the legacy flow) --------------

    @_translate(not_found=_volume_not_found)
    def begin_detaching(self, ctxt, volume_id):
        """in-use -> detaching. :raises InvalidInput: not in-use/attached."""
        self._client(ctxt).volumes.begin_detaching(volume_id)

    @_translate(not_found=_volume_not_found)
    def roll_detaching(self, ctxt, volume_id):
        """detaching -> in-use (the detach failed on the host)."""
        self._client(ctxt).volumes.roll_detaching(volume_id)

    @_translate(not_found=_volume_not_found)
    def reset_status(self, ctxt, volume_id, status, attach_status=None):
        """os-reset_status (admin): the reconciler's repair of a volume
        whose status claims an attachment Cinder no longer has."""
        self._client(ctxt).volumes.reset_state(
            volume_id, status, attach_status=attach_status)

    @_translate(not_found=_volume_not_found)
    def reserve_volume(self, ctxt, volume_id):
        """Legacy: available -> attaching."""
        self._client(ctxt).volumes.reserve(volume_id)

    @_translate(not_found=_volume_not_found)
    def unreserve_volume(self, ctxt, volume_id):
        """Legacy: attaching -> available (undo of reserve_volume)."""
        self._client(ctxt).volumes.unreserve(volume_id)

    @_translate(not_found=_volume_not_found)
    def initialize_connection(self, ctxt, volume_id, connector):
        """Legacy: export to ``connector``; returns connection_info."""
        return dict(self._client(ctxt).volumes.initialize_connection(
            volume_id, connector))

    @_translate(not_found=_volume_not_found)
    def terminate_connection(self, ctxt, volume_id, connector):
        """Legacy: withdraw the export from ``connector``."""
        self._client(ctxt).volumes.terminate_connection(volume_id, connector)

    @_translate(not_found=_volume_not_found)
    def attach(self, ctxt, volume_id, instance_uuid, mountpoint, mode="rw"):
        """Legacy os-attach: record the attachment; volume -> in-use."""
        self._client(ctxt).volumes.attach(volume_id, instance_uuid,
                                          mountpoint, mode=mode)

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
                client.volumes.get(volume_id).to_dict())
            att = volume["attachments"].get(instance_uuid)
            attachment_id = att["attachment_id"] if att else None
        client.volumes.detach(volume_id, attachment_id)
