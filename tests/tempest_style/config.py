"""The suite's configuration: which cloud to test, read from an INI file.

Like tempest.conf, the file describes a deployed endpoint, so the same suite
can run against ministack or against a real OpenStack cloud. The path comes
from ``$MINISTACK_TEMPEST_CONF`` (default ``/etc/ministack/tempest.conf``,
written by devstack/stack.sh). See ``tempest.conf.sample``.
"""

import configparser
import dataclasses
import os

DEFAULT_PATH = "/etc/ministack/tempest.conf"


@dataclasses.dataclass
class Config:
    compute_endpoint: str
    volume_endpoint: str
    project_id: str
    auth_token: str
    admin_project_id: str
    admin_token: str
    image_ref: str
    flavor_ref: str
    build_timeout: int = 300
    build_interval: float = 0.5
    volume_size: int = 1
    compute_microversion: str = "2.89"
    volume_microversion: str = "3.44"
    libvirt_uri: str = "qemu:///system"
    guest_agent: bool = True


def load(path=None):
    """Read the suite's INI file into a :class:`Config`."""
    path = path or os.environ.get("MINISTACK_TEMPEST_CONF", DEFAULT_PATH)
    parser = configparser.ConfigParser()
    if not parser.read(path):
        raise FileNotFoundError(
            "tempest-style config %s not found: run devstack/stack.sh or "
            "set MINISTACK_TEMPEST_CONF" % path)

    def get(section, key, fallback=None):
        value = parser.get(section, key, fallback=fallback)
        if value is None:
            raise KeyError("[%s] %s missing from %s" % (section, key, path))
        return value

    return Config(
        compute_endpoint=get("compute", "endpoint").rstrip("/"),
        volume_endpoint=get("volume", "endpoint").rstrip("/"),
        project_id=get("auth", "project_id"),
        auth_token=get("auth", "token"),
        admin_project_id=get("auth", "admin_project_id"),
        admin_token=get("auth", "admin_token"),
        image_ref=get("compute", "image_ref"),
        flavor_ref=get("compute", "flavor_ref"),
        build_timeout=int(get("compute", "build_timeout", "300")),
        build_interval=float(get("compute", "build_interval", "0.5")),
        volume_size=int(get("volume", "volume_size", "1")),
        compute_microversion=get("compute", "microversion", "2.89"),
        volume_microversion=get("volume", "microversion", "3.44"),
        libvirt_uri=get("validation", "libvirt_uri", "qemu:///system"),
        guest_agent=parser.getboolean("validation", "guest_agent",
                                      fallback=True),
    )
