"""The whole deployment with keystone, driven by the real clients.

``deployment`` starts, once per module, from a private identity (key
file and accounts bootstrapped as devstack does):

* miniapi: compute API, keystone v3 subset and image API, each on a free
  port, ``auth_strategy = keystone``;
* minicinder: real LVM + tgt volumes, ``auth_strategy = keystone``;
* minicompute: a compute host with real libvirt (TCG) guests, calling
  Cinder with the user's token plus nova's service token;

all on the real broker with a control exchange unique to the run. It
writes a ``clouds.yaml`` with clouds ``ministack`` (demo) and
``ministack-admin`` and the openrc-style environments, as devstack's
lib/keystone does, and every command runs the installed console script
(``openstack``, ``cinder``, ``nova``) as a subprocess.

Cleanup (even on failure): servers and volumes through the APIs as
admin, then any guest domain or LV of this run, then the daemons.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.functional import daemons
from tests.functional import private_stack
from tests.functional.identity import stack

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


def _clouds(path, identity_url):
    lines = ["clouds:"]
    for cloud, user in (("ministack", "demo"), ("ministack-admin", "admin")):
        lines += ["  %s:" % cloud, "    auth_type: password", "    auth:",
                  "      auth_url: %s/v3" % identity_url,
                  "      username: %s" % user,
                  "      password: %s" % stack.PASSWORDS[user],
                  "      project_name: %s" % user,
                  "      user_domain_name: Default",
                  "      project_domain_name: Default",
                  "    region_name: RegionOne",
                  "    identity_api_version: 3"]
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(path, 0o600)


def _openrc(identity_url, user):
    return {"OS_AUTH_URL": identity_url + "/v3", "OS_USERNAME": user,
            "OS_PASSWORD": stack.PASSWORDS[user], "OS_PROJECT_NAME": user,
            "OS_USER_DOMAIN_NAME": "Default",
            "OS_PROJECT_DOMAIN_NAME": "Default",
            "OS_REGION_NAME": "RegionOne", "OS_IDENTITY_API_VERSION": "3"}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    private_stack.skip_unless_lab()
    tmp = tmp_path_factory.mktemp("clients")
    ps = private_stack.PrivateStack(tmp, "cl")
    key_file, nova_db = stack.bootstrap(tmp)
    ports = stack.Ports()
    endpoint = ports.url(ports.cinder) + "/v3/%(project_id)s"
    try:
        ps.started_daemon(daemons.start_daemon(
            "minicinder", ps.cinder_sections({
                "DEFAULT": {"auth_strategy": "keystone",
                            "osapi_volume_listen": "127.0.0.1",
                            "osapi_volume_listen_port": ports.cinder},
                "identity": {"signing_key_file": key_file}}),
            tmp / "cinder",
            ready=lambda d: stack.answers(ports.url(ports.cinder) + "/")))
        ps.started_daemon(stack.start_api(
            tmp / "api", ports, key_file, nova_db,
            ps.common(host="clapi-%s" % ps.run, rpc_call_timeout=60),
            str(ps.state / "images")))
        ps.start_compute(endpoint, {
            "cinder": {"auth_strategy": "keystone"},
            "service_user": stack.service_user(ports.identity_url)})
        clouds = str(tmp / "clouds.yaml")
        _clouds(clouds, ports.identity_url)
        admin = CLI(clouds, "ministack-admin",
                    _openrc(ports.identity_url, "admin"))
        demo = CLI(clouds, "ministack", _openrc(ports.identity_url, "demo"))
        yield {"admin": admin, "demo": demo, "image": ps.image,
               "run": ps.run, "ports": ports, "daemons": ps.started,
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
