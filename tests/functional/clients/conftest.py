"""The whole deployment with keystone, driven by the real clients.

``deployment`` starts, once per module, a private stack that validates
tokens at the lab's keystone (upstream Keystone, a shared service of the
lab like RabbitMQ; ``tests/support/keystone.py``):

* miniapi: compute API and image API, each on a free port,
  ``auth_strategy = keystone`` (keystonemiddleware as the nova user);
* minicinder: real LVM + tgt volumes, ``auth_strategy = keystone`` (as
  the cinder user);
* minicompute: a compute host with real libvirt (TCG) guests, calling
  Cinder with the user's token plus nova's service token;

all on the real broker with a control exchange unique to the run. The
stack's endpoints (and the lab's keystone, which the clients also look
up there) are a keystone region of their own (``cl-<run>``, removed at
the end), so the clients find them in the catalog as they find any
cloud's. It writes a ``clouds.yaml`` with clouds ``ministack``
(the lab's demo) and ``ministack-admin`` (admin) in that region, and the
openrc-style environments, as devstack's lib/keystone does; every command
runs the installed console script (``openstack``, ``cinder``, ``nova``)
as a subprocess.

Cleanup (even on failure): servers and volumes through the APIs as
admin, then any guest domain or LV of this run, then the daemons and the
region.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.support import daemons
from tests.support import keystone
from tests.support import private_stack

BIN = os.path.dirname(sys.executable)


class CLI:
    """Runs client commands for one account; returns (rc, stdout, stderr)."""

    def __init__(self, clouds_yaml, cloud, env):
        self.clouds_yaml = clouds_yaml
        self.cloud = cloud
        self.env = env

    def _run(self, argv, env, timeout):
        proc = subprocess.run(argv, capture_output=True, text=True, env=env,
                              timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr

    def openstack(self, *args, timeout=300):
        env = dict(os.environ, OS_CLIENT_CONFIG_FILE=self.clouds_yaml)
        for key in list(env):
            if key.startswith("OS_") and key != "OS_CLIENT_CONFIG_FILE":
                del env[key]
        return self._run([os.path.join(BIN, "openstack"), "--os-cloud",
                          self.cloud, *args], env, timeout)

    def json(self, *args, timeout=300):
        """``openstack ... -f json`` that must succeed: the parsed output."""
        rc, out, err = self.openstack(*args, "-f", "json", timeout=timeout)
        assert rc == 0, "openstack %s: %s%s" % (" ".join(args), out, err)
        return json.loads(out) if out.strip() else None

    def legacy(self, binary, *args, timeout=120):
        """The nova/cinder CLIs read OS_* variables (openrc), not clouds."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("OS_")}
        env.update(self.env)
        return self._run([os.path.join(BIN, binary), *args], env, timeout)


def _clouds(path, lab, region):
    lines = ["clouds:"]
    for cloud in ("ministack", "ministack-admin"):
        account = lab.accounts[cloud]
        lines += ["  %s:" % cloud, "    auth_type: password", "    auth:",
                  "      auth_url: %s" % account.auth_url,
                  "      username: '%s'" % account.username,
                  "      password: '%s'" % account.password,
                  "      project_name: '%s'" % account.project_name,
                  "      user_domain_name: Default",
                  "      project_domain_name: Default",
                  "    region_name: %s" % region,
                  "    identity_api_version: 3"]
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(path, 0o600)


def _openrc(account, region):
    return {"OS_AUTH_URL": account.auth_url,
            "OS_USERNAME": account.username,
            "OS_PASSWORD": account.password,
            "OS_PROJECT_NAME": account.project_name,
            "OS_USER_DOMAIN_NAME": "Default",
            "OS_PROJECT_DOMAIN_NAME": "Default",
            "OS_REGION_NAME": region, "OS_IDENTITY_API_VERSION": "3"}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    private_stack.skip_unless_lab()
    lab = keystone.LabKeystone.find()
    tmp = tmp_path_factory.mktemp("clients")
    ps = private_stack.PrivateStack(tmp, "cl")
    api_port, image_port, cinder_port = (daemons.free_port()
                                         for _ in range(3))
    url = "http://127.0.0.1:%d"
    endpoint = url % cinder_port + "/v3/%(project_id)s"
    region = "cl-%s" % ps.run
    try:
        ps.started_daemon(daemons.start_daemon(
            "minicinder", ps.cinder_sections({
                "DEFAULT": {"auth_strategy": "keystone",
                            "osapi_volume_listen": "127.0.0.1",
                            "osapi_volume_listen_port": cinder_port},
                "keystone_authtoken": lab.authtoken("cinder")}),
            tmp / "cinder",
            ready=lambda d: keystone.answers(url % cinder_port + "/")))
        ps.started_daemon(daemons.start_daemon(
            "miniapi", ps.api_sections(endpoint, {
                "DEFAULT": {"rpc_call_timeout": 60},
                "api": {"listen_port": api_port, "auth_strategy": "keystone",
                        "image_listen_port": image_port,
                        "image_dir": str(ps.state / "images")},
                "cinder": {"auth_strategy": "keystone", "http_retries": 0},
                "keystone_authtoken": lab.authtoken("nova"),
                "service_user": lab.service_user()}),
            tmp / "api",
            ready=lambda d: keystone.answers(url % api_port + "/")))
        ps.start_compute(endpoint, {
            "cinder": {"auth_strategy": "keystone"},
            "service_user": lab.service_user()})
        volume_url = url % cinder_port + "/v3/$(project_id)s"
        with lab.private_region(region, {
                "identity": lab.auth_url,
                "compute": url % api_port + "/v2.1",
                "volumev3": volume_url, "block-storage": volume_url,
                "image": url % image_port}):
            clouds = str(tmp / "clouds.yaml")
            _clouds(clouds, lab, region)
            admin = CLI(clouds, "ministack-admin",
                        _openrc(lab.admin, region))
            demo = CLI(clouds, "ministack", _openrc(lab.demo, region))
            yield {"admin": admin, "demo": demo, "image": ps.image,
                   "run": ps.run, "daemons": ps.started, "lab": lab,
                   "cinder_db": str(tmp / "cinder.sqlite")}
            _delete_everything(admin)
    finally:
        ps.cleanup()


def _delete_everything(admin):
    """Servers then volumes of every project, through the real APIs."""
    rc, out, _ = admin.openstack("server", "list", "--all-projects", "-f",
                                 "value", "-c", "ID")
    for server_id in out.split() if rc == 0 else []:
        admin.openstack("server", "delete", "--wait", server_id)
    rc, out, _ = admin.openstack("volume", "list", "--all-projects", "-f",
                                 "value", "-c", "ID")
    for volume_id in out.split() if rc == 0 else []:
        admin.openstack("volume", "delete", "--force", volume_id)
