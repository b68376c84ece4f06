"""Cinder exports to exactly the host of the connector, as the seed says.

* an attach on either host: the export's ACL admits that host's
  initiator and no other, and the guest's disk is logged in from that
  host's own address; the detach removes both;
* another host cannot log in to the export, though it knows the CHAP
  account (tgt refuses its initiator);
* one multiattach volume on servers of both hosts: two ACL entries, data
  written on one host read on the other, each detach removing only its
  own host's entry;
* two servers of one host sharing a multiattach volume: detaching one
  keeps the other's connection (its session, the host's CHAP secret,
  the host's ACL entry), as nova's ``_disconnect_volume`` does.
"""

import os
import subprocess

import pytest

from tests.multinode import conftest as mn
from tests.tempest_style import waiters

MULTIATTACH = "2.60"


def _volume(admin, cleanup, **kwargs):
    return admin.create_volume(cleanup, **kwargs)["id"]


def _attach(admin, cleanup, server_id, volume_id, multiattach=False):
    admin.attach_volume(cleanup, server_id, volume_id,
                        microversion=MULTIATTACH if multiattach else None,
                        multiattach=multiattach)


def _connection_info(admin, volume_id, server_id):
    """The connection_info Cinder gave the server's host (3.44)."""
    attachments = admin.volumes.request(
        "GET", "/attachments?volume_id=%s" % volume_id, expected=200,
        microversion="3.44")[2]["attachments"]
    found = [a for a in attachments if a["instance"] == server_id]
    assert len(found) == 1, attachments
    return admin.volumes.request(
        "GET", "/attachments/%s" % found[0]["id"], expected=200,
        microversion="3.44")[2]["attachment"]["connection_info"]


def _wait_sessions(volume_id, wanted):
    return waiters.wait_for(
        "the sessions of %s to be %s" % (volume_id, wanted),
        lambda: mn.sessions_of(volume_id), lambda found: found == wanted,
        timeout=60)


def _secrets(uri):
    return mn.virsh(uri, "secret-list")


@pytest.mark.parametrize("which", ["first", "compute2"])
def test_attach_exports_to_that_host_only(admin, cleanup, hosts, pinned,
                                          first_host, guest_of, which):
    host = first_host if which == "first" else which
    server_id = pinned[host][0]
    volume_id = _volume(admin, cleanup)
    _attach(admin, cleanup, server_id, volume_id)
    iqn = mn.initiator_of(host, first_host)
    assert mn.acl_of(volume_id) == [iqn]
    _wait_sessions(volume_id, {iqn: [hosts[host].my_ip]})
    assert guest_of(server_id).device_for(volume_id)
    admin.detach_volume(server_id, volume_id)
    assert mn.acl_of(volume_id) == []
    _wait_sessions(volume_id, {})


def test_another_host_cannot_log_in(admin, cleanup, pinned, first_host):
    """compute2, with the CHAP account of a disk exported to the first
    host, logs in from its own namespace with its own initiator name:
    tgt refuses it. The first host's own login works (the control)."""
    server_id = pinned[first_host][0]
    volume_id = _volume(admin, cleanup)
    _attach(admin, cleanup, server_id, volume_id)
    info = _connection_info(admin, volume_id, server_id)
    env = dict(os.environ, LIBISCSI_CHAP_USERNAME=info["auth_username"],
               LIBISCSI_CHAP_PASSWORD=info["auth_password"])
    url = "iscsi://%s/%s/%d" % (info["target_portal"], info["target_iqn"],
                                info["target_lun"])

    def inquiry(prefix, initiator):
        return subprocess.run(prefix + ["iscsi-inq", "-i", initiator, url],
                              env=env, capture_output=True, text=True,
                              timeout=60)

    other = inquiry(["ip", "netns", "exec", "ministack-compute2"],
                    mn.initiator_of("compute2", first_host))
    assert other.returncode != 0, other.stdout
    own = inquiry([], mn.initiator_of(first_host, first_host))
    assert own.returncode == 0, own.stdout + own.stderr
    assert mn.acl_of(volume_id) == [mn.initiator_of(first_host, first_host)]


@pytest.fixture
def multiattach_volume(admin, cleanup):
    vtype = admin.create_multiattach_type(cleanup)
    return _volume(admin, cleanup, volume_type=vtype["name"])


def test_multiattach_across_hosts(admin, cleanup, hosts, pinned, first_host,
                                  guest_of, multiattach_volume):
    volume_id = multiattach_volume
    a, b = pinned[first_host][0], pinned["compute2"][0]
    iqn_a = mn.initiator_of(first_host, first_host)
    iqn_b = mn.initiator_of("compute2", first_host)
    _attach(admin, cleanup, a, volume_id, multiattach=True)
    _attach(admin, cleanup, b, volume_id, multiattach=True)
    assert mn.acl_of(volume_id) == sorted([iqn_a, iqn_b])
    _wait_sessions(volume_id, {iqn_a: [hosts[first_host].my_ip],
                               iqn_b: [hosts["compute2"].my_ip]})
    writer, reader = guest_of(a), guest_of(b)
    data = os.urandom(4096)
    writer.write(writer.device_for(volume_id), data)
    assert reader.read(reader.device_for(volume_id), len(data)) == data
    # Each detach takes away its own host's entry, and only that.
    admin.detach_volume(a, volume_id, status="in-use")
    assert mn.acl_of(volume_id) == [iqn_b]
    _wait_sessions(volume_id, {iqn_b: [hosts["compute2"].my_ip]})
    assert reader.read(reader.device_for(volume_id), len(data)) == data
    admin.detach_volume(b, volume_id)
    assert mn.acl_of(volume_id) == []


def test_one_hosts_detach_keeps_the_connection_another_guest_needs(
        admin, cleanup, hosts, pinned, first_host, guest_of,
        multiattach_volume):
    volume_id = multiattach_volume
    b, c = pinned["compute2"]
    uri = hosts["compute2"].libvirt_uri
    iqn = mn.initiator_of("compute2", first_host)
    _attach(admin, cleanup, b, volume_id, multiattach=True)
    _attach(admin, cleanup, c, volume_id, multiattach=True)
    info = _connection_info(admin, volume_id, b)
    # The CHAP secret's usage is ministack-chap-<target iqn>.
    assert info["target_iqn"] in _secrets(uri), _secrets(uri)
    data = os.urandom(2048)
    writer = guest_of(b)
    writer.write(writer.device_for(volume_id), data)

    admin.detach_volume(b, volume_id, status="in-use")
    # The host still needs the target for c: its ACL entry, the CHAP
    # secret in the host's libvirtd and c's session stay.
    assert mn.acl_of(volume_id) == [iqn]
    assert mn.sessions_of(volume_id) == {iqn: [hosts["compute2"].my_ip]}
    assert info["target_iqn"] in _secrets(uri)
    reader = guest_of(c)
    assert reader.read(reader.device_for(volume_id), len(data)) == data

    admin.detach_volume(c, volume_id)
    assert mn.acl_of(volume_id) == []
    _wait_sessions(volume_id, {})
    assert info["target_iqn"] not in _secrets(uri)
