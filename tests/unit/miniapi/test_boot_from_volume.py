"""Boot from volume at the API: block_device_mapping_v2 at server create.

The mappings are checked as upstream checks them (every refusal a 400
with upstream's message, and nothing left behind: no server, no BDM, no
reservation); the volumes the user brought are reserved (attachment with
no connector) before the build is cast, and the BDM rows are written.
"""

import pytest

from minicompute.db import api as db_api
from ministack import context
from tests.unit.miniapi.inprocess import IMAGE_ID

INVALID = "Block Device Mapping is Invalid"


def _bootable(volumes, **kw):
    vid = volumes.add_volume(**kw)
    volumes.set_volume_fields(vid, bootable="true",
                              volume_image_metadata={"image_id": IMAGE_ID})
    return vid


def _create(api, mappings, version="2.96", **server):
    body = {"server": dict({"name": "bfv", "flavorRef": "42",
                            "networks": "none",
                            "block_device_mapping_v2": mappings},
                           **server)}
    return api.post("/v2.1/servers", body, version=version)


def _vol(uuid, boot_index=0, **kw):
    return dict({"uuid": uuid, "source_type": "volume",
                 "destination_type": "volume", "boot_index": boot_index},
                **kw)


def _bdms(server_id):
    return db_api.bdm_get_all_by_instance(context.get_admin_context(),
                                          server_id)


def _no_server_left():
    return db_api.instance_get_all(context.get_admin_context(),
                                   {"all_tenants": True}) == []


def test_boot_from_existing_volume(api, compute, volumes):
    vid = _bootable(volumes)
    status, body, _ = _create(api, [_vol(vid, delete_on_termination=True)],
                              imageRef="")
    assert status == 202, body
    server_id = body["server"]["id"]
    # Reserved before the cast: an attachment with no connector.
    assert volumes.status(vid) == "reserved"
    [bdm] = _bdms(server_id)
    assert (bdm.volume_id, bdm.boot_index, bdm.device_name,
            bdm.source_type, bdm.delete_on_termination) == \
        (vid, 0, "/dev/vda", "volume", True)
    assert bdm.attachment_id in volumes.attachment_ids(vid)
    assert bdm.connection_info is None
    cast = compute.wait_for_cast("build_and_run_instance", server_id)
    # The kernel comes from the image the volume was made from.
    assert cast["image"]["id"] == IMAGE_ID
    _, show, _ = api.get("/v2.1/servers/" + server_id, version="2.3")
    assert show["server"]["image"] == ""
    assert show["server"]["os-extended-volumes:volumes_attached"] == [
        {"id": vid, "delete_on_termination": True}]
    _, show, _ = api.get("/v2.1/servers/" + server_id, version="2.1")
    assert show["server"]["os-extended-volumes:volumes_attached"] == [
        {"id": vid}]


def test_boot_from_volume_without_image_ref_key(api, compute, volumes):
    status, body, _ = _create(api, [_vol(_bootable(volumes))])
    assert status == 202, body


@pytest.mark.parametrize("source", ["image", "blank"])
def test_volume_the_host_creates(api, compute, volumes, source):
    """image -> volume (the root) and blank -> volume (a data disk): the
    host creates them, so the BDM has no volume yet."""
    mappings = [{"uuid": IMAGE_ID, "source_type": "image",
                 "destination_type": "volume", "boot_index": "0",
                 "volume_size": "1"}]
    extra = {"imageRef": ""}
    if source == "blank":
        mappings = [{"uuid": IMAGE_ID, "source_type": "image",
                     "destination_type": "local", "boot_index": 0},
                    {"source_type": "blank", "destination_type": "volume",
                     "volume_size": 2, "boot_index": -1}]
        extra = {"imageRef": IMAGE_ID}
    status, body, _ = _create(api, mappings, **extra)
    assert status == 202, body
    [bdm] = _bdms(body["server"]["id"])
    assert bdm.source_type == source
    assert bdm.volume_id is None and bdm.attachment_id is None
    if source == "image":
        assert (bdm.image_id, bdm.volume_size, bdm.device_name,
                bdm.boot_index) == (IMAGE_ID, 1, "/dev/vda", 0)
    else:
        assert (bdm.volume_size, bdm.device_name, bdm.boot_index) == \
            (2, "/dev/vdb", None)
    assert volumes.calls == []   # nothing asked of Cinder at the API
    _, show, _ = api.get("/v2.1/servers/" + body["server"]["id"])
    assert (show["server"]["image"] == "") is (source == "image")


def test_several_mappings(api, compute, volumes):
    root, data = _bootable(volumes), volumes.add_volume()
    status, body, _ = _create(api, [
        _vol(root), _vol(data, boot_index=None, disk_bus="virtio"),
        {"source_type": "blank", "destination_type": "volume",
         "volume_size": 1}])
    assert status == 202, body
    bdms = sorted(_bdms(body["server"]["id"]), key=lambda b: b.device_name)
    assert [(b.device_name, b.volume_id) for b in bdms] == [
        ("/dev/vda", root), ("/dev/vdb", data), ("/dev/vdc", None)]
    assert volumes.status(root) == volumes.status(data) == "reserved"


@pytest.mark.parametrize("mapping, message", [
    ({"source_type": "image", "destination_type": "volume",
      "uuid": IMAGE_ID, "boot_index": 0},
     "Images with destination_type 'volume' need to have a non-zero size "
     "specified"),
    ({"source_type": "blank", "destination_type": "volume",
      "boot_index": 0},
     "Blank volumes (source: 'blank', dest: 'volume') need to have "
     "non-zero size"),
    ({"source_type": "blank", "destination_type": "volume",
      "uuid": IMAGE_ID, "volume_size": 1, "boot_index": 0},
     "Invalid device UUID."),
    ({"source_type": "volume", "destination_type": "volume",
      "boot_index": 0}, "Missing device UUID."),
    ({"destination_type": "volume", "uuid": IMAGE_ID, "boot_index": 0},
     "Some required fields are missing"),
    ({"source_type": "image", "destination_type": "local",
      "uuid": IMAGE_ID, "boot_index": 0},
     "Mapping image to local is not supported."),
    ({"source_type": "image", "destination_type": "volume",
      "uuid": IMAGE_ID, "volume_size": 1, "boot_index": "x"},
     "Boot index is invalid."),
    ({"source_type": "image", "destination_type": "volume",
      "uuid": IMAGE_ID, "volume_size": "-1", "boot_index": 0},
     "Invalid volume_size."),
    ({"source_type": "image", "destination_type": "volume",
      "uuid": IMAGE_ID, "volume_size": 1, "boot_index": 0,
      "disk_bus": "floppy-ish"}, INVALID + "."),
    ({"source_type": "image", "destination_type": "volume",
      "uuid": IMAGE_ID, "volume_size": 1, "boot_index": 1},
     "Boot sequence for the instance and image/block device mapping "
     "combination is not valid."),
    ({"source_type": "image", "destination_type": "volume",
      "uuid": "no-such-image", "volume_size": 1, "boot_index": 0},
     INVALID + ": failed to get image no-such-image."),
])
def test_invalid_mapping(api, compute, volumes, mapping, message):
    status, body, _ = _create(api, [mapping], imageRef="")
    assert status == 400, body
    assert message in body["badRequest"]["message"], body
    assert _no_server_left()


def test_boot_sequence_duplicates_and_gaps(api, compute, volumes):
    one, two = _bootable(volumes), _bootable(volumes)
    for indexes in ((0, 0), (0, 2), (None, None)):
        status, body, _ = _create(api, [_vol(one, boot_index=indexes[0]),
                                        _vol(two, boot_index=indexes[1])])
        assert status == 400, (indexes, body)
        assert "Boot sequence" in body["badRequest"]["message"]
    assert volumes.status(one) == volumes.status(two) == "available"
    assert _no_server_left()


def test_not_bootable_volume(api, compute, volumes):
    vid = volumes.add_volume()
    volumes.set_volume_fields(vid, bootable="false")
    status, body, _ = _create(api, [_vol(vid)])
    assert status == 400
    assert body["badRequest"]["message"] == \
        "Block Device %s is not bootable." % vid
    assert volumes.status(vid) == "available"
    assert _no_server_left()


def test_unknown_volume(api, compute, volumes):
    status, body, _ = _create(api, [
        _vol(_bootable(volumes)),
        _vol("0b4c1c43-9a63-4e0a-a8e5-5b5a0f0f2b0e", boot_index=None)])
    assert status == 400
    assert body["badRequest"]["message"] == \
        "Volume 0b4c1c43-9a63-4e0a-a8e5-5b5a0f0f2b0e could not be found."
    assert _no_server_left()


def test_volume_in_use_refused_and_nothing_left(api, compute, volumes):
    """The second volume is in use: 400 from Cinder's reservation, and the
    first volume's reservation is undone."""
    root, busy = _bootable(volumes), volumes.add_volume(status="in-use")
    status, body, _ = _create(api, [_vol(root),
                                    _vol(busy, boot_index=None)])
    assert status == 400, body
    assert body["badRequest"]["message"].startswith("Invalid volume:")
    assert volumes.status(root) == "available"
    assert volumes.attachment_ids(root) == []
    assert _no_server_left()
    assert db_api.bdm_get_all_volumes(context.get_admin_context()) == []


def test_multiattach_needs_2_60(api, compute, volumes):
    vid = _bootable(volumes, multiattach=True)
    status, body, _ = _create(api, [_vol(vid)], version="2.59")
    assert status == 400
    assert "2.60" in body["badRequest"]["message"]
    status, body, _ = _create(api, [_vol(vid)], version="2.60")
    assert status == 202, body


def test_unsupported_sources(api, compute, volumes):
    status, body, _ = _create(api, [
        {"source_type": "snapshot", "destination_type": "volume",
         "uuid": "abc", "boot_index": 0}])
    assert status == 400
    assert body["badRequest"]["message"] == \
        "Snapshot abc could not be found."
    status, body, _ = _create(api, [
        {"source_type": "image", "destination_type": "local",
         "uuid": IMAGE_ID, "boot_index": 0},
        {"source_type": "blank", "destination_type": "local",
         "volume_size": 1}], imageRef=IMAGE_ID)
    assert status == 400
    assert "not supported" in body["badRequest"]["message"]


def test_failed_cast_releases_the_volumes(app, api, compute, volumes,
                                          monkeypatch):
    vid = _bootable(volumes)
    rpcapi = app.config["COMPUTE_API"].compute_rpcapi

    def broken(*args, **kwargs):
        raise RuntimeError("the broker is gone")
    monkeypatch.setattr(rpcapi, "build_and_run_instance", broken)
    status, body, _ = _create(api, [_vol(vid)])
    assert status >= 500, body
    assert volumes.status(vid) == "available"
    assert db_api.bdm_get_all_volumes(context.get_admin_context()) == []


def test_no_valid_host_keeps_the_reservation_for_delete(
        api, compute, volumes, admin_ctxt):
    """As upstream: a server that found no host is ERROR and holds its
    volume until it is deleted (the local delete releases it)."""
    svc = db_api.service_get_all(admin_ctxt)[0]
    db_api.service_update(admin_ctxt, svc.uuid, {"disabled": True})
    vid = _bootable(volumes)
    status, body, _ = _create(api, [_vol(vid)])
    assert status == 202
    assert volumes.status(vid) == "reserved"
    status, _, _ = api.delete("/v2.1/servers/" + body["server"]["id"])
    assert status == 204
    assert volumes.status(vid) == "available"


def test_blank_root_volume_boots_the_kernel_of_image_ref(api, compute,
                                                         volumes):
    blank = {"source_type": "blank", "destination_type": "volume",
             "volume_size": 1, "boot_index": 0}
    status, body, _ = _create(api, [blank])
    assert status == 400
    assert body["badRequest"]["message"] == INVALID + \
        ": failed to get image ."
    status, body, _ = _create(api, [blank], imageRef=IMAGE_ID)
    assert status == 202, body
    cast = compute.wait_for_cast("build_and_run_instance",
                                 body["server"]["id"])
    assert cast["image"]["id"] == IMAGE_ID


def test_fuzz_corpus_mappings_are_each_a_400(api, compute, volumes):
    """The fuzz tier's hostile mappings, in-process: 400, nothing made."""
    import json

    from tests.fuzz import corpus
    from tests.fuzz import strategies as fz

    def encode(value):
        return str(value) if isinstance(value, fz.Raw) else json.dumps(value)

    for mapping in corpus._ODD_MAPPINGS:
        fields = ", ".join("%s: %s" % (json.dumps(k), encode(v))
                           for k, v in mapping.items())
        raw = ('{"server": {"name": "f", "flavorRef": "42", "imageRef": "",'
               ' "networks": "none", "block_device_mapping_v2": [{%s}]}}'
               % fields)
        status, body, _ = api.post("/v2.1/servers", raw=raw,
                                   version="2.96")
        assert status == 400, (mapping, body)
    assert set(volumes.calls) <= {"get"}   # the unknown volume's lookup
    assert _no_server_left()
