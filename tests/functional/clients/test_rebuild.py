"""``openstack server rebuild`` with the real CLI, as a user types it.

One deployment for the module (conftest), with keystone and nova's
service token (the rebuild deletes the volume's old attachment while the
BDM still names it, which Cinder allows only to a service): a server
with a volume attached is rebuilt with ``--wait``; it is ACTIVE again,
the volume in-use with one attachment, a new one. The test deletes what
it made.
"""

from tests.functional.clients.test_openstack_clients import _get
from tests.functional.clients.test_openstack_clients import _wait_volume


def _attachment_ids(admin, volume_id):
    rc, out, err = admin.openstack("volume", "attachment", "list",
                                   "--volume-id", volume_id, "-f", "value",
                                   "-c", "ID", "--os-volume-api-version",
                                   "3.44")
    assert rc == 0, out + err
    return out.split()


def test_server_rebuild_with_volume(deployment):
    admin = deployment["admin"]
    name = "cl%s-rebuild" % deployment["run"]
    vol_name = "cl%s-rebuild-vol" % deployment["run"]
    server = admin.json("server", "create", "--image",
                        deployment["image"]["name"], "--flavor", "42",
                        "--nic", "none", "--wait", name, timeout=600)
    assert _get(server, "status") == "ACTIVE"
    volume_id = _get(admin.json("volume", "create", "--size", "1",
                                vol_name), "id")
    _wait_volume(admin, volume_id, "available")
    rc, out, err = admin.openstack("server", "add", "volume", name,
                                   vol_name)
    assert rc == 0, out + err
    _wait_volume(admin, volume_id, "in-use")
    [before] = _attachment_ids(admin, volume_id)

    rc, out, err = admin.openstack("server", "rebuild", "--image",
                                   "ministack-guest", "--wait", name,
                                   timeout=600)
    assert rc == 0, out + err

    shown = admin.json("server", "show", name)
    assert _get(shown, "status") == "ACTIVE"
    assert _get(admin.json("volume", "show", volume_id),
                "status") == "in-use"
    [after] = _attachment_ids(admin, volume_id)
    assert after != before
    actions = [_get(a, "Action") for a in
               admin.json("server", "event", "list", name)]
    assert "rebuild" in actions

    rc, out, err = admin.openstack("server", "delete", "--wait", name,
                                   timeout=300)
    assert rc == 0, out + err
    _wait_volume(admin, volume_id, "available")
    rc, out, err = admin.openstack("volume", "delete", volume_id)
    assert rc == 0, out + err
