"""What tempest's base classes do, as functions over the raw clients.

Every create registers its undo on the ``cleanup`` stack it is given right
away, so a failing test still leaves nothing behind; attach registers the
detach and the waits that follow it in tempest's LIFO order.
"""

import uuid

from tests.tempest_style import waiters

RUN = uuid.uuid4().hex[:8]


def rand_name(prefix):
    """A name unique to this run (several runs may share a cloud)."""
    return "tempest-%s-%s-%s" % (RUN, prefix, uuid.uuid4().hex[:6])


def leftovers(cloud):
    """Servers and volumes of this run that still exist."""
    prefix = "tempest-%s-" % RUN
    servers = cloud.compute.request("GET", "/servers", expected=200)[2][
        "servers"]
    volumes = cloud.volumes.request("GET", "/volumes", expected=200)[2][
        "volumes"]
    return ["server %s (%s)" % (s["id"], s["name"]) for s in servers
            if s["name"].startswith(prefix)] + [
        "volume %s (%s)" % (v["id"], v["name"]) for v in volumes
        if (v.get("name") or "").startswith(prefix)]


class Cloud:
    """The clients, the config and the tempest-like helpers over them."""

    def __init__(self, conf, compute, volumes, admin_compute, admin_volumes):
        self.conf = conf
        self.compute = compute
        self.volumes = volumes
        self.admin_compute = admin_compute
        self.admin_volumes = admin_volumes

    def _timeouts(self):
        return {"timeout": self.conf.build_timeout,
                "interval": self.conf.build_interval}

    # -- servers ---------------------------------------------------------

    def create_server(self, cleanup, wait=True, name="server"):
        server = self.compute.create_server(
            rand_name(name), self.conf.image_ref, self.conf.flavor_ref)
        cleanup.add(self.delete_server, server["id"])
        if wait:
            waiters.wait_for_server_status(self.compute, server["id"],
                                           "ACTIVE", **self._timeouts())
        return server

    def delete_server(self, server_id):
        self.compute.delete_server(server_id)
        waiters.wait_for_server_deleted(self.compute, server_id,
                                        **self._timeouts())

    def stop_server(self, server_id):
        self.compute.server_action(server_id, "os-stop")
        waiters.wait_for_server_status(self.compute, server_id, "SHUTOFF",
                                       **self._timeouts())

    def start_server(self, server_id):
        self.compute.server_action(server_id, "os-start")
        waiters.wait_for_server_status(self.compute, server_id, "ACTIVE",
                                       **self._timeouts())

    # -- volumes ---------------------------------------------------------

    def create_volume(self, cleanup, client=None, wait=True, **kwargs):
        """A volume of ``[volume] volume_size``, ``available``."""
        client = client or self.volumes
        kwargs.setdefault("size", self.conf.volume_size)
        kwargs.setdefault("name", rand_name("volume"))
        volume = client.create_volume(**kwargs)
        cleanup.add(self.delete_volume, volume["id"])
        if wait:
            waiters.wait_for_volume_status(client, volume["id"],
                                           "available", **self._timeouts())
        return volume

    def delete_volume(self, volume_id):
        """Delete and wait; a volume a failed test left attached is freed
        first (as admin, through the attachments API), so one failure
        does not leak LVs into the next run."""
        code, _, body = self.admin_volumes.request(
            "GET", "/volumes/%s" % volume_id)
        if code == 404:
            return
        if body["volume"]["attachments"] or \
                body["volume"]["status"] != "available":
            self._free_volume(volume_id, body["volume"]["attachments"])
        self.admin_volumes.delete_volume(volume_id)
        waiters.wait_for_volume_deleted(self.admin_volumes, volume_id,
                                        **self._timeouts())

    def _free_volume(self, volume_id, attachments):
        """Last resort of a cleanup, as admin: detach through the compute
        API (the only way Cinder allows for a server's attachment, since
        OSSA-2023-003), then delete what is left through the attachments
        API (3.27) and reset the volume to available."""
        for att in attachments:
            if not att.get("server_id"):
                continue
            code, headers, _ = self.admin_compute.request(
                "DELETE", "/servers/%s/os-volume_attachments/%s" % (
                    att["server_id"], volume_id))
            if code == 202:
                waiters.wait_for_volume_detach(
                    self.admin_compute, att["server_id"], volume_id,
                    headers["x-openstack-request-id"], **self._timeouts())
        code, _, body = self.admin_volumes.request(
            "GET", "/attachments?volume_id=%s&all_tenants=1" % volume_id,
            microversion="3.27")
        for att in body["attachments"] if code == 200 else []:
            self.admin_volumes.request(
                "DELETE", "/attachments/%s" % att["id"], microversion="3.27")
        status = self.admin_volumes.show_volume(volume_id)["volume"][
            "status"]
        if status != "available":
            self.admin_volumes.reset_volume_status(
                volume_id, status="available", attach_status="detached",
                expected=(202, 400, 404))

    def create_multiattach_type(self, cleanup):
        """A volume type with ``multiattach="<is> True"``, made as admin."""
        vtype = self.admin_volumes.create_volume_type(
            rand_name("multiattach"), {"multiattach": "<is> True"})
        cleanup.add(self.admin_volumes.delete_volume_type, vtype["id"])
        return vtype

    # -- attachments -----------------------------------------------------

    def attach_volume(self, cleanup, server_id, volume_id,
                      microversion=None, multiattach=False, **kwargs):
        """POST the attachment and wait as tempest's base.attach_volume.

        Cleanups (LIFO): detach if still ``in-use``, wait until the compute
        API no longer lists it, wait for the volume to settle.
        """
        attachment = self.compute.attach_volume(
            server_id, volume_id, microversion=microversion,
            **kwargs)["volumeAttachment"]
        cleanup.add(self._settle_after_detach, volume_id, multiattach)
        cleanup.add(waiters.wait_for_volume_attachment_remove_from_server,
                    self.compute, server_id, volume_id, **self._timeouts())
        cleanup.add(self._detach_if_attached, server_id, volume_id)
        waiters.wait_for_volume_attachment_create(
            self.volumes, volume_id, server_id, **self._timeouts())
        if not multiattach:
            waiters.wait_for_volume_status(self.volumes, volume_id,
                                           "in-use", **self._timeouts())
        return attachment

    def _detach_if_attached(self, server_id, volume_id):
        """Tempest's _detach_volume: DELETE only while the server still
        lists the volume (else the compute API answers 404)."""
        code, _, _ = self.compute.request(
            "GET", "/servers/%s/os-volume_attachments/%s" % (server_id,
                                                             volume_id))
        if code == 200:
            _, headers, _ = self.compute.detach_volume(
                server_id, volume_id, expected=(202, 404))
            if "x-openstack-request-id" in headers:
                waiters.wait_for_volume_detach(
                    self.compute, server_id, volume_id,
                    headers["x-openstack-request-id"], **self._timeouts())

    def _settle_after_detach(self, volume_id, multiattach=False):
        """``available``; for a multiattach volume ``in-use`` also counts
        while another server still holds an attachment."""
        def get():
            code, _, body = self.volumes.request("GET", "/volumes/%s"
                                                 % volume_id)
            if code == 404:
                return "deleted", 0
            return body["volume"]["status"], len(
                body["volume"]["attachments"])
        waiters.wait_for(
            "volume %s to settle after a detach" % volume_id, get,
            lambda v: v[0] in ("available", "deleted") or (
                multiattach and v[0] == "in-use" and v[1] > 0),
            lambda v: v[0].startswith("error"), **self._timeouts())

    def detach_volume(self, server_id, volume_id, status="available"):
        """DELETE the attachment and wait for the volume's ``status``."""
        _, headers, _ = self.compute.detach_volume(server_id, volume_id)
        waiters.wait_for_volume_detach(
            self.compute, server_id, volume_id,
            headers["x-openstack-request-id"], **self._timeouts())
        waiters.wait_for_volume_status(self.volumes, volume_id, status,
                                       **self._timeouts())
