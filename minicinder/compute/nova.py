"""The one place minicinder talks to Nova's compute API.

Cinder asks Nova one question: *is this server using this volume through
this attachment?* Upstream's ``attachment_deletion_allowed`` (the fix for
OSSA-2023-003, bug 2004555) asks it before a user tears an attachment down,
because a detach behind Nova's back leaves the guest's host connection in
place and the LUN may then reach another tenant while the old guest still
reads it.

The answer is ``GET /servers/{server}/os-volume_attachments/{volume}`` at
compute microversion 2.89, the first that shows the Cinder
``attachment_id`` of the block device mapping. A 404 (no such server, or
no such volume on it) means Nova does not use the volume there. Any other
failure is raised as :class:`~minicinder.exception.ComputeAPIUnavailable`
so the caller can fail closed; requests' exceptions never leave this
module.

It also tells Nova two things: *this volume grew* (3.42's extend of an
in-use volume), with upstream's ``volume-extended`` server external event
(``POST /os-server-external-events`` at compute 2.51, the volume id as the
event's tag), and *this volume was re-imaged* (3.68's ``os-reimage`` of a
rebuild's root volume: ``volume-reimaged`` at compute 2.93); both sent
as a service: the cinder service account's token, also
as the service token (upstream sends it with its privileged ``[nova]``
credentials and its service token; nova's policy wants the ``service``
role or an admin).

Plain HTTP with ``requests``: one GET does not justify novaclient, and the
identity sent is a policy decision made here (see ``API._headers``).
"""

import logging
import urllib.parse

from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session
from osprofiler import web as osprofiler_web
import requests

from minicinder import exception
from ministack.identity import client as identity_client
from ministack.trace import naming
from ministack.trace.profiler import span

LOG = logging.getLogger(__name__)

# 2.89 added attachment_id (and bdm_uuid) to the attachment GET.
MICROVERSION = "2.89"
# 2.51 added the volume-extended event, 2.93 volume-reimaged.
EVENTS_MICROVERSION = "2.51"
REIMAGED_MICROVERSION = "2.93"


class API:
    """Nova's compute API at ``[nova] endpoint``.

    :param conf: ConfigOpts with minicinder's options registered.
    :param session: anything with requests' ``get`` (tests hand in a
        recorder); by default the ``requests`` module itself: a fresh
        connection per question, which is rare (user detaches only) and
        keeps the API threads from sharing a Session.
    """

    def __init__(self, conf, session=None):
        self.conf = conf
        self.endpoint = (conf.nova.endpoint or "").rstrip("/")
        self.timeout = conf.nova.timeout
        self.keystone = conf.auth_strategy == "keystone"
        self.session = session or requests

    @property
    def configured(self):
        """False when ``[nova] endpoint`` is empty: no Nova to ask."""
        return bool(self.endpoint)

    def _headers(self, ctxt):
        """Who asks Nova.

        With keystone the caller's own token goes on, as upstream's
        novaclient call does, so Nova applies its policy to the caller (an
        admin sees every server; a user sees their project's). With noauth
        there is no token to forward: ask as ``admin`` (miniapi's noauth
        reads ``X-Auth-Token: user:project`` and gives the user ``admin``
        the admin role) so Nova shows the server whatever its project and
        a 404 really means "not Nova's".
        """
        headers = {"OpenStack-API-Version": "compute %s" % MICROVERSION,
                   "X-OpenStack-Nova-API-Version": MICROVERSION,
                   "Accept": "application/json"}
        if self.keystone:
            headers["X-Auth-Token"] = ctxt.auth_token or ""
        else:
            headers["X-Auth-Token"] = "admin:%s" % (ctxt.project_id or
                                                    "admin")
        request_id = ctxt.global_request_id or ctxt.request_id
        if request_id:
            # Nova logs it as the global request id: one id across both.
            headers["X-OpenStack-Request-ID"] = request_id
        return headers

    def get_server_volume_attachment_id(self, ctxt, server_id, volume_id):
        """The Cinder attachment id through which Nova attached the volume.

        :returns: the id, or None when Nova answers 404 (it does not know
            the server, or the volume is not attached to it).
        :raises ComputeAPIUnavailable: not configured, unreachable, timed
            out, or any answer other than 200/404 (401, 406 for a Nova
            older than 2.89, 5xx, a body without ``attachment_id``).
        """
        if not self.configured:
            raise exception.ComputeAPIUnavailable(
                reason="[nova] endpoint is not set")
        url = "%s/servers/%s/os-volume_attachments/%s" % (
            self.endpoint, urllib.parse.quote(server_id, safe=""),
            urllib.parse.quote(volume_id, safe=""))
        try:
            resp = self.session.get(url, headers=self._headers(ctxt),
                                    timeout=self.timeout)
        except requests.RequestException as exc:
            raise exception.ComputeAPIUnavailable(
                reason="GET %s failed: %s" % (url, exc)) from exc
        if resp.status_code == 404:
            LOG.debug("Nova has no attachment of volume %s on server %s",
                      volume_id, server_id)
            return None
        if resp.status_code != 200:
            raise exception.ComputeAPIUnavailable(
                reason="GET %s answered %s: %s" % (
                    url, resp.status_code, resp.text[:200]))
        try:
            attachment_id = resp.json()["volumeAttachment"]["attachment_id"]
        except (ValueError, KeyError, TypeError) as exc:
            raise exception.ComputeAPIUnavailable(
                reason="GET %s: no volumeAttachment.attachment_id in the "
                       "answer (compute microversion %s needed)"
                       % (url, MICROVERSION)) from exc
        return attachment_id

    def _service_headers(self, ctxt, version=EVENTS_MICROVERSION):
        """Who tells Nova: the cinder service itself.

        With keystone, the ``[service_user]`` account's token (keystoneauth
        caches it), as the user token and as the service token; with
        noauth, the ``service`` and ``admin`` roles in ``X-Roles``.

        :raises ComputeAPIUnavailable: the account cannot authenticate.
        """
        headers = {"OpenStack-API-Version": "compute %s" % version,
                   "X-OpenStack-Nova-API-Version": version,
                   "Accept": "application/json"}
        if self.keystone:
            try:
                token = ks_session.Session(
                    auth=identity_client.service_auth_plugin(self.conf)
                ).get_token()
            except ks_exceptions.ClientException as exc:
                raise exception.ComputeAPIUnavailable(
                    reason="the [service_user] account could not "
                           "authenticate: %s" % exc) from exc
            headers["X-Auth-Token"] = headers["X-Service-Token"] = token
        else:
            headers["X-Auth-Token"] = "cinder:service"
            headers["X-Service-Token"] = "cinder"
            headers["X-Roles"] = "admin,service"
        request_id = ctxt and (ctxt.global_request_id or ctxt.request_id)
        if request_id:
            headers["X-OpenStack-Request-ID"] = request_id
        return headers

    def extend_volume(self, ctxt, server_ids, volume_id):
        """Tell Nova that ``volume_id`` grew under ``server_ids``.

        Nova answers 200 (every event accepted), 207 (some: each event
        carries its ``code``) or 404 (none of the servers is known).

        :returns: ``{server_id: code}`` of Nova's answer (404 for all of
            them on a 404).
        :raises ComputeAPIUnavailable: not configured, unreachable, the
            service account cannot authenticate, or another answer.
        """
        return self._events(ctxt, "volume-extended", server_ids, volume_id,
                            EVENTS_MICROVERSION)

    def reimage_volume(self, ctxt, server_ids, volume_id):
        """Tell Nova that ``volume_id`` was re-imaged for ``server_ids``
        (the rebuild waiting for it goes on), at compute 2.93; answers
        and errors as :meth:`extend_volume`."""
        return self._events(ctxt, "volume-reimaged", server_ids, volume_id,
                            REIMAGED_MICROVERSION)

    def _events(self, ctxt, name, server_ids, volume_id, version):
        if not self.configured:
            raise exception.ComputeAPIUnavailable(
                reason="[nova] endpoint is not set")
        url = "%s/os-server-external-events" % self.endpoint
        body = {"events": [{"name": name, "server_uuid": server,
                            "tag": volume_id} for server in server_ids]}
        headers = self._service_headers(ctxt, version)
        try:
            resp = self._post_traced(url, body, headers)
        except requests.RequestException as exc:
            raise exception.ComputeAPIUnavailable(
                reason="POST %s failed: %s" % (url, exc)) from exc
        if resp.status_code == 404:
            LOG.warning("Nova knows none of %s: %s of %s dropped",
                        ", ".join(server_ids), name, volume_id)
            return {server: 404 for server in server_ids}
        if resp.status_code not in (200, 207):
            raise exception.ComputeAPIUnavailable(
                reason="POST %s answered %s: %s" % (
                    url, resp.status_code, resp.text[:200]))
        try:
            codes = {event["server_uuid"]: event.get("code")
                     for event in resp.json()["events"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise exception.ComputeAPIUnavailable(
                reason="POST %s: no events in the answer" % url) from exc
        for server, code in codes.items():
            (LOG.info if code == 200 else LOG.warning)(
                "Nova answered %s to %s of %s on server %s",
                code, name, volume_id, server)
        return codes

    def _post_traced(self, url, body, headers):
        """The POST, as cinder-volume's REST hop to nova-api when the
        extend is traced: osprofiler's trace headers go with it, so
        nova-api's entry, its cast and the compute host's resize are the
        trace's next hops (``ministack-trace show``)."""
        path = urllib.parse.urlsplit(url).path
        with span("nova", "REST", naming.rest_name("POST", path),
                  actor="nova-api", details=lambda: {
                      "method": "POST", "path": path,
                      "side": "client"}) as sp:
            resp = self.session.post(
                url, json=body, timeout=self.timeout,
                headers=dict(headers, **osprofiler_web.get_trace_id_headers()))
            if sp.active:
                sp.set(status=resp.status_code,
                       nova_request_id=resp.headers.get(
                           "x-openstack-request-id"))
            return resp


def tell(compute, ctxt, event, server_ids, volume_id):
    """Send ``event`` (``volume-extended`` or ``volume-reimaged``) about
    ``volume_id`` to Nova for ``server_ids`` through ``compute`` (an
    :class:`API`, or None), logging instead of raising: the volume has
    changed whatever Nova answers, and Nova's failure is its own."""
    if not server_ids:
        return
    if compute is None or not compute.configured:
        LOG.warning("Volume %s: %s for %s not sent, there is no Nova to "
                    "tell ([nova] endpoint)", volume_id, event,
                    ", ".join(server_ids))
        return
    send = {"volume-extended": compute.extend_volume,
            "volume-reimaged": compute.reimage_volume}[event]
    try:
        send(ctxt, server_ids, volume_id)
    except exception.ComputeAPIUnavailable as exc:
        LOG.error("Could not tell Nova %s of volume %s: %s", event,
                  volume_id, exc.format_message())
