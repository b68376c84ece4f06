"""Pause/unpause and suspend/resume of a server with a volume attached,
for real: miniapi's REST actions as ``openstack server pause`` sends
them, minicompute pausing the QEMU guest (virDomainSuspend) and saving
it with libvirt's managed save, the real LVM/tgt volume attached all
along.

Checked on every layer: the server's status, libvirt's domain state
(``virsh domstate``, ``virsh dominfo``'s managed save), the volume's
status and attachment in Cinder (the same attachment throughout: no
Cinder call on this path), nova's BDM row, ``virsh domblklist``, and
inside the guest the volume by its serial with the data written before
read back; after resume the guest's uptime goes on (its memory was
restored, it did not boot again). Each action is recorded with its
compute event.
"""

import pytest

from ministack import executor
from tests.support import private_stack
from tests.support import waiting

pytestmark = pytest.mark.slow

DATA = b"ministack pause/suspend " * 20


@pytest.fixture(scope="module")
def server(stack):
    """One ACTIVE server on our compute host, deleted at module end."""
    with private_stack.servers(stack["nova"], stack["image"]["id"],
                               "ps%s" % stack["run"], 1) as ids:
        yield ids[0]


def _virsh(*argv):
    out, _ = executor.execute("virsh", "-c", "qemu:///system", *argv)
    return out


def _domstate(dom):
    return _virsh("domstate", dom).strip()


def _managed_save(dom):
    for line in _virsh("dominfo", dom).splitlines():
        if line.startswith("Managed save:"):
            return line.split(":", 1)[1].strip()
    return None


def _uptime(probe, dom):
    rc, out, err = probe.guest(dom, ["/bin/cat", "/proc/uptime"])
    assert rc == 0, err
    return float(out.split()[0])


def _act(nova, server, action, status):
    resp = nova.req("POST", "/servers/%s/action" % server,
                    json={action: None})
    assert resp.status_code == 202, resp.text
    assert resp.text == ""
    nova.wait_server(server, status, timeout=120)
    detail = nova.finished_action(server, action)
    assert [(e["event"], e["result"]) for e in detail["events"]] == [
        ("compute_%s_instance" % action, "Success")]


def _volume_unchanged(stack, server, vid, attachment_id, dev):
    """The volume as it was attached: in-use with the same one
    attachment, the BDM wired, the disk in the domain."""
    cinder, probe = stack["cinder"], stack["probe"]
    assert cinder.status(vid) == "in-use"
    assert [a["id"] for a in cinder.attachments(vid)] == [attachment_id]
    bdm = probe.bdm(server, vid)
    assert bdm["connection_info"] and bdm["attachment_id"] == attachment_id
    assert dev in probe.domblklist(probe.domain_name(server))


def test_pause_and_suspend_keep_the_volume(stack, server, volumes):
    nova, cinder, probe = stack["nova"], stack["cinder"], stack["probe"]
    dom = probe.domain_name(server)
    vid = volumes("pause")
    resp = nova.attach(server, vid)
    assert resp.status_code == 200, resp.text
    dev = resp.json()["volumeAttachment"]["device"].rpartition("/")[2]
    cinder.wait_status(vid, "in-use")
    guest_dev = waiting.wait_for(
        "volume %s in %s" % (vid, dom),
        lambda: probe.guest_dev_for(dom, vid), timeout=60)
    probe.write_block(dom, guest_dev, DATA)
    attachment_id = probe.bdm(server, vid)["attachment_id"]

    # pause: the vCPUs stop, the volume stays
    _act(nova, server, "pause", "PAUSED")
    assert _domstate(dom) == "paused"
    _volume_unchanged(stack, server, vid, attachment_id, dev)
    resp = nova.req("POST", "/servers/%s/action" % server,
                    json={"suspend": None})
    assert resp.status_code == 409, resp.text
    _act(nova, server, "unpause", "ACTIVE")
    assert _domstate(dom) == "running"
    assert probe.read_block(dom, guest_dev, len(DATA)) == DATA

    # suspend: the memory saved, the domain stopped, the volume stays
    before = _uptime(probe, dom)
    _act(nova, server, "suspend", "SUSPENDED")
    assert _domstate(dom) == "shut off"
    assert _managed_save(dom) == "yes"
    _volume_unchanged(stack, server, vid, attachment_id, dev)
    resp = nova.req("POST", "/servers/%s/action" % server,
                    json={"unpause": None})
    assert resp.status_code == 409, resp.text
    _act(nova, server, "resume", "ACTIVE")
    assert _domstate(dom) == "running"
    assert _managed_save(dom) == "no"
    assert _uptime(probe, dom) >= before     # restored, not booted again
    _volume_unchanged(stack, server, vid, attachment_id, dev)
    assert probe.guest_dev_for(dom, vid) == guest_dev
    assert probe.read_block(dom, guest_dev, len(DATA)) == DATA

    actions = [a["action"] for a in nova.actions(server)]
    assert actions[:5] == ["resume", "suspend", "unpause", "pause",
                           "attach_volume"]

    resp = nova.detach(server, vid)
    assert resp.status_code == 202, resp.text
    cinder.wait_status(vid, "available")


def test_suspended_server_is_deleted_with_its_save_image(stack, volumes):
    """A suspended server's delete removes the domain and its managed
    save image (libvirt refuses to undefine it otherwise), and frees its
    volume."""
    nova, cinder, probe = stack["nova"], stack["cinder"], stack["probe"]
    with private_stack.servers(nova, stack["image"]["id"],
                               "ps%s-del" % stack["run"], 1) as ids:
        server = ids[0]
        dom = probe.domain_name(server)
        vid = volumes("suspended")
        assert nova.attach(server, vid).status_code == 200
        cinder.wait_status(vid, "in-use")
        _act(nova, server, "suspend", "SUSPENDED")
        assert _managed_save(dom) == "yes"
        nova.delete_server(server)
        nova.wait_server(server, "DELETED", timeout=120)
        cinder.wait_status(vid, "available")
        assert dom not in _virsh("list", "--all", "--name").split()
