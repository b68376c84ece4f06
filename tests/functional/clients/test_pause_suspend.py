"""Pause, unpause, suspend and resume, and server properties, with the
real ``openstack`` CLI, as a user types them.

One deployment for the module (conftest), with keystone: a server made
with ``--property``, a volume added to it, then ``openstack server
pause`` / ``unpause`` / ``suspend`` / ``resume`` (each waited for in
``server show``), the volume in-use on the server all along; ``server
set --property`` and ``server unset --property`` change its metadata;
an action in the wrong state is refused with a clean error. The server
and the volume are deleted at the end.
"""

from tests.functional.clients.test_openstack_clients import _clean_error
from tests.functional.clients.test_openstack_clients import _get
from tests.functional.clients.test_openstack_clients import _wait_volume
from tests.support import waiting


def _wait_status(cli, server, wanted, timeout=180):
    waiting.wait_for(
        "server %s to be %s" % (server, wanted),
        lambda: _get(cli.json("server", "show", server), "status"),
        lambda status: status == wanted, timeout=timeout, interval=1)


def _properties(cli, server):
    return _get(cli.json("server", "show", server), "properties")


def test_pause_suspend_with_a_volume_and_properties(deployment):
    admin = deployment["admin"]
    name = "cl%s-ps" % deployment["run"]
    server = admin.json("server", "create", "--image",
                        deployment["image"]["name"], "--flavor", "m1.nano",
                        "--nic", "none", "--property", "hello=world",
                        "--wait", name, timeout=600)
    assert _get(server, "status") == "ACTIVE"
    assert _properties(admin, name) == {"hello": "world"}
    rc, out, err = admin.openstack("server", "set", "--property", "k2=v2",
                                   name)
    assert rc == 0, out + err
    assert _properties(admin, name) == {"hello": "world", "k2": "v2"}
    rc, out, err = admin.openstack("server", "unset", "--property",
                                   "hello", name)
    assert rc == 0, out + err
    assert _properties(admin, name) == {"k2": "v2"}

    volume = admin.json("volume", "create", "--size", "1",
                        "cl%s-psvol" % deployment["run"])
    volume_id = _get(volume, "id")
    _wait_volume(admin, volume_id, "available")
    rc, out, err = admin.openstack("server", "add", "volume", name,
                                   volume_id)
    assert rc == 0, out + err
    _wait_volume(admin, volume_id, "in-use")

    _clean_error(*admin.openstack("server", "unpause", name))
    for command, status in (("pause", "PAUSED"), ("unpause", "ACTIVE"),
                            ("suspend", "SUSPENDED"), ("resume", "ACTIVE")):
        rc, out, err = admin.openstack("server", command, name)
        assert rc == 0, out + err
        _wait_status(admin, name, status)
        shown = admin.json("volume", "show", volume_id)
        assert _get(shown, "status") == "in-use"
        assert _get(shown, "attachments")[0]["server_id"] == \
            _get(server, "id")
    _clean_error(*admin.openstack("server", "resume", name))
    actions = admin.json("server", "event", "list", name)
    assert [_get(a, "Action") for a in actions][:4] == [
        "resume", "suspend", "unpause", "pause"]

    rc, out, err = admin.openstack("server", "delete", "--wait", name,
                                   timeout=300)
    assert rc == 0, out + err
    _wait_volume(admin, volume_id, "available")
    rc, out, err = admin.openstack("volume", "delete", volume_id)
    assert rc == 0, out + err
