"""The real, unmodified clients against the miniapi daemon.

novaclient (library, token_endpoint auth with a ``user:project`` token)
and openstacksdk (``auth_type: none`` with endpoint overrides) discover
the version, list flavors, create a server, read it back and list its
actions and volume attachments, exactly as OSC does underneath.
"""

import pytest

from tests.support import miniapi_daemon

novaclient = pytest.importorskip("novaclient.client")
openstack = pytest.importorskip("openstack")


def test_novaclient(api_daemon):
    from keystoneauth1 import session
    from keystoneauth1 import token_endpoint
    sess = session.Session(auth=token_endpoint.Token(
        api_daemon.url + "/v2.1", "admin:p1"))
    nova = novaclient.Client("2.79", session=sess)
    assert "m1.nano" in [f.name for f in nova.flavors.list()]
    server = nova.servers.create("nc-vm", miniapi_daemon.IMAGE_ID, "42",
                                 nics="none")
    assert nova.servers.get(server.id).status == "ERROR"  # no compute host
    assert server.id in [s.id for s in nova.servers.list()]
    assert [a.action for a in nova.instance_action.list(server.id)] == \
        ["create"]
    assert nova.volumes.get_server_volumes(server.id) == []
    nova.servers.delete(server.id)


def test_openstacksdk(api_daemon):
    url = api_daemon.url + "/v2.1"
    conn = openstack.connect(auth_type="none",
                             compute_endpoint_override=url,
                             identity_endpoint_override=url,
                             image_endpoint_override=url)
    assert "m1.tiny" in [f.name for f in conn.compute.flavors()]
    flavor = conn.compute.find_flavor("m1.nano")
    assert flavor.ram == 128
    server = conn.compute.create_server(
        name="sdk-vm", image_id=miniapi_daemon.IMAGE_ID, flavor_id=flavor.id,
        networks="none")
    found = conn.compute.find_server("sdk-vm")
    assert found is not None and found.id == server.id
    assert conn.compute.get_server(server.id).status == "ERROR"
    assert [a.action for a in conn.compute.server_actions(server.id)] == \
        ["create"]
    assert list(conn.compute.volume_attachments(server.id)) == []
    conn.compute.delete_server(server.id)
