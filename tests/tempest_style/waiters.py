"""Waiters that fail fast on error states and say exactly what they saw:
tempest's, on the one poll of ``tests/support/waiting.py``."""

from tests.support.waiting import WaitTimeout  # noqa: F401 (for callers)
from tests.support.waiting import wait_for


def wait_for_volume_status(client, volume_id, status, timeout=300,
                           interval=0.5):
    """Wait for a volume's status; ``error*`` fails at once."""
    def get():
        return client.show_volume(volume_id)["volume"]["status"]
    return wait_for(
        "volume %s to become %s" % (volume_id, status), get,
        lambda s: s == status,
        lambda s: s.startswith("error") and not status.startswith("error"),
        timeout, interval)


def wait_for_volume_deleted(client, volume_id, timeout=300, interval=0.5):
    def get():
        code, _, body = client.request("GET", "/volumes/%s" % volume_id)
        return "deleted" if code == 404 else body["volume"]["status"]
    return wait_for("volume %s to be deleted" % volume_id, get,
                    lambda s: s == "deleted",
                    lambda s: s == "error_deleting", timeout, interval)


def wait_for_server_status(client, server_id, status, timeout=300,
                           interval=0.5):
    """Wait for a server's status; ERROR fails at once, with its fault."""
    def get():
        server = client.show_server(server_id)["server"]
        if server["status"] == "ERROR":
            return "ERROR (fault: %s)" % server.get("fault")
        return server["status"]
    return wait_for(
        "server %s to become %s" % (server_id, status), get,
        lambda s: s == status, lambda s: s.startswith("ERROR"),
        timeout, interval)


def wait_for_server_deleted(client, server_id, timeout=300, interval=0.5):
    def get():
        code, _, body = client.request("GET", "/servers/%s" % server_id)
        return "deleted" if code == 404 else body["server"]["status"]
    return wait_for("server %s to be deleted" % server_id, get,
                    lambda s: s == "deleted", lambda s: s == "ERROR",
                    timeout, interval)


def wait_for_volume_attachment_remove_from_server(client, server_id,
                                                  volume_id, timeout=300,
                                                  interval=0.5):
    """Wait until the compute API no longer lists the volume."""
    def get():
        code, _, body = client.request(
            "GET", "/servers/%s/os-volume_attachments" % server_id)
        if code == 404:
            return []
        return [a["volumeId"] for a in body["volumeAttachments"]]
    return wait_for(
        "volume %s to leave server %s" % (volume_id, server_id), get,
        lambda ids: volume_id not in ids, None, timeout, interval)


def wait_for_volume_attachment_create(client, volume_id, server_id,
                                      timeout=300, interval=0.5):
    """Wait until Cinder lists an attachment of the volume to the server
    (tempest's waiter of the same name); ``error*`` fails at once.

    :returns: that entry of the volume's ``attachments``.
    """
    def get():
        volume = client.show_volume(volume_id)["volume"]
        for att in volume["attachments"]:
            if att.get("server_id") == server_id:
                return volume["status"], att
        return volume["status"], None
    return wait_for(
        "volume %s to list an attachment to server %s" % (volume_id,
                                                          server_id),
        get, lambda v: v[1] is not None,
        lambda v: v[0].startswith("error"), timeout, interval)[1]


def wait_for_volume_detach(compute, server_id, volume_id, request_id,
                           timeout=300, interval=0.5):
    """Wait until the compute API no longer lists the volume, failing at
    once when the detach itself failed.

    A failed detach is rolled back (the volume stays ``in-use``, the
    attachment stays listed), which looks like a slow one from outside; the
    instance action of the DELETE request (``request_id``) tells them
    apart: an event with result ``Error`` ends the wait with its message
    (events are visible to the owner from 2.51).
    """
    def get():
        code, _, body = compute.request(
            "GET", "/servers/%s/os-volume_attachments" % server_id)
        if code == 404:
            return "gone", None
        listed = [a["volumeId"] for a in body["volumeAttachments"]]
        if volume_id not in listed:
            return "gone", None
        code, _, body = compute.request(
            "GET", "/servers/%s/os-instance-actions/%s" % (server_id,
                                                           request_id),
            microversion="2.51")
        failed = [e for e in (body or {}).get("instanceAction", {}).get(
            "events", []) if e.get("result") == "Error"] if code == 200 \
            else []
        return "listed", failed
    return wait_for(
        "volume %s to be detached from server %s (request %s)" % (
            volume_id, server_id, request_id), get,
        lambda v: v[0] == "gone", lambda v: bool(v[1]), timeout, interval)
