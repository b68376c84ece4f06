"""Resize with the real ``openstack`` CLI, as a user types it: a server
of the demo user with a volume attached is resized
(``openstack server resize --flavor 84 --wait``: VERIFY_RESIZE), the
resize confirmed (``openstack server resize confirm``: ACTIVE with
m1.micro), then resized back and reverted
(``openstack server resize revert``: m1.micro again); the volume stays
in-use on the server throughout. Both are deleted at the end."""

from tests.functional.clients.test_openstack_clients import _get
from tests.functional.clients.test_openstack_clients import _wait_volume
from tests.support import waiting


def _show(cli, server):
    return cli.json("server", "show", server)


def _wait_status(cli, server, status):
    waiting.wait_for("server %s %s" % (server, status),
                     lambda: _get(_show(cli, server), "status"),
                     lambda found: found == status,
                     lambda found: found == "ERROR", timeout=300,
                     interval=1)


def _flavor_name(cli, server):
    flavor = _get(_show(cli, server), "flavor")
    return flavor.get("name") or flavor.get("original_name") \
        if isinstance(flavor, dict) else str(flavor)


def _volume_on(cli, volume_id, server_id):
    _wait_volume(cli, volume_id, "in-use")
    attachments = _get(cli.json("volume", "show", volume_id), "attachments")
    assert [a["server_id"] for a in attachments] == [server_id]


def test_resize_confirm_and_revert_with_a_volume(deployment):
    demo = deployment["demo"]
    name = "cl%s-resize" % deployment["run"]
    vol_name = "cl%s-resizevol" % deployment["run"]
    server = demo.json("server", "create", "--image",
                       deployment["image"]["name"], "--flavor", "42",
                       "--nic", "none", "--wait", name, timeout=600)
    assert _get(server, "status") == "ACTIVE"
    server_id = _get(server, "id")
    volume_id = _get(demo.json("volume", "create", "--size", "1",
                               vol_name), "id")
    try:
        _wait_volume(demo, volume_id, "available")
        rc, out, err = demo.openstack("server", "add", "volume", name,
                                      vol_name)
        assert rc == 0, out + err
        _wait_volume(demo, volume_id, "in-use")

        rc, out, err = demo.openstack("server", "resize", "--flavor", "84",
                                      "--wait", name, timeout=600)
        assert rc == 0, out + err
        _wait_status(demo, name, "VERIFY_RESIZE")
        _volume_on(demo, volume_id, server_id)
        rc, out, err = demo.openstack("server", "resize", "confirm", name)
        assert rc == 0, out + err
        _wait_status(demo, name, "ACTIVE")
        assert "m1.micro" in _flavor_name(demo, name)
        _volume_on(demo, volume_id, server_id)

        rc, out, err = demo.openstack("server", "resize", "--flavor", "42",
                                      "--wait", name, timeout=600)
        assert rc == 0, out + err
        _wait_status(demo, name, "VERIFY_RESIZE")
        rc, out, err = demo.openstack("server", "resize", "revert", name)
        assert rc == 0, out + err
        _wait_status(demo, name, "ACTIVE")
        assert "m1.micro" in _flavor_name(demo, name)
        _volume_on(demo, volume_id, server_id)
    finally:
        demo.openstack("server", "delete", "--wait", name, timeout=300)
        _wait_volume(demo, volume_id, "available")
        demo.openstack("volume", "delete", volume_id)
