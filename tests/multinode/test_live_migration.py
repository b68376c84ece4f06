"""Live migration with an attached volume on the deployed two-host lab
(``COMPUTE_HOSTS=2 ./lab.sh``), as the admin asks it (``os-migrateLive``
at 2.25 with ``block_migration: auto``, the host named).

* success, there and back: the guest reads on its new host what it
  wrote to the volume before; the volume has exactly one attachment,
  the BDM's, on the new host; tgt's ACL names only the new host's
  initiator; the migration is ``completed``; ``ministack-audit`` is
  clean.
* the destination's ``pre_live_migration`` fails for real (the
  instance's directory already exists there: ``DestinationDiskExists``):
  the server is ACTIVE on the source, one attachment, the source's ACL
  only, the migration ``failed``, the audit clean.

Skipped without a two-host lab. Everything made is deleted even when a
test fails (``Cleanups``).
"""

import configparser
import os
import shutil

import pytest

from minicompute import hosts as compute_hosts
from tests.multinode import conftest as mn
from tests.support import lab_hosts
from tests.support import login_shell
from tests.support.cleanups import Cleanups
from tests.tempest_style import auth
from tests.tempest_style import base
from tests.tempest_style import clients
from tests.tempest_style import config as suite_config
from tests.tempest_style import guest as guest_mod
from tests.tempest_style import waiters

pytestmark = pytest.mark.slow

HOSTS = lab_hosts.Hosts()
VERSION = "2.25"
DATA = b"written before the live migration\n" * 16


@pytest.fixture(scope="module")
def lab(two_host_lab):
    if len(HOSTS) < 2 or not os.path.exists(suite_config.DEFAULT_PATH):
        pytest.skip("no two-host lab: COMPUTE_HOSTS=2 ./lab.sh")
    conf = suite_config.load()
    session = auth.authenticate(conf, conf.admin, admin=True)
    compute = clients.ComputeClient(session.compute_endpoint, session.token)
    volumes = clients.VolumeClient(session.volume_endpoint, session.token)
    cloud = base.Cloud(conf, compute, volumes, compute, volumes)
    stack = Cleanups()
    try:
        yield {"cloud": cloud, "cleanup": stack,
               "hosts": compute_hosts.compute_hosts()}
    finally:
        stack.run()


@pytest.fixture(scope="module")
def server(lab):
    """(server id, volume id): a server on the first host with a volume
    attached, DATA written to it from the guest."""
    cloud, cleanup = lab["cloud"], lab["cleanup"]
    server_id = mn.boot_on(cloud, cleanup, HOSTS[0], "livemig")
    mn.wait_active(cloud, server_id)
    volume_id = cloud.create_volume(cleanup)["id"]
    cloud.attach_volume(cleanup, server_id, volume_id)
    guest = _guest(lab, server_id)
    guest.write(guest.device_for(volume_id), DATA)
    return server_id, volume_id


def _instances_path(host):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(host.config_file)
    return parser.get("compute", "instances_path")


def _host(cloud, server_id):
    return mn.server_host(cloud, server_id)


def _guest(lab, server_id):
    uri = lab["hosts"][_host(lab["cloud"], server_id)].libvirt_uri
    found = guest_mod.Guest(mn._HostConf(lab["cloud"].conf, uri),
                            lab["cloud"].admin_compute, server_id)
    found.wait_for_agent()
    return found


def _migrate(cloud, server_id, host):
    cloud.compute.request(
        "POST", "/servers/%s/action" % server_id,
        {"os-migrateLive": {"block_migration": "auto", "host": host}},
        expected=202, microversion=VERSION)


def _wait_settled(cloud, server_id):
    return waiters.wait_for(
        "server %s to leave task_state migrating" % server_id,
        lambda: cloud.admin_compute.show_server(server_id)["server"],
        lambda s: s["OS-EXT-STS:task_state"] is None, timeout=300)


def _migration(cloud, server_id):
    found = cloud.compute.request(
        "GET", "/os-migrations?instance_uuid=%s" % server_id,
        expected=200, microversion="2.23")[2]["migrations"]
    return sorted(found, key=lambda m: m["id"])[-1]


def _attachments(cloud, volume_id):
    return cloud.volumes.request(
        "GET", "/attachments?volume_id=%s" % volume_id, expected=200,
        microversion="3.44")[2]["attachments"]


def _assert_on(lab, server_id, volume_id, host):
    cloud = lab["cloud"]
    shown = cloud.admin_compute.show_server(server_id)["server"]
    assert (shown["status"], shown["OS-EXT-SRV-ATTR:host"]) == \
        ("ACTIVE", host), shown
    assert len(_attachments(cloud, volume_id)) == 1
    assert cloud.volumes.show_volume(volume_id)["volume"]["status"] == \
        "in-use"
    assert mn.acl_of(volume_id) == [mn.initiator_of(host, HOSTS[0])]
    guest = _guest(lab, server_id)
    assert guest.read(guest.device_for(volume_id), len(DATA)) == DATA
    _audit_clean()


def _audit_clean():
    done = login_shell.login_shell("ministack-audit --grace 0",
                                   timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_there_and_back(lab, server):
    server_id, volume_id = server
    cloud = lab["cloud"]
    for dest in (HOSTS[1], HOSTS[0]):
        _migrate(cloud, server_id, dest)
        _wait_settled(cloud, server_id)
        assert _migration(cloud, server_id)["status"] == "completed"
        _assert_on(lab, server_id, volume_id, dest)


def test_destination_refusal_is_rolled_back(lab, server):
    server_id, volume_id = server
    cloud = lab["cloud"]
    source = _host(cloud, server_id)
    dest = [h for h in HOSTS if h != source][0]
    dest_dir = os.path.join(_instances_path(lab["hosts"][dest]), server_id)
    os.makedirs(dest_dir)
    lab["cleanup"].add(shutil.rmtree, dest_dir, True)
    _migrate(cloud, server_id, dest)
    _wait_settled(cloud, server_id)
    assert _migration(cloud, server_id)["status"] == "failed"
    _assert_on(lab, server_id, volume_id, source)
