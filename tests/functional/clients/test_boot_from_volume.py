"""Boot from volume with the real ``openstack`` CLI, as a user types it.

One deployment for the module (conftest), with keystone: a server whose
root volume the host creates from the image (``--boot-from-volume``), and
one booted from a volume the user made (``--volume``); each reaches
ACTIVE, shows no image and its volume, and ``server delete --wait``
leaves the volume available with no attachment (the CLI asks for no
delete_on_termination), after which the test deletes it.
"""

from tests.functional.clients.test_openstack_clients import _get
from tests.functional.clients.test_openstack_clients import _wait_volume
from tests.support import waiting

BFV_IMAGE_STRING = "N/A (booted from volume)"


def _attached_ids(shown):
    volumes = _get(shown, "volumes_attached",
                   "os-extended-volumes:volumes_attached")
    return [v["id"] for v in volumes]


def _delete_and_release(admin, server, volume_id):
    rc, out, err = admin.openstack("server", "delete", "--wait", server,
                                   timeout=300)
    assert rc == 0, out + err
    _wait_volume(admin, volume_id, "available")
    rc, out, err = admin.openstack("volume", "attachment", "list",
                                   "--volume-id", volume_id, "-f", "value",
                                   "--os-volume-api-version", "3.44")
    assert rc == 0 and out.strip() == "", out + err
    rc, out, err = admin.openstack("volume", "delete", volume_id)
    assert rc == 0, out + err
    waiting.wait_for("volume %s deleted" % volume_id,
                     lambda: admin.openstack("volume", "show", volume_id)[0],
                     lambda rc: rc != 0, timeout=120, interval=1)


def test_server_create_boot_from_volume(deployment):
    admin = deployment["admin"]
    name = "cl%s-bfv" % deployment["run"]
    server = admin.json("server", "create", "--image",
                        deployment["image"]["name"], "--boot-from-volume",
                        "1", "--flavor", "42", "--nic", "none", "--wait",
                        name, timeout=600)
    assert _get(server, "status") == "ACTIVE"
    shown = admin.json("server", "show", name)
    assert _get(shown, "image") == BFV_IMAGE_STRING
    [volume_id] = _attached_ids(shown)
    volume = admin.json("volume", "show", volume_id)
    assert _get(volume, "status") == "in-use"
    assert str(_get(volume, "bootable")).lower() == "true"
    _delete_and_release(admin, name, volume_id)


def test_server_create_from_user_volume(deployment):
    admin = deployment["admin"]
    vol_name = "cl%s-bootvol" % deployment["run"]
    volume = admin.json("volume", "create", "--image",
                        deployment["image"]["name"], "--size", "1",
                        "--bootable", vol_name)
    volume_id = _get(volume, "id")
    _wait_volume(admin, volume_id, "available", timeout=180)
    name = "cl%s-fromvol" % deployment["run"]
    server = admin.json("server", "create", "--volume", vol_name,
                        "--flavor", "42", "--nic", "none", "--wait", name,
                        timeout=600)
    assert _get(server, "status") == "ACTIVE"
    shown = admin.json("server", "show", name)
    assert _get(shown, "image") == BFV_IMAGE_STRING
    assert _attached_ids(shown) == [volume_id]
    assert _get(admin.json("volume", "show", volume_id),
                "status") == "in-use"
    _delete_and_release(admin, name, volume_id)
