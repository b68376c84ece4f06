"""The libvirt driver's resize steps (``virt/libvirt/migrate_disk.py``)
on real directories, with the domain, spawn and qemu-img stubbed: where
the disk goes at each step, and what is left after each outcome."""

import json
import os

import pytest

from minicompute import exception
from minicompute.virt.libvirt import migrate_disk
from ministack import executor

GiB = 1024 ** 3


class _Guest:
    def __init__(self, calls):
        self.calls = calls

    def poweroff(self):
        self.calls.append("poweroff")


class _Host:
    def __init__(self, calls, exists=True):
        self.calls, self.exists = calls, exists

    def get_guest(self, name):
        if not self.exists:
            raise exception.InstanceNotFound(instance_id=name)
        return _Guest(self.calls)


class _Driver(migrate_disk.MigrateDiskMixin):
    """The mixin on directories of ``root`` (one per host)."""

    def __init__(self, root, calls):
        self.root = str(root)
        self.calls = calls
        self.host = _Host(calls)
        self.spawned = []
        self.fail_destroy = None

    def _instance_dir(self, instance):
        return os.path.join(self.root, instance["uuid"])

    def destroy(self, ctxt, instance, block_device_info=None):
        self.calls.append(("destroy", block_device_info))
        if self.fail_destroy:
            raise self.fail_destroy

    def spawn(self, ctxt, instance, image, flavor, block_device_info=None):
        kind = image.get("image_type")
        data = open(image["disk"], "rb").read() if kind else None
        self.spawned.append((kind, data, flavor["memory_mb"],
                             block_device_info))


INSTANCE = {"uuid": "9b7c1f0e-1d2b-4c3a-8e5f-0a1b2c3d4e5f",
            "name": "instance-00000001"}
IMAGE = {"id": "img", "kernel": "/k", "initrd": "/i", "cmdline": "c",
         "disk": "/base.qcow2"}


@pytest.fixture
def sizes(monkeypatch):
    """qemu-img stubbed: ``info`` answers the size recorded per path,
    ``resize`` records the new one."""
    known = {}

    def fake_execute(*argv, **kwargs):
        if argv[:2] == ("qemu-img", "info"):
            return json.dumps({"virtual-size": known.get(argv[-1],
                                                         64 << 20)}), ""
        if argv[:2] == ("qemu-img", "resize"):
            known[argv[-2]] = int(argv[-1])
            return "", ""
        raise AssertionError(argv)
    monkeypatch.setattr(executor, "execute", fake_execute)
    return known


def _source(tmp_path, calls):
    src = _Driver(tmp_path / "h1", calls)
    inst_dir = src._instance_dir(INSTANCE)
    os.makedirs(inst_dir)
    with open(os.path.join(inst_dir, "disk"), "wb") as disk:
        disk.write(b"the guest's data")
    return src


def test_move_to_another_host_then_confirm(tmp_path, sizes):
    calls = []
    src = _source(tmp_path, calls)
    dest = _Driver(tmp_path / "h2", calls)
    info = src.migrate_disk_and_power_off(None, INSTANCE, {"root_gb": 1},
                                          block_device_info=["v"])
    assert calls[:2] == ["poweroff", ("destroy", ["v"])]
    kept = info["disk_dir"]
    assert kept.endswith("_resize") and os.path.isfile(
        os.path.join(kept, "disk"))
    assert not os.path.exists(src._instance_dir(INSTANCE))
    dest.finish_migration(None, INSTANCE, info, IMAGE,
                          {"memory_mb": 192, "root_gb": 1},
                          block_device_info=["v"])
    [(kind, data, memory, volumes)] = dest.spawned
    assert (kind, data, memory, volumes) == ("snapshot", b"the guest's data",
                                             192, ["v"])
    assert list(sizes.values()) == [GiB]   # grown to root_gb
    assert os.listdir(dest._instance_dir(INSTANCE)) == []  # staged copy gone
    src.confirm_migration(None, INSTANCE)
    assert not os.path.exists(kept)


def test_revert_boots_the_kept_disk_and_removes_it(tmp_path, sizes):
    calls = []
    src = _source(tmp_path, calls)
    info = src.migrate_disk_and_power_off(None, INSTANCE, {"root_gb": 1})
    src.finish_revert_migration(None, INSTANCE, IMAGE, {"memory_mb": 128},
                                block_device_info=[], power_on=False)
    [(kind, data, memory, _)] = src.spawned
    assert (kind, data, memory) == ("snapshot", b"the guest's data", 128)
    assert calls[-1] == "poweroff"   # it was stopped
    assert not os.path.exists(info["disk_dir"])


def test_a_failed_hand_over_puts_the_directory_back(tmp_path, sizes):
    calls = []
    src = _source(tmp_path, calls)
    src.fail_destroy = exception.InternalError(err="libvirt said no")
    with pytest.raises(exception.InternalError):
        src.migrate_disk_and_power_off(None, INSTANCE, {"root_gb": 1})
    assert os.path.isfile(os.path.join(src._instance_dir(INSTANCE), "disk"))
    assert not os.path.exists(src._resize_dir(INSTANCE))


def test_a_volume_backed_guest_moves_no_disk(tmp_path, sizes):
    calls = []
    src = _Driver(tmp_path / "h1", calls)
    dest = _Driver(tmp_path / "h2", calls)
    info = src.migrate_disk_and_power_off(None, INSTANCE, {"root_gb": 0})
    dest.finish_migration(None, INSTANCE, info, IMAGE, {"memory_mb": 192})
    [(kind, data, memory, _)] = dest.spawned
    assert (kind, data, memory) == (None, None, 192)
    assert sizes == {}
