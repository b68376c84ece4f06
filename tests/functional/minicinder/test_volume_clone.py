"""A clone on real LVM (``source_volid``): the new LV holds the source's
bytes, a larger clone reads zeroes past them, and a delete of the source
waits for nothing of the clone's (they are separate LVs)."""

import os

from minicinder.volume.drivers import lvm
from tests.support.minicinder_daemon import force_cleanup
from tests.support.minicinder_daemon import lv_names

MiB = 1024 * 1024


def _lv(volume_id):
    return "volume-%s" % volume_id


def _write(path, data, offset=0):
    with open(path, "r+b", buffering=0) as dev:
        dev.seek(offset)
        dev.write(data)
        os.fsync(dev.fileno())


def _read(path, size, offset=0):
    with open(path, "rb") as dev:
        dev.seek(offset)
        return dev.read(size)


def test_a_clone_holds_the_sources_data(raw, make_volume, volume_group):
    vg = lvm.LVM(volume_group)
    source = make_volume(size=1)
    head, tail = os.urandom(MiB), os.urandom(MiB)
    source_path = vg.get_device_path(_lv(source))
    _write(source_path, head)
    _write(source_path, tail, offset=1024 * MiB - MiB)   # the last MiB

    clones = []
    try:
        for size in (None, 2):
            body = {"volume": {"source_volid": source, "name": "clone"}}
            if size:
                body["volume"]["size"] = size
            resp = raw("POST", "/volumes", body)
            assert resp.status_code == 202, resp.text
            clone = resp.json()["volume"]["id"]
            clones.append(clone)
            shown = raw.wait_status(clone, "available")
            assert shown["source_volid"] == source
            assert shown["size"] == (size or 1)
            path = vg.get_device_path(_lv(clone))
            assert _read(path, MiB) == head
            assert _read(path, MiB, offset=1024 * MiB - MiB) == tail
            if size == 2:
                # Past the source's gigabyte: zeroes, whatever the
                # extents held before.
                assert _read(path, MiB, offset=1024 * MiB) == bytes(MiB)
                assert _read(path, MiB, offset=2048 * MiB - MiB) == \
                    bytes(MiB)
        # The source is untouched and still deletable on its own.
        assert raw("GET", "/volumes/%s" % source).json()["volume"][
            "status"] == "available"
        assert _read(source_path, MiB) == head
    finally:
        for clone in clones:
            force_cleanup(raw, clone)
    assert not {_lv(c) for c in clones} & set(lv_names(volume_group))
