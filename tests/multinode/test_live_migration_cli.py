"""``openstack server migrate --live-migration`` with the real CLI, as an
admin types it, on the deployed two-host lab (``COMPUTE_HOSTS=2
./lab.sh``): a server with a volume attached goes to the other host with
``--host`` and ``--wait`` (compute 2.30, so the scheduler checks the
host), and back without ``--host`` (the scheduler picks the only other
host). The volume stays in-use with one attachment. Skipped without a
two-host lab; the server and the volume are deleted at the end."""

import json
import uuid

import pytest

from tests.support import lab_hosts
from tests.support import login_shell

pytestmark = pytest.mark.slow

HOSTS = lab_hosts.Hosts()


def _openstack(args, timeout=900):
    done = login_shell.login_shell(
        "openstack --os-cloud ministack-admin %s" % args, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def _json(args):
    rc, out, err = _openstack(args + " -f json")
    assert rc == 0, out + err
    return json.loads(out)


def _wait_volume(volume, status):
    login_shell.login_shell(
        "for i in $(seq 120); do [ \"$(openstack --os-cloud ministack-admin "
        "volume show %s -f value -c status)\" = %s ] && exit 0; sleep 1; "
        "done; exit 1" % (volume, status), timeout=300)
    assert _json("volume show %s" % volume)["status"] == status


def test_live_migrate_with_the_cli(two_host_lab):
    if len(HOSTS) < 2:
        pytest.skip("no two-host lab: COMPUTE_HOSTS=2 ./lab.sh")
    name = "cli-livemig-%s" % uuid.uuid4().hex[:8]
    first, second = HOSTS[:2]
    try:
        server = _json("--os-compute-api-version 2.74 server create "
                       "--host %s --image ministack-guest --flavor 42 "
                       "--nic none --wait %s" % (first, name))
        assert server["status"] == "ACTIVE"
        volume = _json("volume create --size 1 %s-vol" % name)["id"]
        _wait_volume(volume, "available")
        rc, out, err = _openstack("server add volume %s %s" % (name, volume))
        assert rc == 0, out + err
        _wait_volume(volume, "in-use")
        for version, host, wanted in (("2.30", "--host %s" % second, second),
                                      ("2.25", "", first)):
            rc, out, err = _openstack(
                "--os-compute-api-version %s server migrate "
                "--live-migration %s --wait %s" % (version, host, name))
            assert rc == 0, out + err
            shown = _json("server show %s" % name)
            assert (shown["status"], shown["OS-EXT-SRV-ATTR:host"]) == \
                ("ACTIVE", wanted), shown
            assert _json("volume show %s" % volume)["status"] == "in-use"
            attachments = _json("volume show %s" % volume)["attachments"]
            assert len(attachments) == 1, attachments
    finally:
        _openstack("server delete --wait %s" % name)
        login_shell.login_shell(
            "for i in $(seq 60); do openstack --os-cloud ministack-admin "
            "volume delete %s-vol && exit 0; sleep 2; done" % name,
            timeout=300)
