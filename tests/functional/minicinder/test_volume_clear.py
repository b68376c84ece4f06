"""Zeroing a deleted volume on real LVM over a sparse loop file: the
volume reads back as zeroes afterwards and the backing file gives its
space back (``blkdiscard -z`` used to allocate the whole volume on the
host disk; 200 deleted volumes once filled it)."""

import os
import uuid

import pytest

from minicinder.volume.drivers import lvm
from tests.support.minicinder_daemon import NO_DM
from tests.support.minicinder_daemon import run

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root for LVM and loops")

MiB = 1024 * 1024


@pytest.fixture
def private_vg(tmp_path):
    """A VG of its own on a sparse file (the lab's has other volumes)."""
    name = "ms-clear-%s" % uuid.uuid4().hex[:8]
    image = tmp_path / "pv.img"
    run("truncate", "-s", "2G", str(image))
    loop = run("losetup", "--show", "-f", str(image))[0].strip()
    vg = None
    try:
        run("pvcreate", *NO_DM, loop)
        run("vgcreate", *NO_DM, name, loop)
        vg = lvm.LVM(name)
        yield vg, image
    finally:
        if vg is not None:
            for lv in ("volume-clear",):
                vg.delete_volume(lv)
        run("vgremove", *NO_DM, "-f", name, check=False)
        run("pvremove", *NO_DM, "-f", loop, check=False)
        run("losetup", "-d", loop, check=False)


def _allocated(path):
    return os.stat(path).st_blocks * 512


def test_cleared_volume_reads_zero_and_frees_the_backing_file(private_vg):
    vg, image = private_vg
    vg.create_volume("volume-clear", 1)
    path = vg.get_device_path("volume-clear")
    size = 64 * MiB
    with open(path, "r+b", buffering=0) as dev:
        for _ in range(size // MiB):
            dev.write(os.urandom(MiB))
        os.fsync(dev.fileno())
    os.sync()
    written = _allocated(image)
    assert written >= size

    vg.clear_volume("volume-clear")
    os.sync()

    with open(path, "rb") as dev:
        zero = bytes(MiB)
        for _ in range(vg.extent_range("volume-clear")[2] // MiB):
            assert dev.read(MiB) == zero
    # Not one more block than before; the written ones given back.
    assert _allocated(image) < written - size // 2
