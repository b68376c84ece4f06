"""The suite's configuration: which cloud to test, read from an INI file.

Like tempest.conf, the file describes a deployed endpoint, so the same suite
can run against ministack or against a real OpenStack cloud. The path comes
from ``$MINISTACK_TEMPEST_CONF`` (default ``/etc/ministack/tempest.conf``,
written by devstack's ``configure_tempest``). See ``tempest.conf.sample``.

Two ways to authenticate, chosen by ``[auth] auth_url``:

* set: Keystone v3 password auth for the user and the admin; endpoints come
  from the token's service catalog (``compute``, ``block-storage`` or
  ``volumev3``), as tempest does;
* empty: noauth, with ``token`` / ``admin_token`` sent as-is and the
  endpoints taken from ``[compute] endpoint`` and ``[volume] endpoint``.
"""

import configparser
import dataclasses
import os

DEFAULT_PATH = "/etc/ministack/tempest.conf"


@dataclasses.dataclass
class Credentials:
    # Secrets are left out of repr: pytest prints a failed frame's
    # arguments, and CI logs are read by more people than the lab is.
    username: str = ""
    password: str = dataclasses.field(default="", repr=False)
    project_name: str = ""
    domain_name: str = "Default"
    token: str = dataclasses.field(default="", repr=False)  # noauth only


@dataclasses.dataclass
class Config:
    auth_url: str
    user: Credentials
    admin: Credentials
    compute_endpoint: str
    volume_endpoint: str
    image_ref: str
    flavor_ref: str
    region: str = "RegionOne"
    build_timeout: int = 300
    build_interval: float = 0.5
    volume_size: int = 1
    # The highest microversions the cloud offers (tempest's
    # max_microversion): a test needing more skips. Requests carry no
    # microversion unless a test asks for one, as tempest's do.
    compute_max_microversion: str = "2.89"
    volume_max_microversion: str = "3.44"
    # Feature flags, as tempest's [*-feature-enabled] sections: a real
    # cloud without multiattach or a second cell of guests turns them off.
    multiattach: bool = True
    concurrent_attachments: int = 4
    libvirt_uri: str = "qemu:///system"
    guest_agent: bool = True
    nova_db_url: str = dataclasses.field(default="", repr=False)  # password
    agent_timeout: int = 120


def load(path=None):
    """Read the suite's INI file into a :class:`Config`."""
    path = path or os.environ.get("MINISTACK_TEMPEST_CONF", DEFAULT_PATH)
    parser = configparser.ConfigParser(interpolation=None)
    if not parser.read(path):
        raise FileNotFoundError(
            "tempest-style config %s not found: run devstack/stack.sh or "
            "set MINISTACK_TEMPEST_CONF" % path)

    def get(section, key, fallback=""):
        return parser.get(section, key, fallback=fallback)

    def flag(section, key, fallback):
        return parser.getboolean(section, key, fallback=fallback)

    def creds(prefix):
        return Credentials(
            username=get("auth", prefix + "username"),
            password=get("auth", prefix + "password"),
            project_name=get("auth", prefix + "project_name"),
            domain_name=get("auth", "domain_name", "Default"),
            token=get("auth", prefix + "token"))

    return Config(
        auth_url=get("auth", "auth_url").rstrip("/"),
        user=creds(""),
        admin=creds("admin_"),
        region=get("auth", "region", "RegionOne"),
        compute_endpoint=get("compute", "endpoint").rstrip("/"),
        volume_endpoint=get("volume", "endpoint").rstrip("/"),
        image_ref=get("compute", "image_ref"),
        flavor_ref=get("compute", "flavor_ref"),
        build_timeout=int(get("compute", "build_timeout", "300")),
        build_interval=float(get("compute", "build_interval", "0.5")),
        volume_size=int(get("volume", "volume_size", "1")),
        compute_max_microversion=get("compute", "max_microversion",
                                     "2.89"),
        volume_max_microversion=get("volume", "max_microversion", "3.44"),
        multiattach=flag("volume", "multiattach", True),
        concurrent_attachments=int(get("volume", "concurrent_attachments",
                                       "4")),
        libvirt_uri=get("validation", "libvirt_uri", "qemu:///system"),
        guest_agent=flag("validation", "guest_agent", True),
        nova_db_url=get("validation", "nova_db_url"),
        agent_timeout=int(get("validation", "agent_timeout", "120")),
    )
