"""Raw REST clients: just enough HTTP to drive and to abuse the APIs.

They deliberately do not use ministack's code or the OpenStack client
libraries, so a test can send any body, header or microversion, including
wrong ones, and so the suite can be pointed at any OpenStack cloud. Each
call returns the decoded body (``request`` returns ``(status, headers,
body)``) and checks the status when told what to expect, naming the
request and the answer on a mismatch.
"""

import json
import re
import urllib.parse

import requests


class UnexpectedResponse(AssertionError):
    pass


def unversioned(endpoint):
    """The service root of a catalog endpoint (tempest's versions clients
    strip ``/vN[.M][/project]`` the same way)."""
    url = urllib.parse.urlsplit(endpoint)
    path = re.split(r"(^|/)+v\d+(\.\d+)?", url.path)[0]
    return urllib.parse.urlunsplit(
        (url.scheme, url.netloc, path + "/", "", ""))


class RestClient:
    """Requests against one service endpoint with one identity."""

    service = None  # "compute" or "volume": the microversion header token

    def __init__(self, endpoint, token, microversion=None, timeout=60):
        self.endpoint = endpoint.rstrip("/")
        self.token = token
        self.microversion = microversion
        self.timeout = timeout
        self.http = requests.Session()

    def headers(self, microversion=None, extra=None):
        headers = {"Accept": "application/json",
                   "Content-Type": "application/json",
                   "X-Auth-Token": self.token}
        version = self.microversion if microversion is None \
            else microversion
        if version:
            headers["OpenStack-API-Version"] = "%s %s" % (self.service,
                                                          version)
        headers.update(extra or {})
        return headers

    def request(self, method, path, body=None, expected=None, raw=None,
                microversion=None, headers=None, url=None):
        """Send one request.

        :param body: a JSON-able value, or use ``raw`` for bytes as-is.
        :param expected: an int or tuple of acceptable status codes.
        :param url: a full URL instead of endpoint + path.
        """
        data = raw if raw is not None else (
            json.dumps(body) if body is not None else None)
        resp = self.http.request(
            method, url or self.endpoint + path, data=data,
            headers=self.headers(microversion, headers),
            timeout=self.timeout)
        try:
            payload = resp.json() if resp.content else None
        except ValueError:
            payload = resp.text
        if expected is not None:
            codes = (expected,) if isinstance(expected, int) else expected
            if resp.status_code not in codes:
                raise UnexpectedResponse(
                    "%s %s returned %s (expected %s): %s" % (
                        method, url or path, resp.status_code,
                        "/".join(map(str, codes)), payload))
        return resp.status_code, resp.headers, payload

    def list_versions(self, expected=(200, 300)):
        """GET the unversioned root (no microversion header)."""
        return self.request("GET", "", url=unversioned(self.endpoint),
                            expected=expected, microversion="")[2]

    def get_version_by_url(self, url, expected=200):
        return self.request("GET", "", url=url, expected=expected,
                            microversion="")[2]


class ComputeClient(RestClient):
    service = "compute"

    def create_server(self, name, image_ref, flavor_ref, **kwargs):
        body = {"server": {"name": name, "imageRef": image_ref,
                           "flavorRef": flavor_ref, "networks": "none"}}
        body["server"].update(kwargs)
        return self.request("POST", "/servers", body, expected=202)[2][
            "server"]

    def show_server(self, server_id, expected=200):
        return self.request("GET", "/servers/%s" % server_id,
                            expected=expected)[2]

    def delete_server(self, server_id, expected=(204, 404)):
        return self.request("DELETE", "/servers/%s" % server_id,
                            expected=expected)

    def server_action(self, server_id, action, expected=202):
        return self.request("POST", "/servers/%s/action" % server_id,
                            {action: None}, expected=expected)

    def attach_volume(self, server_id, volume_id, expected=200,
                      microversion=None, **kwargs):
        body = {"volumeAttachment": dict(volumeId=volume_id, **kwargs)}
        return self.request(
            "POST", "/servers/%s/os-volume_attachments" % server_id, body,
            expected=expected, microversion=microversion)[2]

    def list_volume_attachments(self, server_id, expected=200,
                                microversion=None):
        return self.request(
            "GET", "/servers/%s/os-volume_attachments" % server_id,
            expected=expected, microversion=microversion)[2]

    def show_volume_attachment(self, server_id, volume_id, expected=200,
                               microversion=None):
        return self.request(
            "GET", "/servers/%s/os-volume_attachments/%s" % (
                server_id, volume_id), expected=expected,
            microversion=microversion)[2]

    def update_attached_volume(self, server_id, volume_id, expected=202,
                               microversion=None, **kwargs):
        return self.request(
            "PUT", "/servers/%s/os-volume_attachments/%s" % (
                server_id, volume_id), {"volumeAttachment": kwargs},
            expected=expected, microversion=microversion)[2]

    def detach_volume(self, server_id, volume_id, expected=202):
        return self.request(
            "DELETE", "/servers/%s/os-volume_attachments/%s" % (
                server_id, volume_id), expected=expected)

    def list_instance_actions(self, server_id):
        return self.request(
            "GET", "/servers/%s/os-instance-actions" % server_id,
            expected=200)[2]["instanceActions"]


class VolumeClient(RestClient):
    service = "volume"

    def create_volume(self, size=1, **kwargs):
        body = {"volume": dict(size=size, **kwargs)}
        return self.request("POST", "/volumes", body,
                            expected=202)[2]["volume"]

    def show_volume(self, volume_id, expected=200):
        return self.request("GET", "/volumes/%s" % volume_id,
                            expected=expected)[2]

    def delete_volume(self, volume_id, expected=(202, 404)):
        return self.request("DELETE", "/volumes/%s" % volume_id,
                            expected=expected)[2]

    def volume_action(self, volume_id, action, body=None, expected=202):
        return self.request("POST", "/volumes/%s/action" % volume_id,
                            {action: body}, expected=expected)[2]

    # The legacy verbs, named as tempest's volumes_client names them.

    def attach_volume(self, volume_id, expected=202, **kwargs):
        return self.volume_action(volume_id, "os-attach", kwargs, expected)

    def detach_volume(self, volume_id, expected=202, **kwargs):
        return self.volume_action(volume_id, "os-detach", kwargs, expected)

    def reserve_volume(self, volume_id, expected=202):
        return self.volume_action(volume_id, "os-reserve", {}, expected)

    def unreserve_volume(self, volume_id, expected=202):
        return self.volume_action(volume_id, "os-unreserve", {}, expected)

    def reset_volume_status(self, volume_id, expected=202, **kwargs):
        return self.volume_action(volume_id, "os-reset_status", kwargs,
                                  expected)

    def force_detach_volume(self, volume_id, expected=202, **kwargs):
        return self.volume_action(volume_id, "os-force_detach", kwargs,
                                  expected)

    def create_volume_type(self, name, extra_specs=None, expected=200):
        body = {"volume_type": {"name": name,
                                "extra_specs": extra_specs or {}}}
        return self.request("POST", "/types", body,
                            expected=expected)[2]["volume_type"]

    def delete_volume_type(self, type_id, expected=(202, 404)):
        return self.request("DELETE", "/types/%s" % type_id,
                            expected=expected)

    def list_attachments(self, expected=200, **filters):
        query = urllib.parse.urlencode(filters)
        return self.request("GET", "/attachments%s" % (
            "?" + query if query else ""), expected=expected)[2][
                "attachments"]

    def show_attachment(self, attachment_id, expected=200):
        return self.request("GET", "/attachments/%s" % attachment_id,
                            expected=expected)[2]

    def delete_attachment(self, attachment_id, expected=200):
        return self.request("DELETE", "/attachments/%s" % attachment_id,
                            expected=expected)[2]
