"""The fuzz run's own resources on the deployed lab, and their clean-up.

Destructive requests (POST, PUT, DELETE) only ever name resources this
run made: the pools below, filled at start-up (a volume type, volumes of
the demo and admin projects, attachments, one guest) and by every
successful create the fuzzing itself does. Everything the run makes is
named with :data:`PREFIX` where the API takes a name, and remembered by
id, so :meth:`Lab.cleanup` finds it all; ``ministack-audit`` runs after
(:mod:`tests.fuzz.audit`).
"""

import json
import urllib.parse
import uuid

import requests

from tests.fuzz import audit
from tests.tempest_style import auth
from tests.tempest_style import base
from tests.tempest_style import clients
from tests.tempest_style import waiters

RUN = uuid.uuid4().hex[:8]
PREFIX = "fuzz-%s-" % RUN

# Kinds of resource a fuzz create may leave, by the key of its response.
_CREATED = {"volume": "volume", "volume_type": "type",
            "attachment": "attachment", "server": "server",
            "flavor": "flavor"}
# Made by a create but gone with their server or volume, or by expiry.
_DEPENDENT = ("volumeAttachment", "token")

VOLUMES = 3


class Lab:
    """Sessions, endpoints and the pools of ids a fuzz request may use."""

    def __init__(self, conf, demo, admin, demo_volumes, demo_compute,
                 admin_volumes, admin_compute):
        self.conf = conf
        self.demo, self.admin = demo, admin
        self.demo_volumes, self.demo_compute = demo_volumes, demo_compute
        self.admin_volumes, self.admin_compute = admin_volumes, admin_compute
        self.cloud = base.Cloud(conf, demo_compute, demo_volumes,
                                admin_compute, admin_volumes)
        self.pools = {"volume": [], "server": [], "attachment": [],
                      "type": [], "type_name": [], "flavor": [],
                      "image": []}
        self.unknown = []      # (key, id) a create made that we cannot delete
        self.quota_targets = []   # projects (URL-quoted) given quotas
        self.images = []       # ids and names of the registered images
        self.audit_before = None  # the audit's report before the run
        self.flavors = []
        self.roots = {
            "compute": clients.unversioned(demo.compute_endpoint),
            "volume": clients.unversioned(demo.volume_endpoint),
            "identity": conf.auth_url + "/",
            "image": self._catalog_root("image"),
            "network": self._catalog_root("network")}

    def ensure_tokens(self):
        """Log in again when a token stopped working (a daemon restarted
        with a new key, or the token expired): the run's requests and its
        clean-up need valid ones."""
        for session, creds, compute, volumes, admin in (
                (self.demo, self.conf.user, self.demo_compute,
                 self.demo_volumes, False),
                (self.admin, self.conf.admin, self.admin_compute,
                 self.admin_volumes, True)):
            code = requests.get(
                self.roots["compute"] + "v2.1/flavors",
                headers={"X-Auth-Token": session.token}, timeout=30,
            ).status_code
            if code != 401:
                continue
            fresh = auth.authenticate(self.conf, creds, admin=admin)
            session.token = fresh.token
            compute.token = volumes.token = fresh.token

    @property
    def tokens(self):
        return {"demo": self.demo.token, "admin": self.admin.token}

    def secrets(self):
        """Strings a report must not show, with what to show instead."""
        return [(self.demo.token, "<demo token>"),
                (self.admin.token, "<admin token>"),
                (self.conf.user.password, "<demo password>"),
                (self.conf.admin.password, "<admin password>")]

    def _catalog_root(self, service_type):
        """The unversioned root of the catalog's endpoint of
        ``service_type`` (the image and network APIs have no option of
        their own in tempest.conf)."""
        resp = requests.get(self.conf.auth_url + "/v3/auth/catalog",
                            headers={"X-Auth-Token": self.demo.token},
                            timeout=30)
        resp.raise_for_status()
        endpoint = auth._endpoint(resp.json()["catalog"], (service_type,),
                                  self.conf.region)
        return clients.unversioned(endpoint)

    # -- start-up ------------------------------------------------------------

    def wait_for_services(self, timeout=120):
        """Every API answers (another session may be restarting one)."""
        for group, root in self.roots.items():
            def answer(root=root):
                try:
                    return requests.get(root, timeout=10).status_code
                except requests.RequestException as exc:
                    return str(exc)
            waiters.wait_for("the %s API at %s to answer" % (group, root),
                             answer, lambda s: isinstance(s, int),
                             timeout=timeout, interval=1)

    def setup(self, with_server=True):
        """Make the resources destructive requests may aim at."""
        self.audit_before = audit.audit_once()[1]
        server = None
        if with_server:
            server = self.demo_compute.create_server(
                PREFIX + "server", self.conf.image_ref,
                self.conf.flavor_ref)
            self.pools["server"].append(server["id"])
        images = self.demo_compute.request("GET", "/images",
                                           expected=200)[2]["images"]
        self.images = [i["id"] for i in images] + [i["name"] for i in
                                                   images]
        self.flavors = [f["id"] for f in self.demo_compute.request(
            "GET", "/flavors", expected=200)[2]["flavors"]]
        vtype = self.admin_volumes.create_volume_type(
            PREFIX + "type", {"multiattach": "<is> True"})
        self.pools["type"].append(vtype["id"])
        self.pools["type_name"].append(vtype["name"])
        made = [self.demo_volumes.create_volume(
            size=self.conf.volume_size, name=PREFIX + "volume%d" % n)
            for n in range(VOLUMES)]
        made.append(self.admin_volumes.create_volume(
            size=self.conf.volume_size, name=PREFIX + "admin-volume"))
        self.pools["volume"].extend(v["id"] for v in made)
        owners = [self.demo_volumes] * VOLUMES + [self.admin_volumes]
        for volume, client in zip(made, owners, strict=True):
            waiters.wait_for_volume_status(
                client, volume["id"], "available",
                timeout=self.conf.build_timeout)
        if server is not None:
            waiters.wait_for_server_status(
                self.demo_compute, server["id"], "ACTIVE",
                timeout=self.conf.build_timeout)
            self._attachments(server["id"], made)

    def _attachments(self, server_id, volumes):
        """One reserved attachment and one connected (exported) one."""
        reserved = {"attachment": {"volume_uuid": volumes[1]["id"],
                                   "instance_uuid": server_id}}
        connected = {"attachment": {
            "volume_uuid": volumes[2]["id"], "instance_uuid": server_id,
            "connector": {"initiator": "iqn.2004-10.org.fuzz:%s" % RUN,
                          "host": "fuzz-%s" % RUN, "ip": "127.0.0.1",
                          "platform": "x86_64", "os_type": "linux2",
                          "multipath": False}}}
        for body in (reserved, connected):
            found = self.demo_volumes.request(
                "POST", "/attachments", body, expected=200,
                microversion="3.27")[2]
            self.pools["attachment"].append(found["attachment"]["id"])

    # -- during the run ------------------------------------------------------

    def pool(self, kind):
        return list(self.pools.get(kind, ()))

    def track(self, route, method, status, text, url=""):
        """Remember what a successful create (a POST to a collection, by
        any identity) made; one of a kind this module cannot delete is
        kept in ``unknown`` and reported as left behind. A quota set by
        PUT is remembered too, to be deleted."""
        if not 200 <= (status or 0) < 300:
            return
        if method == "PUT" and route.rule.endswith("/os-quota-sets/<target>"):
            target = urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1]
            if target not in self.quota_targets:
                self.quota_targets.append(target)
            return
        if method != "POST" or not route.collection:
            return
        try:
            payload = json.loads(text)
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        if route.group == "image" and payload.get("id") and \
                payload.get("schema") == "/v2/schemas/image":
            # Glance answers a create with the image, not wrapped.
            if payload["id"] not in self.pools["image"]:
                self.pools["image"].append(payload["id"])
            return
        for key, item in payload.items():
            if not isinstance(item, dict) or not item.get("id") or \
                    key in _DEPENDENT:
                continue
            kind = _CREATED.get(key)
            if kind is None:
                self.unknown.append((key, item["id"]))
            elif item["id"] not in self.pools[kind]:
                self.pools[kind].append(item["id"])
                if kind == "type" and item.get("name"):
                    self.pools["type_name"].append(item["name"])

    # -- clean-up ------------------------------------------------------------

    def cleanup(self):
        """Delete everything the run made; the problems met (empty: all
        gone)."""
        problems = []
        self.ensure_tokens()

        def attempt(what, func, *args):
            try:
                func(*args)
            except Exception as exc:   # go on; report all at the end
                problems.append("%s: %s" % (what, exc))

        for server_id in set(self.pool("server")) | set(
                s["id"] for s in self._servers()):
            attempt("server %s" % server_id, self.cloud.delete_server,
                    server_id)
        for attachment_id in self.pool("attachment"):
            attempt("attachment %s" % attachment_id, self._delete_attachment,
                    attachment_id)
        volumes = set(self.pool("volume")) | set(
            v["id"] for v in self._volumes())
        for volume_id in volumes:   # all deletes first, then the waits
            attempt("volume %s" % volume_id, self._delete_volume,
                    volume_id)
        for volume_id in volumes:
            attempt("volume %s" % volume_id, waiters.wait_for_volume_deleted,
                    self.admin_volumes, volume_id, self.conf.build_timeout)
        for type_id in set(self.pool("type")) | set(
                t["id"] for t in self._types()):
            attempt("volume type %s" % type_id,
                    self.admin_volumes.delete_volume_type, type_id)
        for target in self.quota_targets:
            attempt("quotas of %s" % target, self.admin_volumes.request,
                    "DELETE", "/os-quota-sets/%s" % target, None,
                    (200, 202, 204, 404))
        for image_id in self.pool("image"):
            attempt("image %s" % image_id, self._delete_image, image_id)
        for flavor_id in set(self.pool("flavor")) | set(
                f["id"] for f in self._flavors()):
            attempt("flavor %s" % flavor_id, self.admin_compute.request,
                    "DELETE", "/flavors/%s" % urllib.parse.quote(
                        flavor_id, safe=""), None, (202, 204, 404))
        return problems

    def _servers(self):
        servers = self.admin_compute.request(
            "GET", "/servers?all_tenants=1", expected=200)[2]["servers"]
        return [s for s in servers if s["name"].startswith(PREFIX)]

    def _volumes(self):
        volumes = self.admin_volumes.request(
            "GET", "/volumes/detail?all_tenants=1", expected=200)[2][
                "volumes"]
        return [v for v in volumes if (v.get("name") or "").startswith(
            PREFIX)]

    def _types(self):
        types = self.admin_volumes.request("GET", "/types", expected=200)[
            2]["volume_types"]
        return [t for t in types if (t.get("name") or "").startswith(
            PREFIX)]

    def _flavors(self):
        code, _, body = self.admin_compute.request(
            "GET", "/flavors/detail?is_public=None")
        if code != 200:
            return []
        return [f for f in body["flavors"] if (f.get("name") or "")
                .startswith(PREFIX)]

    def _image(self, method, image_id):
        return requests.request(
            method, self.roots["image"] + "v2/images/%s" % image_id,
            headers={"X-Auth-Token": self.admin.token},
            timeout=60).status_code

    def _delete_image(self, image_id):
        code = self._image("DELETE", image_id)
        if code not in (204, 404):
            raise RuntimeError("DELETE of image %s: %s" % (image_id, code))

    def _delete_attachment(self, attachment_id):
        self.admin_volumes.request(
            "DELETE", "/attachments/%s" % attachment_id,
            expected=(200, 404), microversion="3.27")

    def _delete_volume(self, volume_id):
        """Free the volume of whatever fuzzing left on it, then ask for
        its deletion (the caller waits).

        A fuzzed ``os-reset_status`` may have left any status, attach
        status or migration status: reset all three, as an operator
        would, before deleting.
        """
        code, _, body = self.admin_volumes.request(
            "GET", "/volumes/%s" % volume_id)
        if code == 404:
            return
        volume = body["volume"]
        if volume["attachments"] or volume["status"] != "available":
            self.cloud._free_volume(volume_id, volume["attachments"])
        if volume.get("migration_status") not in (None, "", "success"):
            self.admin_volumes.reset_volume_status(
                volume_id, status="available", attach_status="detached",
                migration_status="success", expected=(202, 400))
        self.admin_volumes.delete_volume(volume_id)

    def own_ids(self):
        """Every id the run made or was told about."""
        return [i for pool in self.pools.values() for i in pool] + [
            i for _, i in self.unknown]

    def leftovers(self):
        """What the run made that still exists."""
        self.ensure_tokens()
        left = []
        for kind, path, key in (("server", "/servers/%s", "server"),):
            for item_id in self.pool(kind):
                if self.admin_compute.request("GET", path % item_id)[0] \
                        != 404:
                    left.append("%s %s" % (key, item_id))
        for volume_id in self.pool("volume"):
            if self.admin_volumes.request("GET", "/volumes/%s"
                                          % volume_id)[0] != 404:
                left.append("volume %s" % volume_id)
        left += ["image %s" % i for i in self.pool("image")
                 if self._image("GET", i) != 404]
        left += ["server %s" % s["id"] for s in self._servers()]
        left += ["volume %s" % v["id"] for v in self._volumes()]
        left += ["volume type %s" % t["id"] for t in self._types()]
        left += ["flavor %s" % f["id"] for f in self._flavors()]
        left += ["%s %s (no clean-up for this kind in tests/fuzz/lab.py)"
                 % item for item in self.unknown]
        return sorted(set(left))
