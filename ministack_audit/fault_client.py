"""``ministack-fault``'s way in: a keystone session and the lab's APIs.

Credentials are found as the OpenStack clients find them:

1. ``--os-cloud NAME``, or ``OS_CLOUD``: that entry of ``clouds.yaml``
   (``./clouds.yaml``, ``~/.config/openstack/clouds.yaml``,
   ``/etc/openstack/clouds.yaml``, the first that has it);
2. else, when ``OS_AUTH_URL`` is set, the ``OS_*`` variables of an openrc
   (``source devstack/openrc admin admin``);
3. else the cloud ``ministack-admin`` (stack.sh writes it).

Arming is an admin action: the compute API refuses anyone else (403),
and this client says so in one line.
"""

import os
import re
import urllib.parse

from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import yaml

DEFAULT_CLOUD = "ministack-admin"
CLOUDS_YAML = ("clouds.yaml", "~/.config/openstack/clouds.yaml",
               "/etc/openstack/clouds.yaml")
#: the compute API's ministack extension (miniapi/api/ministack_faults.py)
FAULTS = "/os-ministack-faults"


class CommandError(Exception):
    """What went wrong, in one line for the operator; ``code`` is the
    exit status."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


def _cloud_entry(name, paths=CLOUDS_YAML):
    for path in paths:
        path = os.path.expanduser(path)
        if not os.path.exists(path):
            continue
        with open(path) as handle:
            clouds = (yaml.safe_load(handle) or {}).get("clouds") or {}
        if name in clouds:
            return clouds[name], path
    raise CommandError("no cloud %r in %s" % (name, ", ".join(paths)), 2)


def credentials(os_cloud=None, environ=None, paths=CLOUDS_YAML):
    """``(auth dict, region, where they came from)``."""
    environ = os.environ if environ is None else environ
    cloud = os_cloud or environ.get("OS_CLOUD")
    if not cloud and environ.get("OS_AUTH_URL"):
        auth = {"auth_url": environ["OS_AUTH_URL"],
                "username": environ.get("OS_USERNAME"),
                "password": environ.get("OS_PASSWORD"),
                "project_name": environ.get("OS_PROJECT_NAME"),
                "user_domain_name": environ.get("OS_USER_DOMAIN_NAME",
                                                "Default"),
                "project_domain_name": environ.get(
                    "OS_PROJECT_DOMAIN_NAME", "Default")}
        return auth, environ.get("OS_REGION_NAME"), "OS_* variables"
    entry, path = _cloud_entry(cloud or DEFAULT_CLOUD, paths)
    return (dict(entry.get("auth") or {}), entry.get("region_name"),
            "cloud %s of %s" % (cloud or DEFAULT_CLOUD, path))


class Client:
    """The compute and volume APIs for one keystone user."""

    def __init__(self, auth, region=None, source=None, session=None):
        self.region = region
        self.source = source
        if session is None:
            plugin = v3.Password(
                auth_url=auth["auth_url"], username=auth.get("username"),
                password=auth.get("password"),
                project_name=auth.get("project_name"),
                user_domain_name=auth.get("user_domain_name", "Default"),
                project_domain_name=auth.get("project_domain_name",
                                             "Default"))
            session = ks_session.Session(auth=plugin, timeout=30)
        self.session = session

    @classmethod
    def from_args(cls, os_cloud=None):
        return cls(*credentials(os_cloud))

    def _request(self, service, method, path, body=None, headers=None):
        try:
            resp = self.session.request(
                path, method, json=body, raise_exc=False,
                headers=headers or {}, endpoint_filter={
                    "service_type": service, "interface": "public",
                    "region_name": self.region})
        except ks_exceptions.ClientException as exc:
            raise CommandError("cannot reach the %s API as %s: %s" % (
                service, self.source, exc)) from None
        return resp

    def compute(self, method, path, body=None, expect=(200,),
                version="2.1"):
        resp = self._request("compute", method, path, body, {
            "OpenStack-API-Version": "compute %s" % version})
        return _answer(resp, expect, self.source)

    def volume(self, method, path, body=None, expect=(200,)):
        resp = self._request("block-storage", method, path, body, {
            "OpenStack-API-Version": "volume 3.44"})
        return _answer(resp, expect, self.source)

    # -- the faults resource --

    def arm(self, name, volume_id=None, server_id=None, seconds=None):
        fault = {"name": name}
        for key, value in (("volume_id", volume_id),
                           ("server_id", server_id),
                           ("for_seconds", seconds)):
            if value is not None:
                fault[key] = value
        return self.compute("POST", FAULTS, {"fault": fault})["fault"]

    def status(self):
        return self.compute("GET", FAULTS)

    def disarm(self, name=None):
        return self.compute("DELETE", FAULTS + ("/%s" % name if name
                                                else ""))

    # -- what the report reads --

    def server(self, ref):
        """A server (any project) by id or by exact name."""
        if _uuid_like(ref):
            return self.compute("GET", "/servers/%s" % ref)["server"]
        query = urllib.parse.urlencode({"all_tenants": 1,
                                        "name": "^%s$" % re.escape(ref)})
        found = self.compute("GET", "/servers/detail?" + query)["servers"]
        found = [s for s in found if s["name"] == ref]
        if len(found) != 1:
            raise CommandError("%s servers are named %r: give its id" % (
                len(found) or "no", ref))
        return found[0]

    def volume_show(self, volume_id):
        return self.volume("GET", "/volumes/%s" % volume_id)["volume"]

    def attachments(self, volume_id):
        return self.volume("GET", "/attachments?all_tenants=1&volume_id=%s"
                           % volume_id)["attachments"]

    def events(self, server_id):
        """``[(action, [event...])]``, newest action first."""
        actions = self.compute("GET", "/servers/%s/os-instance-actions"
                               % server_id, version="2.84")[
            "instanceActions"]
        out = []
        for action in actions:
            detail = self.compute("GET", "/servers/%s/os-instance-actions/"
                                  "%s" % (server_id, action["request_id"]),
                                  version="2.84")["instanceAction"]
            out.append((action, detail.get("events") or []))
        return out


def _uuid_like(value):
    parts = value.split("-")
    return [len(p) for p in parts] == [8, 4, 4, 4, 12]


def _answer(resp, expect, source):
    if resp.status_code in expect:
        return resp.json() if resp.content else None
    try:
        body = resp.json()
        fault = next(iter(body.values()))
        message = fault.get("message", resp.text)
    except (ValueError, AttributeError, StopIteration):
        message = resp.text[:300]
    if resp.status_code == 403:
        raise CommandError("refused (HTTP 403) for %s: %s Arming faults is "
                           "an admin action (the cloud ministack-admin, or "
                           "source devstack/openrc admin admin)."
                           % (source, message))
    raise CommandError("%s %s: HTTP %s: %s" % (
        resp.request.method if resp.request is not None else "",
        resp.url, resp.status_code, message))
