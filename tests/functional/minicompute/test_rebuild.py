"""Rebuild with volumes on live guests, end to end and for real.

A second registered image (the lab's guest image under another id and
name, in this private stack's image directory: tempest's
``image_ref_alt``) is what the servers are rebuilt with, so a rebuild
visibly changes the image.

* An image-backed server with a volume attached: after the rebuild it is
  ACTIVE on the new image, the volume is in-use with one attachment (a
  new one), the bytes written to it before are still there, and the
  respawned guest sees it with its serial.
* A volume-backed server: at 2.92 a different image is a 400 and nothing
  changes; at 2.93 its root volume (same id) is re-imaged by Cinder
  (``os-reimage``; its image metadata names the new image, what was
  written on it is gone), the host waits for ``volume-reimaged`` and the
  guest boots again from it.

Every test deletes what it made.
"""

import json
import os
import shutil
import uuid

import pytest

from tests.support import daemons
from tests.support import journey
from tests.support import private_stack
from tests.support import waiting

pytestmark = pytest.mark.slow

VG = private_stack.VG
MARK = b"ministack-rebuild-" + uuid.uuid4().hex.encode()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """The conftest's stack, but minicinder tells this miniapi of its
    events (``[nova] endpoint``: the volume-reimaged a volume-backed
    rebuild waits for) and miniapi lists this stack's images (the lab's,
    linked, and the alt image)."""
    private_stack.skip_unless_lab()
    ps = private_stack.PrivateStack(tmp_path_factory.mktemp("rebuild"),
                                    "fr")
    api_port = daemons.free_port()
    try:
        cinder = ps.start_cinder({"nova": {
            "endpoint": "http://127.0.0.1:%d/v2.1" % api_port}})
        endpoint = ps.endpoint(cinder)
        api = ps.start_api(cinder, {"api": {
            "listen_port": api_port,
            "image_dir": str(ps.state / "images")}})
        ps.start_compute(endpoint)
        probe = journey.Probe(ps.nova_db, ps.name_template)
        yield {"cinder": journey.Cinder(cinder.url),
               "nova": journey.Nova(api.url), "probe": probe,
               "image": ps.image, "run": ps.run, "state": ps.state}
        probe.close()
    finally:
        ps.cleanup()


@pytest.fixture(scope="module")
def alt_image(stack):
    """The guest image registered again under a new id and name."""
    image = dict(stack["image"], id=str(uuid.uuid4()),
                 name="%s-alt-%s" % (stack["image"]["name"], stack["run"]))
    for key in ("disk", "kernel", "initrd"):
        image[key] = os.path.realpath(image[key])
    path = stack["state"] / "images" / image["id"]
    path.mkdir()
    (path / "image.json").write_text(json.dumps(image))
    yield image
    shutil.rmtree(path, ignore_errors=True)


def _nova(stack, version):
    return journey.Nova(stack["nova"].base[:-len("/v2.1")], version=version)


def _rebuild(nova, sid, image_id):
    return nova.req("POST", "/servers/%s/action" % sid,
                    json={"rebuild": {"imageRef": image_id}})


def _wait_rebuilt(stack, sid):
    nova = stack["nova"]
    waiting.wait_for("server %s rebuilt" % sid,
                     lambda: nova.show_server(sid),
                     lambda s: s["status"] == "ACTIVE" or
                     s["status"] == "ERROR", timeout=300)
    server = nova.show_server(sid)
    assert server["status"] == "ACTIVE", server.get("fault")
    return server


def _delete(stack, sid):
    nova = stack["nova"]
    nova.delete_server(sid)
    waiting.wait_for("server %s deleted" % sid,
                     lambda: nova.show_server(sid) is None, timeout=180)


def _guest_dev(stack, sid, volume_id):
    probe = stack["probe"]
    dom = probe.domain_name(sid)
    return waiting.wait_for(
        "volume %s in the guest" % volume_id,
        lambda: probe.guest_dev_for(dom, volume_id),
        lambda dev: dev is not None, timeout=60)


def test_rebuild_image_backed_server_with_volume(stack, volumes,
                                                 alt_image):
    nova, cinder, probe = stack["nova"], stack["cinder"], stack["probe"]
    vid = volumes("rebuild-data")
    sid = nova.create_server(journey.unique("rebuild"),
                             stack["image"]["id"],
                             private_stack.smallest_flavor(nova))
    try:
        nova.attach(sid, vid)
        cinder.wait_status(vid, "in-use")
        [before] = cinder.attachments(vid)
        dev = _guest_dev(stack, sid, vid)
        probe.write_block(probe.domain_name(sid), dev, MARK)

        resp = _rebuild(_nova(stack, "2.93"), sid, alt_image["id"])
        assert resp.status_code == 202, resp.text
        body = resp.json()["server"]
        assert body["status"] == "REBUILD" and body["adminPass"]
        server = _wait_rebuilt(stack, sid)
        assert server["image"]["id"] == alt_image["id"]
        assert [v["id"] for v in
                server["os-extended-volumes:volumes_attached"]] == [vid]

        assert cinder.status(vid) == "in-use"
        [after] = cinder.attachments(vid)
        assert after["id"] != before["id"]
        assert after["status"] == "attached"
        bdm = probe.bdm(sid, vid)
        assert bdm["attachment_id"] == after["id"]
        assert bdm["connection_info"]
        dom = probe.domain_name(sid)
        assert "iqn" in probe.domblklist(dom)[bdm["device_name"][5:]]
        dev = _guest_dev(stack, sid, vid)
        assert probe.read_block(dom, dev, len(MARK)) == MARK
        actions = [a["action"] for a in nova.actions(sid)]
        assert "rebuild" in actions
    finally:
        _delete(stack, sid)
    cinder.wait_status(vid, "available", timeout=120)
    assert cinder.attachments(vid) == []


def test_rebuild_volume_backed_server(stack, alt_image):
    nova, cinder, probe = stack["nova"], stack["cinder"], stack["probe"]
    journey.wait_for_vg_space(VG, 1)
    resp = nova.req("POST", "/servers", json={"server": {
        "name": journey.unique("rebuild-bfv"), "networks": "none",
        "flavorRef": private_stack.smallest_flavor(nova), "imageRef": "",
        "block_device_mapping_v2": [{
            "uuid": stack["image"]["id"], "source_type": "image",
            "destination_type": "volume", "boot_index": 0,
            "volume_size": 1, "delete_on_termination": True}]}})
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    vid = None
    try:
        nova.wait_server(sid, "ACTIVE", timeout=300)
        [vid] = [v["id"] for v in
                 nova.show_server(sid)["os-extended-volumes:volumes_attached"]]
        [before] = cinder.attachments(vid)
        dom = probe.domain_name(sid)
        probe.write_block(dom, "vda", MARK)

        # Below 2.93 a volume-backed server keeps its image.
        resp = _rebuild(_nova(stack, "2.92"), sid, alt_image["id"])
        assert resp.status_code == 400, resp.text
        assert "Unable to rebuild with a different image for a " \
            "volume-backed server" in resp.json()["badRequest"]["message"]
        server = nova.show_server(sid)
        assert (server["status"], server["OS-EXT-STS:task_state"]) == \
            ("ACTIVE", None)
        assert [a["id"] for a in cinder.attachments(vid)] == [before["id"]]

        resp = _rebuild(_nova(stack, "2.93"), sid, alt_image["id"])
        assert resp.status_code == 202, resp.text
        server = _wait_rebuilt(stack, sid)
        assert server["image"] == ""
        assert [v["id"] for v in
                server["os-extended-volumes:volumes_attached"]] == [vid]
        volume = cinder.show(vid)
        assert volume["status"] == "in-use"
        assert volume["volume_image_metadata"]["image_id"] == \
            alt_image["id"]
        [after] = cinder.attachments(vid)
        assert after["id"] != before["id"]
        dom = probe.domain_name(sid)
        assert "iqn" in probe.domblklist(dom)["vda"]
        assert probe.guest_dev_for(dom, vid) == "vda"
        assert probe.read_block(dom, "vda", len(MARK)) != MARK
    finally:
        _delete(stack, sid)
    if vid:
        cinder.wait_status(vid, "deleted", timeout=120)
