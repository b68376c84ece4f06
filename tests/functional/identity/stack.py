"""Start the daemons with ``auth_strategy = keystone`` for functional tests.

:func:`bootstrap` prepares a private identity (key file, nova DB with the
admin/demo/nova accounts) in a temp dir exactly as devstack's
``init_keystone`` does, through ``python -m ministack.identity.manage``.
:func:`start_api` runs the real ``miniapi`` console script serving the
compute API, the keystone v3 subset and the image API on free ports, with
a catalog pointing at them. minicinder and minicompute validate tokens
themselves (``auth_strategy = keystone`` with ``[identity]
signing_key_file`` set to the same key) and are started with
:func:`tests.functional.daemons.start_daemon`.
"""

import os
import subprocess
import sys
import urllib.error
import urllib.request

from tests.functional import daemons

PASSWORDS = {"admin": "ftest-admin-pw", "demo": "ftest-demo-pw",
             "nova": "ftest-nova-pw"}


def bootstrap(tmp):
    """Key + accounts in ``tmp``; returns ``(key_file, nova_db_url)``."""
    key_file = os.path.join(str(tmp), "fernet-keys", "0")
    nova_db = "sqlite:///%s" % os.path.join(str(tmp), "nova.sqlite")
    conf = os.path.join(str(tmp), "bootstrap.conf")
    daemons.write_config(conf, {
        "DEFAULT": {"state_path": str(tmp)},
        "database": {"connection": nova_db},
        "identity": {"signing_key_file": key_file}})
    env = dict(os.environ,
               MINISTACK_ADMIN_PASSWORD=PASSWORDS["admin"],
               MINISTACK_DEMO_PASSWORD=PASSWORDS["demo"],
               MINISTACK_SERVICE_PASSWORD=PASSWORDS["nova"])
    subprocess.run([sys.executable, "-m", "ministack.identity.manage",
                    "--config-file", conf, "bootstrap"], env=env,
                   check=True, capture_output=True, timeout=120)
    return key_file, nova_db


def service_user(identity_url):
    return {"send_service_user_token": "true",
            "auth_url": identity_url + "/v3", "username": "nova",
            "password": PASSWORDS["nova"], "project_name": "service"}


class Ports:
    """Free ports for every endpoint, chosen before any daemon starts so
    the catalog can name them."""

    def __init__(self):
        self.api = daemons.free_port()
        self.identity = daemons.free_port()
        self.image = daemons.free_port()
        self.cinder = daemons.free_port()

    def url(self, port):
        return "http://127.0.0.1:%d" % port

    @property
    def identity_url(self):
        return self.url(self.identity)


def catalog(ports):
    return {"identity_url": ports.identity_url,
            "compute_url": ports.url(ports.api) + "/v2.1",
            "volume_url": ports.url(ports.cinder) + "/v3/%(project_id)s",
            "image_url": ports.url(ports.image)}


def start_api(tmp, ports, key_file, nova_db, common, image_dir):
    sections = {
        "DEFAULT": dict(common),
        "database": {"connection": nova_db},
        "api": {"listen": "127.0.0.1", "listen_port": ports.api,
                "auth_strategy": "keystone",
                "image_listen_port": ports.image, "image_dir": image_dir},
        "identity": {"enabled": "true", "listen": "127.0.0.1",
                     "listen_port": ports.identity,
                     "signing_key_file": key_file},
        "catalog": catalog(ports),
        "service_user": service_user(ports.identity_url),
        "cinder": {"endpoint_template":
                   ports.url(ports.cinder) + "/v3/%(project_id)s",
                   "auth_strategy": "keystone",
                   "http_retries": 0},
    }
    daemon = daemons.start_daemon(
        "miniapi", sections, tmp,
        ready=lambda d: answers(ports.url(ports.api) + "/")
        and answers(ports.identity_url + "/v3"))
    daemon.port = ports.api
    daemon.url = ports.url(ports.api)
    return daemon


def answers(url):
    """Whether anything answers HTTP at ``url`` (an error status counts)."""
    try:
        urllib.request.urlopen(url, timeout=2).close()
    except urllib.error.HTTPError:
        pass
    except (urllib.error.URLError, OSError):
        return False
    return True
