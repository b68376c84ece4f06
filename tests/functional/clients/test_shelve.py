"""Shelve and unshelve with the real ``openstack`` CLI, as a user types
it: a server of the demo user with a volume attached is shelved
(``--wait``; the cloud offloads at once), unshelved (``--wait``), and
its volume is in-use again on the server; then both are deleted."""

from tests.functional.clients.test_openstack_clients import _get
from tests.functional.clients.test_openstack_clients import _wait_volume
from tests.support import waiting


def _status(cli, server):
    return _get(cli.json("server", "show", server), "status")


def test_shelve_and_unshelve_with_a_volume(deployment):
    demo = deployment["demo"]
    name = "cl%s-shelve" % deployment["run"]
    vol_name = "cl%s-shelvevol" % deployment["run"]
    server = demo.json("server", "create", "--image",
                       deployment["image"]["name"], "--flavor", "42",
                       "--nic", "none", "--wait", name, timeout=600)
    assert _get(server, "status") == "ACTIVE"
    volume_id = _get(demo.json("volume", "create", "--size", "1",
                               vol_name), "id")
    try:
        _wait_volume(demo, volume_id, "available")
        rc, out, err = demo.openstack("server", "add", "volume", name,
                                      vol_name)
        assert rc == 0, out + err
        _wait_volume(demo, volume_id, "in-use")

        rc, out, err = demo.openstack("server", "shelve", "--wait", name,
                                      timeout=300)
        assert rc == 0, out + err
        waiting.wait_for("server %s offloaded" % name,
                         lambda: _status(demo, name),
                         lambda status: status == "SHELVED_OFFLOADED",
                         lambda status: status == "ERROR", timeout=180,
                         interval=1)
        _wait_volume(demo, volume_id, "reserved")

        rc, out, err = demo.openstack("server", "unshelve", "--wait", name,
                                      timeout=600)
        assert rc == 0, out + err
        assert _status(demo, name) == "ACTIVE"
        _wait_volume(demo, volume_id, "in-use")
        attachments = _get(demo.json("volume", "show", volume_id),
                           "attachments")
        assert [a["server_id"] for a in attachments] == [
            _get(server, "id")]
    finally:
        demo.openstack("server", "delete", "--wait", name, timeout=300)
        _wait_volume(demo, volume_id, "available")
        demo.openstack("volume", "delete", volume_id)
