"""The lab's keystone, for the functional suites that need identity.

Keystone is a shared service of the lab, like RabbitMQ: devstack's
lib/keystone runs upstream Keystone on port 5000 with the accounts admin,
demo, demo-reader, alt_demo and the service users nova and cinder. A
suite's private daemons validate tokens at it with keystonemiddleware
(:meth:`LabKeystone.authtoken`), as the lab's do, and nova's service
token comes from the same ``nova`` user (:meth:`LabKeystone.service_user`).

A private stack that real clients must find through the catalog gets a
region of its own (:meth:`LabKeystone.private_region`): its endpoints in
that region, removed when the suite ends; clients select it with
``region_name``, and nothing in ``RegionOne`` changes.

The passwords are read from the lab's root-only files (clouds.yaml and
the daemons' configs), as a test running as root can.
"""

import configparser
import contextlib
import os
import urllib.error
import urllib.request

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import pytest
import yaml

CLOUDS_YAML = os.environ.get("MINISTACK_CLOUDS_YAML",
                             "/etc/openstack/clouds.yaml")
CONF_DIR = os.environ.get("MINISTACK_CONF_DIR", "/etc/ministack")
MINIAPI_CONF = os.path.join(CONF_DIR, "miniapi.conf")
REGION = "RegionOne"
# keystonemiddleware's token cache (seconds) of the private daemons that
# must show a revocation within a test's patience (the identity suite).
SHORT_TOKEN_CACHE_TIME = 2


def _ini(path, section, option):
    parser = configparser.RawConfigParser()
    try:
        parser.read(path)
    except (OSError, configparser.Error):
        return None
    return parser.get(section, option, fallback=None)


def answers(url):
    """Whether anything answers HTTP at ``url`` (an error status counts)."""
    try:
        urllib.request.urlopen(url, timeout=2).close()
    except urllib.error.HTTPError:
        pass
    except (urllib.error.URLError, OSError):
        return False
    return True


class Account:
    """One clouds.yaml cloud: user, project and password."""

    def __init__(self, auth):
        self.auth_url = auth["auth_url"].rstrip("/")
        self.username = auth["username"]
        self.password = auth["password"]
        self.project_name = auth["project_name"]

    def plugin(self):
        return v3.Password(auth_url=self.auth_url, username=self.username,
                           password=self.password,
                           project_name=self.project_name,
                           user_domain_name="Default",
                           project_domain_name="Default")

    def session(self):
        return ks_session.Session(auth=self.plugin())

    def token(self):
        """A new project-scoped token (and its access info)."""
        access = self.plugin().get_access(ks_session.Session())
        return access.auth_token, access


class LabKeystone:
    """The deployed lab's keystone and accounts."""

    def __init__(self):
        with open(CLOUDS_YAML) as handle:
            clouds = yaml.safe_load(handle)["clouds"]
        self.accounts = {name: Account(cloud["auth"])
                         for name, cloud in clouds.items()}
        self.admin = self.accounts["ministack-admin"]
        self.demo = self.accounts["ministack"]
        self.auth_url = self.admin.auth_url          # .../v3
        self.url = self.auth_url.rsplit("/v3", 1)[0]  # unversioned
        self.service_password = _ini(MINIAPI_CONF, "keystone_authtoken",
                                     "password")

    @classmethod
    def find(cls):
        """The lab's keystone, or skip (the lab is not deployed)."""
        try:
            lab = cls()
        except (OSError, KeyError, TypeError, yaml.YAMLError) as exc:
            pytest.skip("the lab's clouds.yaml is unusable (run "
                        "devstack/stack.sh): %s" % exc)
        if not lab.service_password or not answers(lab.url + "/v3"):
            pytest.skip("the lab's keystone does not answer at %s (run "
                        "devstack/stack.sh)" % lab.url)
        return lab

    def authtoken(self, user="nova", cache_time=None):
        """``[keystone_authtoken]`` of a daemon validating tokens as the
        service user ``user`` (devstack's configure_keystone_authtoken)."""
        section = {"auth_type": "password", "auth_url": self.url,
                   "www_authenticate_uri": self.url, "username": user,
                   "password": self.service_password,
                   "user_domain_name": "Default", "project_name": "service",
                   "project_domain_name": "Default", "region_name": REGION,
                   "service_token_roles_required": "true"}
        if cache_time is not None:
            section["token_cache_time"] = cache_time
        return section

    def service_user(self):
        """``[service_user]``: nova's service token on calls to Cinder."""
        return {"send_service_user_token": "true",
                "auth_url": self.auth_url, "username": "nova",
                "password": self.service_password,
                "project_name": "service"}

    def service_token(self, user="nova"):
        plugin = v3.Password(auth_url=self.auth_url, username=user,
                             password=self.service_password,
                             project_name="service",
                             user_domain_name="Default",
                             project_domain_name="Default")
        return plugin.get_token(ks_session.Session())

    def keystone_client(self):
        from keystoneclient.v3 import client as ks_client
        return ks_client.Client(session=self.admin.session(),
                                interface="public", region_name=REGION)

    @contextlib.contextmanager
    def private_region(self, name, endpoints):
        """A region ``name`` with ``{service_type: url}`` public endpoints
        (on the lab's services of those types), deleted on exit."""
        ks = self.keystone_client()
        services = {s.type: s for s in ks.services.list()}
        region = ks.regions.create(id=name,
                                   description="functional test stack")
        made = []
        try:
            for service_type, url in endpoints.items():
                made.append(ks.endpoints.create(
                    services[service_type], url, interface="public",
                    region=region))
            yield name
        finally:
            for endpoint in made:
                try:
                    ks.endpoints.delete(endpoint)
                except ks_exc.NotFound:
                    pass
            ks.regions.delete(region)
